"""Every validation rule of every wire, one bad request each (issue 16): the mock answers
with the provider's real status and whole error body, logs the request with the rule it
broke, takes nothing from the queue, and ``strict=False`` serves the same request.

``test_every_rule_has_a_case`` keeps this table complete: a rule added to a
wire's ``validate.py`` module without a case here fails it. Where each message comes from
is cited on the rule itself (its docstring).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from zerda.testing import MockLLMServer
from zerda.testing._validate import load_validator
from zerda.testing.wires.anthropic import hosted_rules as _anthropic_tools

KEYS = {"authorization": "Bearer k", "x-api-key": "k", "x-goog-api-key": "k"}
KEYS["anthropic-version"] = "2023-06-01"  # every Anthropic SDK sends it (versioning page)
USER = {"role": "user", "content": "hi"}
OPENAI = "/openai/v1/chat/completions"
GROQ = "/groq/openai/v1/chat/completions"
MISTRAL = "/mistral/v1/chat/completions"
OLLAMA = "/ollama/api/chat"
OLLAMA_V1 = "/ollama/v1/chat/completions"
ANTHROPIC = "/anthropic/v1/messages"
BEDROCK = "/bedrock/model/anthropic.claude-3-5-sonnet/converse"
NOVA = "/bedrock/model/amazon.nova-micro-v1:0/converse"
BEDROCK_SONNET_4 = "/bedrock/model/us.anthropic.claude-sonnet-4-20250514-v1:0/converse"
GEMINI = "/gemini/v1beta/models/gemini-2.5-flash:generateContent"
GEMINI_3 = "/gemini/v1beta/models/gemini-3-flash-preview:generateContent"
# The counting endpoints (tests/testing/test_count_endpoints.py has the others' cases).
ANTHROPIC_COUNT = "/anthropic/v1/messages/count_tokens"
BEDROCK_COUNT = "/bedrock/model/anthropic.claude-3-5-sonnet/count-tokens"
GEMINI_COUNT = "/gemini/v1beta/models/gemini-2.5-flash:countTokens"

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode()
BIG = "A" * (5 * 1024 * 1024 * 4 // 3 + 8)  # base64 of just over 5 MB
BEDROCK_BIG = "A" * (3_750_000 * 4 // 3 + 8)  # base64 of just over 3.75 MB
CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
MISTRAL_CALL = {"id": "abcdefghi", "function": {"name": "f", "arguments": "{}"}}
B_USER = {"role": "user", "content": [{"text": "hi"}]}
B_TOOLS = {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]}
G_USER = {"role": "user", "parts": [{"text": "hi"}]}
G_CALL = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
G_ANSWER = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}


def _oa(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }


def _groq(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _mistral(message: Any, kind: str, code: str | None) -> dict[str, Any]:
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


def _mistral_missing(field: str, body: dict[str, Any]) -> dict[str, Any]:
    detail = [{"type": "missing", "loc": ["body", field], "msg": "Field required", "input": body}]
    return {"detail": detail}


def _anthropic(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": kind, "message": message}


def _google(message: str, code: int = 400, status: str = "INVALID_ARGUMENT") -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def _b_use(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": "f", "input": {}}} for i in ids],
    }


def _b_results(*ids: str) -> dict[str, Any]:
    blocks = [{"toolResult": {"toolUseId": i, "content": [{"text": "ok"}]}} for i in ids]
    return {"role": "user", "content": blocks}


def _b_image(fmt: str, data: str = PNG) -> dict[str, Any]:
    return {"role": "user", "content": [{"image": {"format": fmt, "source": {"bytes": data}}}]}


def _a_image(media_type: str, data: str = PNG) -> dict[str, Any]:
    source = {"type": "base64", "media_type": media_type, "data": data}
    return {"role": "user", "content": [{"type": "image", "source": source}]}


# The tool types api.anthropic.com takes, as its answer lists them (a request naming no
# beta is given those taken with one).
ANTHROPIC_TOOL_TAGS = ", ".join(
    f"'{t}'"
    for t in sorted(
        _anthropic_tools.CLIENT_TOOLS
        | _anthropic_tools.API_SERVER_TOOLS
        | set(_anthropic_tools.API_BETA_TOOLS)
    )
)


def _a(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude", "max_tokens": 10, "messages": messages, **extra}


def _a_use(*ids: str) -> dict[str, Any]:
    uses = [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in ids]
    return {"role": "assistant", "content": uses}


def _oa_tool(parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": parameters, **extra}}


def _google_violation(message: str, field: str) -> dict[str, Any]:
    violation = {"field": field, "description": message}
    details = [
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}
    ]
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
                      "details": details}}  # fmt: skip


NO_KEY_OPENAI = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header "
    "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with "
    "blank username) if you're accessing the API from your browser and are prompted for a "
    "username and password. You can obtain an API key from "
    "https://platform.openai.com/account/api-keys."
)
NOT_JSON_OPENAI = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
    "us through our help center at help.openai.com.)"
)
NO_TOOL_CALLS = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1"
)
BAD_NAME = (
    "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that "
    "matches the pattern '^[a-zA-Z0-9_-]+$'."
)
LONG_NAME = (
    "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length "
    "64, but got a string with length 65 instead."
)
ROLES = (
    "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', "
    "'tool', and 'developer'."
)
EMPTY = (
    "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
    "empty array instead."
)
AUDIO_IN_ASSISTANT = "Invalid value: 'input_audio'. Supported values are: 'text', 'refusal'."
BAD_IMAGE = (
    "You uploaded an unsupported image. Please make sure your image has of one the following "
    "formats: ['png', 'jpeg', 'gif', 'webp']."
)
GEMINI_NAME = (
    "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name. "
    "Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores "
    "(_), dots (.), colons (:) or dashes (-), with a maximum length of 128.\n"
)
GEMINI_UNSIGNED = (
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:f` , position 2. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
GEMINI_ADDITIONAL = (
    'Invalid JSON payload received. Unknown name "additionalProperties" at '
    "'tools[0].function_declarations[0].parameters': Cannot find field."
)
ANTHROPIC_BAD_SCHEMA = (
    "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 "
    "(https://json-schema.org/draft/2020-12). Learn more about tool use at "
    "https://docs.anthropic.com/en/docs/tool-use."
)
GEMINI_TYPE = (
    "Invalid value at 'tools[0].function_declarations[0].parameters.type' "
    '(type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "objet"'
)
NOT_JSON = b'{"model": "m", "messages": [}'

# (id, path, body (bytes: sent as is), headers (None: every key), status, body, rule)
Case = tuple[str, str, Any, "dict[str, str] | None", int, Any, str]
CASES: list[Case] = [
    # --- OpenAI: POST /v1/chat/completions ---
    ("openai-no-key", OPENAI, {"model": "m", "messages": [USER]}, {}, 401,
     _oa(NO_KEY_OPENAI), "api_key_present"),
    ("openai-not-json", OPENAI, NOT_JSON, None, 400, _oa(NOT_JSON_OPENAI), "json_object_body"),
    ("openai-no-model", OPENAI, {"messages": [USER]}, None, 400,
     _oa("you must provide a model parameter"), "model_present"),
    ("openai-no-messages", OPENAI, {"model": "m"}, None, 400,
     _oa("Missing required parameter: 'messages'.", "messages", "missing_required_parameter"),
     "messages_present"),
    ("openai-empty-messages", OPENAI, {"model": "m", "messages": []}, None, 400,
     _oa(EMPTY, "messages", "empty_array"), "messages_present"),
    ("openai-unknown-role", OPENAI, {"model": "m", "messages": [{"role": "robot"}]}, None, 400,
     _oa(ROLES, "messages[0].role", "invalid_value"), "roles_known"),
    ("openai-tool-without-call", OPENAI,
     {"model": "m", "messages": [USER, {"role": "tool", "tool_call_id": "c", "content": "x"}]},
     None, 400, _oa(NO_TOOL_CALLS, "messages.[1].role"), "tool_messages_answer_calls"),
    ("openai-tool-wrong-id", OPENAI,
     {"model": "m", "messages": [USER, {"role": "assistant", "tool_calls": [CALL]},
                                 {"role": "tool", "tool_call_id": "call_2", "content": "x"}]},
     None, 400,
     _oa("Invalid parameter: 'tool_call_id' of 'call_2' not found in 'tool_calls' of previous "
         "message.", "messages.[2].tool_call_id"), "tool_messages_answer_calls"),
    ("openai-call-unanswered", OPENAI,
     {"model": "m", "messages": [USER, {"role": "assistant", "tool_calls": [CALL]}, USER]},
     None, 400, _oa(UNANSWERED, "messages.[1].role"), "tool_calls_answered"),
    ("openai-bad-tool-name", OPENAI,
     {"model": "m", "messages": [USER], "tools": [{"type": "function", "function": {"name": "a b"}}]},
     None, 400, _oa(BAD_NAME, "tools[0].function.name", "invalid_value"), "tool_names_valid"),
    ("openai-long-tool-name", OPENAI,
     {"model": "m", "messages": [USER],
      "tools": [{"type": "function", "function": {"name": "a" * 65}}]},
     None, 400, _oa(LONG_NAME, "tools[0].function.name", "string_above_max_length"),
     "tool_names_valid"),
    ("openai-audio-in-assistant", OPENAI,
     {"model": "m", "messages": [USER, {"role": "assistant", "content": [
         {"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}]}]},
     None, 400, _oa(AUDIO_IN_ASSISTANT, "messages[1].content[0].type", "invalid_value"),
     "content_parts_valid"),
    ("openai-bmp-image", OPENAI,
     {"model": "m", "messages": [{"role": "user", "content": [
         {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AA=="}}]}]},
     None, 400, _oa(BAD_IMAGE, None, "invalid_image_format"), "image_formats_supported"),
    ("groq-no-key", GROQ, {"model": "m", "messages": [USER]}, {}, 401,
     _groq("Invalid API Key", "invalid_api_key"), "api_key_present"),
    # --- Mistral ---
    ("mistral-no-key", MISTRAL, {"model": "m", "messages": [USER]}, {}, 401,
     {"detail": "Unauthorized"}, "api_key_present"),
    ("mistral-not-json", MISTRAL, NOT_JSON, None, 422,
     {"detail": [{"type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error",
                  "input": {}, "ctx": {"error": "Expecting value"}}]}, "json_object_body"),
    ("mistral-not-an-object", MISTRAL, [USER], None, 422,
     {"detail": [{"type": "model_attributes_type", "loc": ["body"],
                  "msg": "Input should be a valid dictionary or object to extract fields from",
                  "input": [USER]}]}, "json_object_body"),
    ("mistral-no-model", MISTRAL, {"messages": [USER]}, None, 422,
     _mistral_missing("model", {"messages": [USER]}), "model_present"),
    ("mistral-no-messages", MISTRAL, {"model": "m"}, None, 422,
     _mistral_missing("messages", {"model": "m"}), "messages_present"),
    ("mistral-tool-after-user", MISTRAL,
     {"model": "m", "messages": [USER,
                                 {"role": "tool", "tool_call_id": "abcdefghi", "content": "x"}]},
     None, 400, _mistral("Unexpected role 'tool' after role 'user'",
                         "invalid_request_message_order", "3230"), "role_order"),
    ("mistral-ends-on-assistant", MISTRAL,
     {"model": "m", "messages": [USER, {"role": "assistant", "content": "x"}]}, None, 400,
     _mistral("Expected last role User or Tool (or Assistant with prefix True) for serving but "
              "got assistant", "invalid_request_message_order", "3230"), "last_role"),
    ("mistral-id-not-9", MISTRAL,
     {"model": "m", "messages": [USER, {"role": "assistant", "tool_calls": [CALL]},
                                 {"role": "tool", "tool_call_id": "call_1", "content": "x"}]},
     None, 400, _mistral("Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.",
                         "invalid_function_call", "3280"), "call_ids_valid"),
    ("mistral-bad-tool-name", MISTRAL,
     {"model": "m", "messages": [USER], "tools": [{"type": "function", "function": {"name": "a b"}}]},
     None, 400,
     {"object": "error", "message": BAD_NAME, "type": "invalid_request_error",
      "param": "tools[0].function.name", "code": "invalid_value"}, "tool_names_valid"),
    # --- Ollama (no auth: a local server) ---
    ("ollama-empty-body", OLLAMA, b"", {}, 400, {"error": "missing request body"}, "body_present"),
    ("ollama-not-json", OLLAMA, NOT_JSON, {}, 400, {"error": "invalid JSON body"}, "body_present"),
    ("ollama-v1-not-json", OLLAMA_V1, NOT_JSON, {}, 400, _oa("invalid JSON body"),
     "body_present"),
    ("ollama-no-model", OLLAMA, {"messages": [USER]}, {}, 400, {"error": "model is required"},
     "model_present"),
    # --- Anthropic: POST /v1/messages ---
    ("anthropic-no-key", ANTHROPIC, _a([USER]), {}, 401,
     _anthropic("x-api-key header is required", "authentication_error"), "api_key_present"),
    ("anthropic-not-json", ANTHROPIC, NOT_JSON, None, 400,
     _anthropic("Request body is not valid JSON"), "json_object_body"),
    ("anthropic-no-model", ANTHROPIC, {"max_tokens": 1, "messages": [USER]}, None, 400,
     _anthropic("model: Field required"), "model_present"),
    ("anthropic-no-max-tokens", ANTHROPIC, {"model": "c", "messages": [USER]}, None, 400,
     _anthropic("max_tokens: Field required"), "max_tokens_present"),
    ("anthropic-no-messages", ANTHROPIC, {"model": "c", "max_tokens": 1}, None, 400,
     _anthropic("messages: Field required"), "messages_present"),
    ("anthropic-system-role", ANTHROPIC, _a([{"role": "system", "content": "x"}, USER]), None,
     400, _anthropic("messages.0.role: Input should be 'user' or 'assistant'"), "roles_valid"),
    ("anthropic-empty-content", ANTHROPIC, _a([{"role": "user", "content": ""}]), None, 400,
     _anthropic("messages.0: all messages must have non-empty content except for the optional "
                "final assistant message"), "content_not_empty"),
    ("anthropic-result-without-use", ANTHROPIC,
     _a([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}]),
     None, 400,
     _anthropic("messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
                "toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in "
                "the previous message."), "tool_results_follow_uses"),
    ("anthropic-use-unanswered", ANTHROPIC,
     _a([USER, {"role": "assistant", "content": [
         {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}, USER]),
     None, 400,
     _anthropic("messages.2: `tool_use` ids were found without `tool_result` blocks immediately "
                "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."), "tool_uses_answered"),
    ("anthropic-bad-use-id", ANTHROPIC,
     _a([USER, {"role": "assistant", "content": [
         {"type": "tool_use", "id": "call 1", "name": "f", "input": {}}]}]),
     None, 400,
     _anthropic("messages.1.content.0.tool_use.id: String should match pattern "
                "'^[a-zA-Z0-9_-]+$'"), "tool_use_ids_valid"),
    ("anthropic-bad-tool-name", ANTHROPIC,
     _a([USER], tools=[{"name": "a b", "input_schema": {"type": "object"}}]), None, 400,
     _anthropic("tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
     "tool_names_valid"),
    ("anthropic-bmp-image", ANTHROPIC, _a([_a_image("image/bmp")]), None, 400,
     _anthropic("messages.0.content.0.image.source.base64.media_type: Input should be "
                "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"), "images_valid"),
    ("anthropic-image-over-5mb", ANTHROPIC, _a([_a_image("image/png", BIG)]), None, 400,
     _anthropic("messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 5242885 "
                "bytes > 5242880 bytes"), "images_valid"),
    ("anthropic-thinking-forced-tool", ANTHROPIC,
     {**_a([USER], tools=[{"name": "f", "input_schema": {"type": "object"}}],
           tool_choice={"type": "any"}, thinking={"type": "enabled", "budget_tokens": 1024}),
      "max_tokens": 2048},
     None, 400, _anthropic("Thinking may not be enabled when tool_choice forces tool use."),
     "thinking_allows_tool_choice"),
    # --- Bedrock Converse ---
    ("bedrock-unsigned", BEDROCK, {"messages": [B_USER]}, {}, 403,
     {"message": "Missing Authentication Token"}, "signed"),
    ("bedrock-not-json", BEDROCK, NOT_JSON, None, 400,
     {"message": "Start of structure or map found where not expected."}, "json_object_body"),
    ("bedrock-starts-with-assistant", NOVA,
     {"messages": [{"role": "assistant", "content": [{"text": "x"}]}, B_USER]}, None, 400,
     {"message": "A conversation must start with a user message. Try again with a conversation "
                 "that starts with a user message."}, "starts_with_user"),
    ("bedrock-two-user-turns", BEDROCK, {"messages": [B_USER, B_USER]}, None, 400,
     {"message": "A conversation must alternate between user and assistant roles. Make sure the "
                 "conversation alternates between user and assistant roles and try again."},
     "roles_alternate"),
    ("bedrock-tools-without-toolconfig", BEDROCK,
     {"messages": [B_USER, _b_use("t1"), _b_results("t1")]}, None, 400,
     {"message": "The toolConfig field must be defined when using toolUse and toolResult "
                 "content blocks."}, "tool_config_with_tool_history"),
    ("bedrock-more-results-than-uses", BEDROCK,
     {"messages": [B_USER, _b_use("t1"), _b_results("t1", "t2")], "toolConfig": B_TOOLS},
     None, 400,
     {"message": "The number of toolResult blocks at messages.2.content exceeds the number of "
                 "toolUse blocks of previous turn."}, "tool_results_match_uses"),
    ("bedrock-use-unanswered", BEDROCK,
     {"messages": [B_USER, _b_use("t1", "t2"), _b_results("t1")], "toolConfig": B_TOOLS},
     None, 400,
     {"message": "Expected toolResult blocks at messages.2.content for the following Ids: t2"},
     "tool_results_match_uses"),
    ("bedrock-ends-on-uses", BEDROCK,
     {"messages": [B_USER, _b_use("t1")], "toolConfig": B_TOOLS}, None, 400,
     {"message": "Expected toolResult blocks at messages.2.content for the following Ids: t1"},
     "tool_results_match_uses"),
    ("bedrock-blank-text", BEDROCK, {"messages": [{"role": "user", "content": [{"text": " "}]}]},
     None, 400,
     {"message": "The text field in the ContentBlock object at messages.0.content.0 is blank. "
                 "Add text to the text field, and try again."}, "text_not_blank"),
    ("bedrock-bad-tool-name", BEDROCK,
     {"messages": [B_USER], "toolConfig": {"tools": [{"toolSpec": {"name": "a b"}}]}}, None, 400,
     {"message": "1 validation error detected: Value at 'toolConfig.tools.1.member.toolSpec.name' "
                 "failed to satisfy constraint: Member must satisfy regular expression pattern: "
                 "[a-zA-Z0-9_-]+"}, "tool_names_valid"),
    ("bedrock-long-tool-name", BEDROCK,
     {"messages": [B_USER], "toolConfig": {"tools": [{"toolSpec": {"name": "a" * 65}}]}}, None,
     400,
     {"message": "1 validation error detected: Value at 'toolConfig.tools.1.member.toolSpec.name' "
                 "failed to satisfy constraint: Member must have length less than or equal to 64"},
     "tool_names_valid"),
    ("bedrock-system-tool-without-name", NOVA,
     {"messages": [B_USER], "toolConfig": {"tools": [{"systemTool": {}}]}}, None, 400,
     {"message": "1 validation error detected: Value null at "
                 "'toolConfig.tools.1.member.systemTool.name' failed to satisfy constraint: "
                 "Member must not be null"}, "system_tools_valid"),
    ("bedrock-system-tool-bad-name", NOVA,
     {"messages": [B_USER], "toolConfig": {"tools": [{"systemTool": {"name": "nova grounding"}}]}},
     None, 400,
     {"message": "1 validation error detected: Value at 'toolConfig.tools.1.member.systemTool.name' "
                 "failed to satisfy constraint: Member must satisfy regular expression pattern: "
                 "[a-zA-Z0-9_-]+"}, "system_tools_valid"),
    ("bedrock-bmp-image", BEDROCK, {"messages": [_b_image("bmp")]}, None, 400,
     {"message": "1 validation error detected: Value 'bmp' at 'messages.1.member.content.1.member"
                 ".image.format' failed to satisfy constraint: Member must satisfy enum value "
                 "set: [gif, jpeg, png, webp]"}, "images_valid"),
    ("bedrock-image-over-3.75mb", BEDROCK, {"messages": [_b_image("png", BEDROCK_BIG)]}, None,
     400, {"message": "The image size exceeds the maximum of 3.75 MB."}, "images_valid"),
    # --- Gemini generateContent ---
    ("gemini-no-key", GEMINI, {"contents": [G_USER]}, {}, 403,
     _google("Method doesn't allow unregistered callers (callers without established identity)."
             " Please use API Key or other form of API consumer identity to call this API.", 403,
             "PERMISSION_DENIED"), "api_key_present"),
    ("gemini-not-json", GEMINI, NOT_JSON, None, 400,
     _google("Invalid JSON payload received. Unexpected token."), "json_object_body"),
    ("gemini-over-20mb", GEMINI,
     {"contents": [{"role": "user", "parts": [{"text": "x" * (20 * 1024 * 1024)}]}]}, None, 400,
     _google("Request payload size exceeds the limit: 20971520 bytes."), "request_size"),
    ("gemini-no-contents", GEMINI, {"contents": []}, None, 400,
     _google("* GenerateContentRequest.contents: contents is not specified\n"),
     "contents_present"),
    ("gemini-bad-role", GEMINI, {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]},
     None, 400, _google("Please use a valid role: user, model."), "roles_valid"),
    ("gemini-history-starts-with-call", GEMINI, {"contents": [G_CALL, G_ANSWER]}, None, 400,
     _google("Please ensure that function call turn comes immediately after a user turn or "
             "after a function response turn."), "function_calls_follow_user"),
    ("gemini-two-calls-one-response", GEMINI,
     {"contents": [G_USER, {"role": "model", "parts": G_CALL["parts"] * 2}, G_ANSWER]}, None,
     400,
     _google("Please ensure that the number of function response parts is equal to the number "
             "of function call parts of the function call turn."),
     "function_responses_match_calls"),
    ("gemini-3-unsigned-call", GEMINI_3, {"contents": [G_USER, G_CALL, G_ANSWER]}, None, 400,
     _google(GEMINI_UNSIGNED), "function_calls_signed"),
    ("gemini-bad-function-name", GEMINI,
     {"contents": [G_USER], "tools": [{"functionDeclarations": [{"name": "1f"}]}]}, None, 400,
     _google(GEMINI_NAME), "function_names_valid"),
    ("gemini-additional-properties", GEMINI,
     {"contents": [G_USER], "tools": [{"functionDeclarations": [
         {"name": "f", "parameters": {"type": "object", "additionalProperties": False}}]}]},
     None, 400,
     {"error": {"code": 400, "message": GEMINI_ADDITIONAL, "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                             "fieldViolations": [{
                                 "field": "tools[0].function_declarations[0].parameters",
                                 "description": GEMINI_ADDITIONAL}]}]}},
     "schema_fields_known"),
    ("gemini-inline-data-without-mime", GEMINI,
     {"contents": [{"role": "user", "parts": [{"inlineData": {"data": PNG}}]}]}, None, 400,
     _google("* GenerateContentRequest.contents.parts.inline_data: Required.\n"),
     "inline_data_valid"),
    ("gemini-empty-inline-data", GEMINI,
     {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png",
                                                              "data": ""}}]}]}, None, 400,
     _google("Unable to submit request because it has an empty inlineData."), "inline_data_valid"),
    # --- issue 31: built-in (hosted) tools, Gemini API (validate_hosted.py) ---
    ("gemini-unknown-tool", GEMINI, {"contents": [G_USER], "tools": [{"webSearch": {}}]}, None,
     400, _google("Invalid JSON payload received. Unknown name \"webSearch\" at 'tools[0]': "
                  "Cannot find field."), "hosted_tools_known"),
    ("gemini-search-exclude-domains", GEMINI,
     {"contents": [G_USER], "tools": [{"googleSearch": {"excludeDomains": ["a.com"]}}]}, None,
     400, _google("Invalid JSON payload received. Unknown name \"excludeDomains\" at "
                  "'tools[0].google_search': Cannot find field."), "hosted_tools_known"),
    ("gemini-file-search-without-stores", GEMINI,
     {"contents": [G_USER], "tools": [{"fileSearch": {"topK": 3}}]}, None, 400,
     _google("* GenerateContentRequest.tools[0].file_search.file_search_store_names: "
             "file_search_store_names is not specified\n"), "file_search_stores_given"),
    # --- issue 33: parameter ranges and limits ---
    ("openai-max-tokens-over-model", OPENAI,
     {"model": "gpt-4o", "messages": [USER], "max_tokens": 20480}, None, 400,
     _oa("max_tokens is too large: 20480. This model supports at most 16384 completion tokens, "
         "whereas you provided 20480.", "max_tokens", "invalid_value"),
     "max_tokens_within_model"),
    ("openai-temperature-over-2", OPENAI, {"model": "m", "messages": [USER], "temperature": 3},
     None, 400,
     _oa("Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 "
         "instead.", "temperature", "decimal_above_max_value"), "temperature_in_range"),
    ("openai-stream-options-without-stream", OPENAI,
     {"model": "m", "messages": [USER], "stream_options": {"include_usage": True}}, None, 400,
     _oa("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
         "stream_options"), "stream_options_need_stream"),
    ("openai-tool-choice-without-tools", OPENAI,
     {"model": "m", "messages": [USER], "tool_choice": "required"}, None, 400,
     _oa("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
         "specified.", "tool_choice"), "tool_choice_needs_tools"),
    ("groq-n-over-1", GROQ, {"model": "m", "messages": [USER], "n": 2}, None, 400,
     {"error": {"message": "'n' : number must be at most 1", "type": "invalid_request_error",
                "code": None}},
     "n_is_one"),
    ("groq-unsupported-message-property", GROQ,
     {"model": "m", "messages": [USER, {**USER, "timestamp": 1}]}, None, 400,
     {"error": {"message": "'messages.1' : for 'role:user' the following must be satisfied[("
                           "'messages.1' : property 'timestamp' is unsupported)]",
                "type": "invalid_request_error", "code": None}}, "message_fields_known"),
    # --- hosted tools on Chat Completions (issue 31) ---
    ("openai-builtin-tool-type", OPENAI,
     {"model": "m", "messages": [USER], "tools": [{"type": "browser_search"}]}, None, 400,
     _oa("Invalid value: 'browser_search'. Supported values are: 'function' and 'custom'.",
         "tools[0].type", "invalid_value"), "tool_types_known"),
    ("openai-web-search-options-not-search-model", OPENAI,
     {"model": "gpt-4o", "messages": [USER], "web_search_options": {}}, None, 400,
     _oa("Web search options not supported with this model.", "web_search_options"),
     "web_search_options_on_search_models"),
    ("openai-web-search-context-size", OPENAI,
     {"model": "gpt-4o-search-preview", "messages": [USER],
      "web_search_options": {"search_context_size": "huge"}}, None, 400,
     _oa("Invalid value: 'huge'. Supported values are: 'low', 'medium', and 'high'.",
         "web_search_options.search_context_size", "invalid_value"),
     "web_search_options_valid"),
    ("openai-web-search-location-type", OPENAI,
     {"model": "gpt-5-search-api", "messages": [USER],
      "web_search_options": {"user_location": {"type": "exact", "approximate": {}}}}, None, 400,
     _oa("Invalid value: 'exact'. Supported values are: 'approximate'.",
         "web_search_options.user_location.type", "invalid_value"),
     "web_search_options_valid"),
    ("openai-web-search-location-missing", OPENAI,
     {"model": "gpt-5-search-api", "messages": [USER],
      "web_search_options": {"user_location": {"type": "approximate"}}}, None, 400,
     _oa("Missing required parameter: 'web_search_options.user_location.approximate'.",
         "web_search_options.user_location.approximate", "missing_required_parameter"),
     "web_search_options_valid"),
    ("groq-unknown-tool-type", GROQ,
     {"model": "m", "messages": [USER], "tools": [{"type": "web_search"}]}, None, 400,
     {"error": {"message": "'tools.0.type' : value must be one of ['function', "
                           "'browser_search', 'code_interpreter'], got 'web_search'",
                "type": "invalid_request_error", "code": None}}, "tool_types_known"),
    ("groq-unknown-compound-tool", GROQ,
     {"model": "groq/compound", "messages": [USER],
      "compound_custom": {"tools": {"enabled_tools": ["web_search", "browser"]}}}, None, 400,
     {"error": {"message": "'compound_custom.tools.enabled_tools.1' : value must be one of "
                           "['web_search', 'visit_website', 'browser_automation', "
                           "'code_interpreter', 'wolfram_alpha'], got 'browser'",
                "type": "invalid_request_error", "code": None}}, "compound_tools_known"),
    ("anthropic-no-version-header", ANTHROPIC, _a([USER]), {"x-api-key": "k"}, 400,
     _anthropic("anthropic-version: header is required"), "version_header_present"),
    ("anthropic-max-tokens-over-model", ANTHROPIC,
     {"model": "claude-sonnet-4-5", "max_tokens": 100000, "messages": [USER]}, None, 400,
     _anthropic("max_tokens: 100000 > 64000, which is the maximum allowed number of output "
                "tokens for claude-sonnet-4-5"), "max_tokens_within_model"),
    ("anthropic-temperature-over-1", ANTHROPIC, _a([USER], temperature=1.5), None, 400,
     _anthropic("temperature: Input should be less than or equal to 1"), "temperature_in_range"),
    ("anthropic-thinking-budget-under-1024", ANTHROPIC,
     _a([USER], max_tokens=4000, thinking={"type": "enabled", "budget_tokens": 512}), None, 400,
     _anthropic("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"),
     "thinking_budget_valid"),
    ("bedrock-temperature-over-1", BEDROCK,
     {"messages": [B_USER], "inferenceConfig": {"temperature": 2.0}}, None, 400,
     {"message": "1 validation error detected: Value '2.0' at 'inferenceConfig.temperature' "
                 "failed to satisfy constraint: Member must have value less than or equal to 1"},
     "temperature_in_range"),
    ("bedrock-claude-max-tokens-over-model", BEDROCK_SONNET_4,
     {"messages": [B_USER], "inferenceConfig": {"maxTokens": 100000}}, None, 400,
     {"message": "The maximum tokens you requested exceeds the model limit of 64000. Try again "
                 "with a maximum tokens value that is lower than 64000."},
     "max_tokens_within_model"),
    ("bedrock-thinking-budget-under-1024", BEDROCK,
     {"messages": [B_USER],
      "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 100}}},
     None, 400,
     {"message": "The model returned the following errors: thinking.enabled.budget_tokens: "
                 "Input should be greater than or equal to 1024"}, "thinking_budget_valid"),
    ("gemini-temperature-over-2", GEMINI,
     {"contents": [G_USER], "generationConfig": {"temperature": 3}}, None, 400,
     _google("Unable to submit request because it has a temperature value of 3 but the supported "
             "range is from 0 (inclusive) to 2.0001 (exclusive). Update the value and try again."),
     "temperature_in_range"),
    ("gemini-max-output-tokens-over-model", GEMINI,
     {"contents": [G_USER], "generationConfig": {"maxOutputTokens": 100000}}, None, 400,
     _google("Unable to submit request because it has a maxOutputTokens value of 100000 but the "
             "supported range is from 1 (inclusive) to 65537 (exclusive). Update the value and "
             "try again."), "max_output_tokens_within_model"),
    # --- issue 33: tool schemas ---
    ("openai-parameters-not-object", OPENAI,
     {"model": "m", "messages": [USER], "tools": [_oa_tool({"type": "array"})]}, None, 400,
     _oa("Invalid schema for function 'f': schema must be a JSON Schema of 'type: \"object\"', "
         "got 'type: \"array\"'.", "tools[0].function.parameters", "invalid_function_parameters"),
     "tool_schemas_valid"),
    ("openai-property-type-not-a-type", OPENAI,
     {"model": "m", "messages": [USER],
      "tools": [_oa_tool({"type": "object", "properties": {"a": {"type": "str"}}})]}, None, 400,
     _oa("Invalid schema for function 'f': In context=('properties', 'a'), 'str' is not valid "
         "under any of the given schemas.", "tools[0].function.parameters",
         "invalid_function_parameters"), "tool_schemas_valid"),
    ("openai-strict-without-additional-properties", OPENAI,
     {"model": "m", "messages": [USER],
      "tools": [_oa_tool({"type": "object", "properties": {}}, strict=True)]}, None, 400,
     _oa("Invalid schema for function 'f': In context=(), 'additionalProperties' is required to "
         "be supplied and to be false.", "tools[0].function.parameters",
         "invalid_function_parameters"), "tool_schemas_valid"),
    ("openai-strict-response-format-not-all-required", OPENAI,
     {"model": "m", "messages": [USER], "response_format": {"type": "json_schema", "json_schema": {
         "name": "r", "strict": True, "schema": {
             "type": "object", "properties": {"b": {"type": "string"}},
             "additionalProperties": False}}}}, None, 400,
     _oa("Invalid schema for response_format 'r': In context=(), 'required' is required to be "
         "supplied and to be an array including every key in properties. Missing 'b'.",
         "response_format"), "response_format_valid"),
    ("anthropic-input-schema-not-object", ANTHROPIC,
     _a([USER], tools=[{"name": "f", "input_schema": {"type": "array"}}]), None, 400,
     _anthropic("tools.0.custom.input_schema.type: Input should be 'object'"),
     "tool_schemas_valid"),
    ("anthropic-input-schema-invalid", ANTHROPIC,
     _a([USER], tools=[{"name": "f", "input_schema": {"type": "object", "required": "a"}}]),
     None, 400, _anthropic(ANTHROPIC_BAD_SCHEMA), "tool_schemas_valid"),
    ("bedrock-input-schema-not-object", BEDROCK,
     {"messages": [B_USER], "toolConfig": {"tools": [
         {"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "array"}}}}]}}, None, 400,
     {"message": "The value at toolConfig.tools.0.toolSpec.inputSchema.json.type must be one of "
                 "the following: object."}, "tool_schemas_valid"),
    ("bedrock-claude-input-schema-invalid", BEDROCK,
     {"messages": [B_USER], "toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {
         "json": {"type": "object", "properties": {"a": {"type": "str"}}}}}}]}}, None, 400,
     {"message": "The model returned the following errors: " + ANTHROPIC_BAD_SCHEMA},
     "tool_schemas_valid"),
    ("gemini-type-not-a-type", GEMINI,
     {"contents": [G_USER], "tools": [{"functionDeclarations": [
         {"name": "f", "parameters": {"type": "objet"}}]}]}, None, 400,
     _google_violation(GEMINI_TYPE, "tools[0].function_declarations[0].parameters.type"),
     "schema_values_valid"),
    ("gemini-enum-on-integer", GEMINI,
     {"contents": [G_USER], "tools": [{"functionDeclarations": [{"name": "f", "parameters": {
         "type": "OBJECT", "properties": {"n": {"type": "INTEGER", "enum": [1, 2]}}}}]}]},
     None, 400,
     _google("* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties"
             "[n].enum: only allowed for STRING type\n"), "schema_values_valid"),
    ("gemini-required-undeclared", GEMINI,
     {"contents": [G_USER], "tools": [{"functionDeclarations": [{"name": "f", "parameters": {
         "type": "OBJECT", "properties": {}, "required": ["a"]}}]}]}, None, 400,
     _google("* GenerateContentRequest.tools[0].function_declarations[0].parameters.required[0]: "
             "property is not defined\n"), "schema_values_valid"),
    ("gemini-parameters-not-object", GEMINI,
     {"contents": [G_USER], "tools": [{"functionDeclarations": [
         {"name": "f", "parameters": {"type": "ARRAY", "items": {"type": "STRING"}}}]}]},
     None, 400,
     _google("* GenerateContentRequest.tools[0].function_declarations[0].parameters.type: must "
             "be OBJECT\n"), "schema_values_valid"),
    ("bedrock-tool-choice-without-tools", BEDROCK,
     {"messages": [B_USER], "toolConfig": {"toolChoice": {"any": {}}}}, None, 400,
     {"message": "1 validation error detected: Value null at 'toolConfig.tools' failed to "
                 "satisfy constraint: Member must not be null"}, "tools_listed"),
    # --- issue 33: content rules ---
    ("anthropic-empty-text-block", ANTHROPIC,
     _a([{"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text",
                                                                     "text": "hi"}]}]),
     None, 400, _anthropic("messages: text content blocks must be non-empty"),
     "text_blocks_valid"),
    ("anthropic-whitespace-only-message", ANTHROPIC,
     _a([{"role": "user", "content": [{"type": "text", "text": "\n"}]}]), None, 400,
     _anthropic("messages: text content blocks must contain non-whitespace text"),
     "text_blocks_valid"),
    ("anthropic-final-assistant-trailing-space", ANTHROPIC,
     _a([USER, {"role": "assistant", "content": "Sure, "}]), None, 400,
     _anthropic("messages: final assistant content cannot end with trailing whitespace"),
     "trailing_whitespace_valid"),
    ("anthropic-image-bytes-not-the-type", ANTHROPIC, _a([_a_image("image/jpeg")]), None, 400,
     _anthropic("messages.0.content.0.image.source.base64.data: Image does not match the "
                "provided media type image/jpeg"), "images_valid"),
    ("anthropic-five-cache-points", ANTHROPIC,
     _a([{"role": "user", "content": [
         {"type": "text", "text": f"t{i}", "cache_control": {"type": "ephemeral"}}
         for i in range(5)]}]), None, 400,
     _anthropic("A maximum of 4 blocks with cache_control may be provided. Found 5."),
     "cache_points_within_limit"),
    ("anthropic-text-before-tool-result", ANTHROPIC,
     _a([USER, _a_use("toolu_1"), {"role": "user", "content": [
         {"type": "text", "text": "here"},
         {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}]), None, 400,
     _anthropic("messages.2: Did not find 1 `tool_result` block(s) at the beginning of this "
                "message. Messages following `tool_use` blocks must begin with a matching number "
                "of `tool_result` blocks."), "tool_results_first"),
    ("anthropic-duplicate-tool-names", ANTHROPIC,
     _a([USER], tools=[{"name": "f", "input_schema": {"type": "object"}}] * 2), None, 400,
     _anthropic("tools: Tool names must be unique."), "tool_names_unique"),
    ("anthropic-duplicate-tool-use-ids", ANTHROPIC,
     _a([USER, _a_use("toolu_1", "toolu_1")]), None, 400,
     _anthropic("messages.1.content.1: `tool_use` ids must be unique"), "tool_use_ids_unique"),
    # --- issue 31: Anthropic's server tools (wires/anthropic/hosted_rules.py) ---
    ("anthropic-unknown-server-tool", ANTHROPIC,
     _a([USER], tools=[{"type": "web_search_20990101", "name": "web_search"}]), None, 400,
     _anthropic("tools.0: Input tag 'web_search_20990101' found using 'type' does not match any "
                f"of the expected tags: {ANTHROPIC_TOOL_TAGS}"), "tool_types_known"),
    ("anthropic-server-tool-name", ANTHROPIC,
     _a([USER], tools=[{"type": "web_search_20250305", "name": "search"}]), None, 400,
     _anthropic("tools.0.web_search_20250305.name: Input should be 'web_search'"),
     "server_tool_names_valid"),
    ("anthropic-server-tool-both-domain-lists", ANTHROPIC,
     _a([USER], tools=[{"type": "web_search_20250305", "name": "web_search",
                        "allowed_domains": ["a.example"], "blocked_domains": ["b.example"]}]),
     None, 400,
     _anthropic("tools.0.web_search_20250305: Cannot specify both allowed_domains and "
                "blocked_domains in the same request"), "server_tool_domains_valid"),
    ("anthropic-server-tool-no-uses", ANTHROPIC,
     _a([USER], tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 0}]),
     None, 400,
     _anthropic("tools.0.web_search_20250305.max_uses: Input should be greater than or equal to 1"),
     "server_tool_max_uses_valid"),
    ("anthropic-mcp-servers-without-beta", ANTHROPIC,
     _a([USER], mcp_servers=[{"type": "url", "url": "https://m.example", "name": "m"}]),
     {**KEYS, "anthropic-beta": "context-1m-2025-08-07"}, 400,
     _anthropic("mcp_servers: Extra inputs are not permitted"), "mcp_servers_valid"),
    ("bedrock-empty-content", BEDROCK, {"messages": [{"role": "user", "content": []}]}, None, 400,
     {"message": "The content field in the Message object at messages.0 is empty. Add a "
                 "ContentBlock object to the content field and try again."},
     "content_not_empty"),
    ("bedrock-empty-system-text", BEDROCK, {"messages": [B_USER], "system": [{"text": ""}]},
     None, 400,
     {"message": "1 validation error detected: Value '' at 'system.1.member.text' failed to "
                 "satisfy constraint: Member must have length greater than or equal to 1"},
     "system_text_not_empty"),
    ("bedrock-five-cache-points", BEDROCK,
     {"messages": [{"role": "user", "content": [{"text": "a"}] + [
         {"cachePoint": {"type": "default"}}] * 5}]}, None, 400,
     {"message": "The model returned the following errors: A maximum of 4 blocks with "
                 "cache_control may be provided. Found 5."}, "cache_points_within_limit"),
    ("gemini-empty-parts", GEMINI, {"contents": [G_USER, {"role": "model", "parts": []}]}, None,
     400, _google("* GenerateContentRequest.contents[1].parts: contents.parts must not be "
                  "empty.\n"), "parts_not_empty"),
    # --- issue 33: pairing holes ---
    ("gemini-response-without-call", GEMINI, {"contents": [G_USER, G_ANSWER]}, None, 400,
     _google("Please ensure that function response turn comes immediately after a function call "
             "turn."), "function_responses_follow_calls"),
    ("mistral-more-calls-than-answers", MISTRAL,
     {"model": "m", "messages": [USER, {"role": "assistant", "tool_calls": [
         MISTRAL_CALL, {**MISTRAL_CALL, "id": "bcdefghij"}]},
         {"role": "tool", "tool_call_id": "abcdefghi", "content": "x"}, USER]}, None, 400,
     _mistral("Not the same number of function calls and responses",
              "invalid_request_message_order", "3230"), "calls_answered"),
    # --- issue 33: Ollama ---
    ("ollama-image-not-base64", OLLAMA,
     {"model": "m", "messages": [{"role": "user", "content": "x", "images": ["data:image/png"]}]},
     {}, 400, {"error": "illegal base64 data at input byte 4"}, "images_base64"),
    ("ollama-v1-no-model", OLLAMA_V1, {"messages": [USER]}, {}, 400,
     _oa("model is required"), "model_present"),
    ("ollama-v1-remote-image", OLLAMA_V1,
     {"model": "m", "messages": [{"role": "user", "content": [
         {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}, {}, 400,
     _oa("invalid image input"), "message_content_valid"),
    ("ollama-v1-bad-reasoning-effort", OLLAMA_V1,
     {"model": "m", "messages": [USER], "reasoning_effort": "max"}, {}, 400,
     _oa("invalid reasoning value: 'max' (must be \"high\", \"medium\", \"low\", or \"none\")"),
     "reasoning_effort_valid"),
    # --- the counting endpoints' own rules ---
    ("anthropic-count-max-tokens", ANTHROPIC_COUNT, _a([USER]), None, 400,
     _anthropic("max_tokens: Extra inputs are not permitted"), "count_fields_known"),
    ("bedrock-count-no-input", BEDROCK_COUNT, {}, None, 400,
     {"message": "1 validation error detected: Value null at 'input' failed to satisfy "
                 "constraint: Member must not be null"}, "count_input_given"),
    ("gemini-count-contents-and-request", GEMINI_COUNT,
     {"contents": [G_USER], "generateContentRequest": {"model": "models/m"}}, None, 400,
     _google("* CountTokensRequest: exactly one of contents and generate_content_request must "
             "be set\n"), "count_input_given"),
    ("gemini-count-request-without-model", GEMINI_COUNT,
     {"generateContentRequest": {"contents": [G_USER]}}, None, 400,
     _google("* GenerateContentRequest.model: model is not specified\n"), "count_model_given"),
]  # fmt: skip


def _groq_case(case: Case) -> Case:
    """An OpenAI case on Groq: the same rule, Groq's error shape (no ``param``)."""
    name, _, body, headers, status, expected, rule = case
    error = {k: v for k, v in expected["error"].items() if k != "param"}
    return (
        "groq" + name.removeprefix("openai"),
        GROQ,
        body,
        headers,
        status,
        {"error": error},
        rule,
    )


