"""What OpenAI's ``POST /v1/chat/completions`` refuses, one rule per function.

Groq, Mistral and Ollama's ``/v1`` endpoint reuse these rules (``wires/groq``,
``wires/mistral``, ``wires/ollama``). Error bodies are OpenAI's
``{"error": {"message", "type", "param", "code"}}``: a rule gives the message, ``param`` and
``code`` as the real API does.

The Responses API (``POST /v1/responses``) gets its rules in ``_RULES_BY_PATH`` below when
its endpoint lands in the mock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, bearer_present, body_of, dicts, list_of

ROLES = ("system", "assistant", "user", "function", "tool", "developer")
USER_PART_TYPES = ("text", "image_url", "input_audio", "file")
IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_MAX = 64


def reject(
    status: int, message: str, param: str | None = None, code: str | None = None
) -> Rejection:
    return Rejection(status, message, "invalid_request_error", {"param": param, "code": code})


def api_key_present(req: RecordedRequest) -> Rejection | None:
    """401 without ``Authorization``. Seen: the body every OpenAI user meets without a key
    (https://platform.openai.com/docs/guides/error-codes, "401 - Invalid Authentication")."""
    if bearer_present(req):
        return None
    return reject(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password "
        "field (with blank username) if you're accessing the API from your browser and are "
        "prompted for a username and password. You can obtain an API key from "
        "https://platform.openai.com/account/api-keys.",
    )


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """400 when the body is not a JSON object (the API's "could not parse the JSON body"
    answer, https://platform.openai.com/docs/guides/error-codes)."""
    if isinstance(req.body, dict):
        return None
    return reject(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you "
        "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
        "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
        "this, please contact us through our help center at help.openai.com.)",
    )


def model_present(req: RecordedRequest) -> Rejection | None:
    """400 "you must provide a model parameter" (API reference: ``model`` is required,
    https://platform.openai.com/docs/api-reference/chat/create)."""
    model = body_of(req).get("model")
    if isinstance(model, str) and model:
        return None
    return reject(400, "you must provide a model parameter")


def messages_present(req: RecordedRequest) -> Rejection | None:
    """400 ``missing_required_parameter`` / ``empty_array`` for ``messages`` (API
    reference: ``messages`` is required, at least one,
    https://platform.openai.com/docs/api-reference/chat/create)."""
    body = body_of(req)
    if "messages" not in body:
        return reject(
            400, "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    if not list_of(body["messages"]):
        return reject(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got "
            "an empty array instead.",
            "messages",
            "empty_array",
        )
    return None


def roles_known(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_value`` for an unknown role (roles listed in the API reference;
    recording openai/pydantic-ai__test_openai.test_openai_o1_mini_system_role_system__i00
    shows the ``messages[0].role`` param form)."""
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
            return reject(
                400,
                f"Invalid value: '{role}'. Supported values are: {supported}.",
                f"messages[{index}].role",
                "invalid_value",
            )
    return None


def tool_messages_answer_calls(req: RecordedRequest) -> Rejection | None:
    """400 for a ``tool`` message that follows no assistant ``tool_calls``, as OpenAI
    answers (body quoted in https://github.com/simonw/llm/issues/937 and
    https://github.com/openai/openai-go/issues/43)."""
    pending: set[str] | None = None  # ids of the last assistant tool calls, None: no calls
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if role == "tool":
            if pending is None:
                return reject(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{index}].role",
                )
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return reject(
                    400,
                    f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in "
                    "'tool_calls' of previous message.",
                    f"messages.[{index}].tool_call_id",
                )
        elif role == "assistant" and list_of(message.get("tool_calls")):
            pending = {str(c.get("id")) for _, c in dicts(message["tool_calls"])}
        else:
            pending = None
    return None


def tool_calls_answered(req: RecordedRequest) -> Rejection | None:
    """400 when an assistant ``tool_calls`` message is not followed by one ``tool`` message
    per call id (body quoted in https://github.com/microsoft/promptflow/pull/3130: "An
    assistant message with 'tool_calls' must be followed by tool messages responding to
    each 'tool_call_id'")."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (index, message) in enumerate(messages):
        if message.get("role") != "assistant" or not list_of(message.get("tool_calls")):
            continue
        wanted = [str(c.get("id")) for _, c in dicts(message["tool_calls"])]
        answered = set()
        for _, later in messages[position + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(str(later.get("tool_call_id")))
        missing = [i for i in wanted if i not in answered]
        if missing:
            return reject(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(missing)}",
                f"messages.[{index}].role",
            )
    return None


def tool_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a function name outside ``^[a-zA-Z0-9_-]+$`` or longer than 64 (API
    reference, ``tools[].function.name``: "a-z, A-Z, 0-9, or contain underscores and dashes,
    with a maximum length of 64", https://platform.openai.com/docs/api-reference/chat/create)."""
    for index, tool in dicts(body_of(req).get("tools")):
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        rejection = tool_name_rejection(name, f"tools[{index}].function.name")
        if rejection:
            return rejection
    return None


def tool_name_rejection(name: object, param: str) -> Rejection | None:
    """The API's 400 for a name outside ``^[a-zA-Z0-9_-]+$`` or over 64 characters, at
    ``param`` (Chat Completions and Responses give the same answer)."""
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return reject(
            400,
            f"Invalid '{param}': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
            param,
            "invalid_value",
        )
    if len(name) > TOOL_NAME_MAX:
        return reject(
            400,
            f"Invalid '{param}': string too long. Expected a string with maximum length "
            f"{TOOL_NAME_MAX}, but got a string with length {len(name)} instead.",
            param,
            "string_above_max_length",
        )
    return None


def content_parts_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a content part type a message's role does not take: user messages take
    text, image_url, input_audio and file; the other roles text only. Seen: recording
    openai/pydantic-ai__test_multimodal_tool_returns.test_multimodal_tool_return_matrix_direct-binary-audio-openai_chat__i01
    ("Invalid 'messages[3]'. Content blocks are expected to be either text or image_url
    type.", ``invalid_value``)."""
    for index, message in dicts(body_of(req).get("messages")):
        allowed = USER_PART_TYPES if message.get("role") == "user" else ("text", "refusal")
        for part_index, part in dicts(message.get("content")):
            if part.get("type") not in allowed:
                return reject(
                    400,
                    f"Invalid value: '{part.get('type')}'. Supported values are: "
                    f"{', '.join(repr(a) for a in allowed)}.",
                    f"messages[{index}].content[{part_index}].type",
                    "invalid_value",
                )
    return None


def image_formats_supported(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_image_format`` for a data-URL image that is not png, jpeg, gif or
    webp (vision guide, "Image input requirements": PNG, JPEG, WEBP, non-animated GIF,
    https://platform.openai.com/docs/guides/images-vision)."""
    for _, message in dicts(body_of(req).get("messages")):
        for _, part in dicts(message.get("content")):
            url = _image_url(part)
            if url is None or not url.startswith("data:"):
                continue
            media_type = url[5:].split(";", 1)[0].split(",", 1)[0]
            if media_type.removeprefix("image/") not in IMAGE_FORMATS:
                return reject(
                    400,
                    "You uploaded an unsupported image. Please make sure your image has of one "
                    "the following formats: ['png', 'jpeg', 'gif', 'webp'].",
                    None,
                    "invalid_image_format",
                )
    return None


def _image_url(part: dict[str, Any]) -> str | None:
    if part.get("type") != "image_url":
        return None
    value = part.get("image_url")
    url = value.get("url") if isinstance(value, dict) else value
    return url if isinstance(url, str) else None


CHAT_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    messages_present,
    roles_known,
    tool_messages_answer_calls,
    tool_calls_answered,
    tool_names_valid,
    content_parts_valid,
    image_formats_supported,
)

# Endpoint -> rules. The Responses API and other endpoints add their row here.
_RULES_BY_PATH: dict[str, tuple[Rule, ...]] = {"/v1/chat/completions": CHAT_RULES}


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return _RULES_BY_PATH.get(req.path, ())