# Groq applies every OpenAI rule but the key check (its own, above).
# (OpenAI's model limits name OpenAI's models: Groq's rules leave them out.)
# Nor OpenAI's tool types and web_search_options: Groq has its own tools (issue 31).
NOT_ON_GROQ = (
    "api_key_present",
    "max_tokens_within_model",
    "tool_types_known",
    "web_search_options_on_search_models",
    "web_search_options_valid",
)
CASES += [_groq_case(c) for c in CASES if c[1] == OPENAI and c[6] not in NOT_ON_GROQ]

# Bedrock's error code travels in x-amzn-ErrorType.
BEDROCK_TYPES = {
    "signed": "MissingAuthenticationTokenException",
    "json_object_body": "SerializationException",
}
IDS = [c[0] for c in CASES]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(scope="module")
def lenient() -> Iterator[MockLLMServer]:
    with MockLLMServer(strict=False) as s:
        yield s


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """One HTTP client for the module's requests (building one per request, as
    ``httpx.post`` does, costs more than the request)."""
    with httpx.Client(timeout=30) as client:
        yield client


def send(
    http: httpx.Client, server: MockLLMServer, path: str, body: Any, headers: dict[str, str] | None
) -> Any:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"content-type": "application/json", **(KEYS if headers is None else headers)}
    return http.post(server.url + path, content=content, headers=sent)


@pytest.mark.parametrize(("path", "body", "headers", "status", "expected", "rule"),
                         [c[1:] for c in CASES], ids=IDS)  # fmt: skip
def test_bad_request_gets_the_real_status_and_body(
    server: MockLLMServer,
    http: httpx.Client,
    path: str,
    body: Any,
    headers: dict[str, str] | None,
    status: int,
    expected: Any,
    rule: str,
) -> None:
    server.reset()
    server.enqueue(text="never served")
    resp = send(http, server, path, body, headers)
    assert resp.status_code == status
    answer = resp.json()
    if path in (ANTHROPIC, ANTHROPIC_COUNT):  # the envelope: type, error, request_id (header)
        assert answer.pop("request_id") == resp.headers["request-id"]
        assert answer.pop("type") == "error"
        answer = answer["error"]
    if path in (BEDROCK, NOVA, BEDROCK_SONNET_4):
        kind = resp.headers["x-amzn-errortype"].split(":", 1)[0]
        assert kind == BEDROCK_TYPES.get(rule, "ValidationException")
    assert answer == expected
    logged = server.last_request()
    assert (logged.rejected_by, logged.raw_body) == (rule, send_bytes(body))
    assert server.pending() == 1  # a refused request takes nothing from the queue


def send_bytes(body: Any) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode()


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:4] for c in CASES], ids=IDS)
def test_strict_false_serves_it(
    lenient: MockLLMServer,
    http: httpx.Client,
    path: str,
    body: Any,
    headers: dict[str, str] | None,
) -> None:
    lenient.reset()
    lenient.enqueue(text="served")
    assert send(http, lenient, path, body, headers).status_code == 200
    assert lenient.last_request().rejected_by is None


def _rules(module: Any) -> set[str]:
    """The names of every rule a validation module applies, on any of its endpoints."""
    tuples = [v for k, v in vars(module).items() if k.endswith("_RULES") and isinstance(v, tuple)]
    return {rule.__name__ for rules in tuples for rule in rules}


WIRES = ["openai", "groq", "mistral", "ollama", "anthropic", "bedrock", "gemini"]


@pytest.mark.parametrize("wire", WIRES)
def test_every_rule_has_a_case(wire: str) -> None:
    paths = {
        "openai": (OPENAI,),
        "groq": (GROQ,),
        "mistral": (MISTRAL,),
        "anthropic": (ANTHROPIC, ANTHROPIC_COUNT),
    }
    covered = {
        c[6]
        for c in CASES
        if c[1] in paths.get(wire, ()) or c[1].startswith(f"/{wire}/") and wire not in paths
    }
    assert _rules(load_validator(wire)) - covered == set()


def test_every_rule_cites_where_the_behaviour_was_seen() -> None:
    """A documentation URL or a recording under shared/fixtures, in the rule's docstring."""
    uncited = [
        f"{wire}.{name}"
        for wire in WIRES
        for name, doc in _docs(load_validator(wire)).items()
        if "https://" not in doc and "recording" not in doc
    ]
    assert uncited == []


def _docs(module: Any) -> dict[str, str]:
    tuples = [v for k, v in vars(module).items() if k.endswith("_RULES") and isinstance(v, tuple)]
    return {rule.__name__: rule.__doc__ or "" for rules in tuples for rule in rules}


RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"
CITED = re.compile(r"\b(openai|groq|mistral|ollama|anthropic|bedrock|gemini)/([\w.@-]+__i\d\d)\b")


@pytest.mark.skipif(not RECORDED.is_dir(), reason=f"{RECORDED} is absent")
def test_every_cited_recording_exists() -> None:
    # Every wire's folder, and the shared modules beside them.
    source = Path(load_validator("openai").__file__).parents[2]  # type: ignore[union-attr,arg-type]
    cited = {
        (wire, name, file.name)
        for file in sorted(source.rglob("*.py"))
        for wire, name in CITED.findall(file.read_text(encoding="utf-8"))
    }
    assert cited
    assert [c for c in cited if not (RECORDED / c[0] / f"{c[1]}.json").is_file()] == []
