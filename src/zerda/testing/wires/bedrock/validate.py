"""What Bedrock's ``Converse`` / ``ConverseStream`` refuse, one rule per function.

Errors are ``{"message"}`` with the code in ``x-amzn-ErrorType`` (recording
bedrock/pydantic-ai__test_bedrock.test_bedrock_error__i00): ``ValidationException`` (400)
for every rule here except authentication.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import (
    Rejection,
    Rule,
    base64_size,
    bearer_present,
    body_of,
    dicts,
    number,
    schema_error,
)

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_MAX = 64
IMAGE_FORMATS = ("gif", "jpeg", "png", "webp")
IMAGE_MAX_BYTES = 3_750_000  # 3.75 MB
CACHE_POINTS_MAX = 4
THINKING_BUDGET_MIN = 1024
# Claude models' ids on Bedrock (``anthropic.claude-…``, ``us.anthropic.claude-…``, ARNs).
CLAUDE = re.compile(r"anthropic|claude")


def invalid(message: str) -> Rejection:
    return Rejection(400, message, "ValidationException")


def signed(req: RecordedRequest) -> Rejection | None:
    """403 ``MissingAuthenticationTokenException`` "Missing Authentication Token" for a
    request with no ``Authorization`` (SigV4 or a Bedrock API key), as every AWS API answers
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html)."""
    if bearer_present(req):
        return None
    return Rejection(403, "Missing Authentication Token", "MissingAuthenticationTokenException")


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """400 ``SerializationException``-style refusal of a body that is not a JSON object
    (CommonErrors: the request body could not be parsed,
    https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html)."""
    if isinstance(req.body, dict):
        return None
    return Rejection(
        400, "Start of structure or map found where not expected.", "SerializationException"
    )


def _messages(req: RecordedRequest) -> list[tuple[int, dict[str, Any]]]:
    return list(dicts(body_of(req).get("messages")))


def _model(req: RecordedRequest) -> str:
    """The model id from ``/model/{modelId}/converse`` (URL-encoded there)."""
    parts = req.path.split("/")
    return unquote(parts[2]) if len(parts) > 2 else ""


def _claude(req: RecordedRequest) -> bool:
    return CLAUDE.search(_model(req)) is not None


def _model_error(message: str) -> Rejection:
    """What Converse answers when the model's own validator refuses the request: its
    message after "The model returned the following errors: " (recording
    bedrock/pydantic-ai__test_multimodal_tool_returns.test_multimodal_tool_return_matrix_tool_return_content-uploaded_file-document-bedrock_claude__i01)."""
    return invalid(f"The model returned the following errors: {message}")


def starts_with_user(req: RecordedRequest) -> Rejection | None:
    """400 "A conversation must start with a user message. Try again with a conversation
    that starts with a user message." (quoted in
    https://github.com/langgenius/dify/issues/12340 and
    https://github.com/elastic/kibana/pull/246393). Claude models take a history that starts
    with an assistant turn, as their Messages API does (a prefill;
    https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html)."""
    messages = _messages(req)
    if messages and (messages[0][1].get("role") == "user" or _claude(req)):
        return None
    return invalid(
        "A conversation must start with a user message. Try again with a conversation that "
        "starts with a user message."
    )


def roles_alternate(req: RecordedRequest) -> Rejection | None:
    """400 "A conversation must alternate between user and assistant roles..." (quoted in
    https://github.com/langchain-ai/langchainjs/issues/6724)."""
    roles = [m.get("role") for _, m in _messages(req)]
    if all(a != b for a, b in zip(roles, roles[1:], strict=False)) and set(roles) <= {
        "user",
        "assistant",
    }:
        return None
    return invalid(
        "A conversation must alternate between user and assistant roles. Make sure the "
        "conversation alternates between user and assistant roles and try again."
    )


def _blocks(message: dict[str, Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, b[kind]) for i, b in dicts(message.get("content")) if isinstance(b.get(kind), dict)]


def _client_blocks(message: dict[str, Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    """The toolUse / toolResult blocks the caller must pair: not a hosted tool's call
    (``type: "server_tool_use"``) nor its result, which the assistant turn itself holds
    (recording bedrock/pydantic-ai__test_bedrock.test_bedrock_model_with_code_execution_tool__i01)."""
    if message.get("role") == "assistant" and kind == "toolResult":
        return []
    return [(i, b) for i, b in _blocks(message, kind) if b.get("type") != "server_tool_use"]


def tools_listed(req: RecordedRequest) -> Rejection | None:
    """400 for a ``toolConfig`` (a ``toolChoice`` with it) without tools: ToolConfiguration.tools
    is "Required: Yes", "Minimum number of 1 item"
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolConfiguration.html),
    in AWS's constraint wording (as tool_names_valid's)."""
    tool_config = body_of(req).get("toolConfig")
    if not isinstance(tool_config, dict):
        return None
    tools = tool_config.get("tools")
    if tools is None:
        return invalid(
            "1 validation error detected: Value null at 'toolConfig.tools' failed to satisfy "
            "constraint: Member must not be null"
        )
    if isinstance(tools, list) and not tools:
        return invalid(
            "1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1"
        )
    return None


def tool_config_with_tool_history(req: RecordedRequest) -> Rejection | None:
    """400 "The toolConfig field must be defined when using toolUse and toolResult content
    blocks." (quoted in https://github.com/langgenius/dify/issues/17545 and
    https://github.com/vercel/ai/pull/7537)."""
    if body_of(req).get("toolConfig"):
        return None
    for _, message in _messages(req):
        if _blocks(message, "toolUse") or _blocks(message, "toolResult"):
            return invalid(
                "The toolConfig field must be defined when using toolUse and toolResult "
                "content blocks."
            )
    return None


def tool_results_match_uses(req: RecordedRequest) -> Rejection | None:
    """400 when the toolResult blocks of a user turn do not answer the previous turn's
    toolUse blocks: more results than uses ("The number of toolResult blocks at
    messages.2.content exceeds the number of toolUse blocks of previous turn.") or a use
    left unanswered ("Expected toolResult blocks at messages.2.content for the following
    Ids: ..."), as Converse answers (tool-use guide,
    https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html)."""
    messages = _messages(req)
    for position, (index, message) in enumerate(messages):
        previous = messages[position - 1][1] if position else {}
        uses = [str(u.get("toolUseId")) for _, u in _client_blocks(previous, "toolUse")]
        results = [str(r.get("toolUseId")) for _, r in _client_blocks(message, "toolResult")]
        where = f"messages.{index}.content"
        if len(results) > len(uses) or any(r not in uses for r in results):
            return invalid(
                f"The number of toolResult blocks at {where} exceeds the number of toolUse "
                "blocks of previous turn."
            )
        missing = [u for u in uses if u not in results]
        if missing:
            return invalid(
                f"Expected toolResult blocks at {where} for the following Ids: "
                + ", ".join(missing)
            )
    return _last_uses_unanswered(messages)


def _last_uses_unanswered(messages: list[tuple[int, dict[str, Any]]]) -> Rejection | None:
    """A conversation may not end on toolUse blocks either: Converse needs the user turn."""
    if messages and messages[-1][1].get("role") == "assistant":
        uses = [str(u.get("toolUseId")) for _, u in _client_blocks(messages[-1][1], "toolUse")]
        if uses:
            return invalid(
                f"Expected toolResult blocks at messages.{messages[-1][0] + 1}.content for the "
                "following Ids: " + ", ".join(uses)
            )
    return None


def content_not_empty(req: RecordedRequest) -> Rejection | None:
    """400 "The content field in the Message object at messages.3 is empty. Add a
    ContentBlock object to the content field and try again." (quoted in
    https://github.com/langchain-ai/langchain/issues/26968; API reference, Message.content,
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html)."""
    for index, message in _messages(req):
        if not message.get("content"):
            return invalid(
                f"The content field in the Message object at messages.{index} is empty. Add a "
                "ContentBlock object to the content field and try again."
            )
    return None


def text_not_blank(req: RecordedRequest) -> Rejection | None:
    """400 "The text field in the ContentBlock object at messages.15.content.0 is blank."
    (quoted in https://github.com/aws-samples/bedrock-engineer/issues/8). A text of line
    breaks is taken (issue 33 of this project measured real 2xx answers to a newline-only
    block; the 400 above was for an empty one), spaces or tabs alone are blank."""
    for index, message in _messages(req):
        for block_index, block in dicts(message.get("content")):
            text = block.get("text")
            if isinstance(text, str) and not text.strip(" \t"):
                return invalid(
                    f"The text field in the ContentBlock object at messages.{index}.content."
                    f"{block_index} is blank. Add text to the text field, and try again."
                )
    return None


def tool_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a toolSpec name outside ``[a-zA-Z0-9_-]+`` or over 64 characters (API
    reference, ToolSpecification.name: "Length Constraints: Minimum length of 1. Maximum
    length of 64. Pattern: ^[a-zA-Z0-9_-]+$",
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html)."""
    tool_config = body_of(req).get("toolConfig")
    tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
    for index, tool in dicts(tools):
        spec = tool.get("toolSpec")
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(spec, dict):
            continue
        where = f"Value at 'toolConfig.tools.{index + 1}.member.toolSpec.name'"
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            return invalid(
                f"1 validation error detected: {where} failed to satisfy constraint: Member "
                "must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
            )
        if len(name) > TOOL_NAME_MAX:
            return invalid(
                f"1 validation error detected: {where} failed to satisfy constraint: Member "
                "must have length less than or equal to 64"
            )
    return None


def system_tools_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a ``systemTool`` (a hosted tool: Nova's ``nova_grounding``,
    ``nova_code_interpreter``) whose ``name`` is missing or not a tool name: SystemTool.name
    is "Required: Yes", a ToolName (1 to 64 of ``[a-zA-Z0-9_-]``)
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_SystemTool.html),
    in AWS's constraint wording (as tool_names_valid's). An unknown system tool's name is
    not refused here: no source shows what Bedrock answers."""
    tool_config = body_of(req).get("toolConfig")
    tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
    for index, tool in dicts(tools):
        if "systemTool" not in tool:
            continue
        system = tool["systemTool"]
        name = system.get("name") if isinstance(system, dict) else None
        where = f"'toolConfig.tools.{index + 1}.member.systemTool.name'"
        if name is None:
            return invalid(
                f"1 validation error detected: Value null at {where} failed to satisfy "
                "constraint: Member must not be null"
            )
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name) or len(name) > 64:
            return invalid(
                f"1 validation error detected: Value at {where} failed to satisfy "
                "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
            )
    return None


def images_valid(req: RecordedRequest) -> Rejection | None:
    """400 for an image whose format is not gif, jpeg, png or webp, or over 3.75 MB (API
    reference, ImageBlock: "format: gif | jpeg | png | webp"; "The maximum size of an image
    is 3.75 MB",
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html)."""
    for index, message in _messages(req):
        for block_index, image in _images(message):
            where = f"messages.{index + 1}.member.content.{block_index + 1}.member.image"
            if image.get("format") not in IMAGE_FORMATS:
                return invalid(
                    f"1 validation error detected: Value '{image.get('format')}' at '{where}."
                    "format' failed to satisfy constraint: Member must satisfy enum value set: "
                    "[gif, jpeg, png, webp]"
                )
            source = image.get("source")
            data = source.get("bytes") if isinstance(source, dict) else None
            if isinstance(data, str) and base64_size(data) > IMAGE_MAX_BYTES:
                return invalid("The image size exceeds the maximum of 3.75 MB.")
    return None


def _images(message: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    out = list(_blocks(message, "image"))
    for block_index, result in _blocks(message, "toolResult"):
        out.extend((block_index, image) for _, image in _blocks(result, "image"))
    return out


def system_text_not_empty(req: RecordedRequest) -> Rejection | None:
    """400 for an empty system text: SystemContentBlock.text has "Length Constraints: Minimum
    length of 1"
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_SystemContentBlock.html;
    refused as quoted in https://github.com/spring-projects/spring-ai/pull/6209), in AWS's
    constraint wording (as tool_names_valid's)."""
    for index, block in dicts(body_of(req).get("system")):
        if block.get("text") == "":
            return invalid(
                f"1 validation error detected: Value '' at 'system.{index + 1}.member.text' "
                "failed to satisfy constraint: Member must have length greater than or equal to 1"
            )
    return None


def _inference(req: RecordedRequest) -> dict[str, Any]:
    config = body_of(req).get("inferenceConfig")
    return config if isinstance(config, dict) else {}


def temperature_in_range(req: RecordedRequest) -> Rejection | None:
    """400 for an ``inferenceConfig.temperature`` outside 0 to 1 (API reference,
    InferenceConfiguration.temperature: "Valid Range: Minimum value of 0. Maximum value of
    1.", https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InferenceConfiguration.html),
    in AWS's constraint wording."""
    value = number(_inference(req).get("temperature"))
    if value is None or 0 <= value <= 1:
        return None
    bound = "less than or equal to 1" if value > 1 else "greater than or equal to 0"
    return invalid(
        f"1 validation error detected: Value '{value}' at 'inferenceConfig.temperature' failed "
        f"to satisfy constraint: Member must have value {bound}"
    )


def max_tokens_within_model(req: RecordedRequest) -> Rejection | None:
    """400 "The maximum tokens you requested exceeds the model limit of 64000. Try again
    with a maximum tokens value that is lower than 64000." for a Claude model's
    ``inferenceConfig.maxTokens`` over its output limit (the limits are Anthropic's models
    overview, https://docs.anthropic.com/en/docs/about-claude/models/overview, as in
    wires/anthropic/validate.py's MAX_OUTPUT; Bedrock's model parameters page,
    https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html)."""
    from zerda.testing.wires.anthropic.validate import MAX_OUTPUT

    wanted = number(_inference(req).get("maxTokens"))
    model = _model(req)
    limit = next((n for pattern, n in MAX_OUTPUT if pattern.search(model)), None)
    if wanted is None or limit is None or wanted <= limit or not _claude(req):
        return None
    return invalid(
        f"The maximum tokens you requested exceeds the model limit of {limit}. Try again with "
        f"a maximum tokens value that is lower than {limit}."
    )


def thinking_budget_valid(req: RecordedRequest) -> Rejection | None:
    """400 from Claude's validator for a thinking budget under 1024 tokens, passed in
    ``additionalModelRequestFields.thinking`` (extended-thinking on Bedrock,
    https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html:
    "The minimum budget_tokens is 1,024"; the message is the Messages API's,
    wires/anthropic/validate.py thinking_budget_valid)."""
    extra = body_of(req).get("additionalModelRequestFields")
    thinking = extra.get("thinking") if isinstance(extra, dict) else None
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = number(thinking.get("budget_tokens"))
    if budget is None or budget >= THINKING_BUDGET_MIN:
        return None
    return _model_error(
        "thinking.enabled.budget_tokens: Input should be greater than or equal to "
        f"{THINKING_BUDGET_MIN}"
    )


def _tool_specs(req: RecordedRequest) -> Iterator[tuple[int, dict[str, Any]]]:
    tool_config = body_of(req).get("toolConfig")
    tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
    for index, tool in dicts(tools):
        if isinstance(tool.get("toolSpec"), dict):
            yield index, tool["toolSpec"]


def tool_schemas_valid(req: RecordedRequest) -> Rejection | None:
    """400 "The value at toolConfig.tools.3.toolSpec.inputSchema.json.type must be one of
    the following: object." for an input schema whose root is not an object schema (quoted
    in https://github.com/aaif-goose/goose/pull/5064 and
    https://github.com/earendil-works/pi/issues/8279, a root without ``type``); on Claude
    models a schema breaking JSON Schema draft 2020-12 gets Claude's answer ("The model
    returned the following errors: tools.18.custom.input_schema: JSON schema is invalid. It
    must match JSON Schema draft 2020-12", quoted in
    https://github.com/acomagu/vscode-as-mcp-server/issues/6)."""
    for index, spec in _tool_specs(req):
        schema = spec.get("inputSchema")
        schema = schema.get("json") if isinstance(schema, dict) else None
        if not isinstance(schema, dict):
            continue
        if schema.get("type") != "object":
            return invalid(
                f"The value at toolConfig.tools.{index}.toolSpec.inputSchema.json.type must be "
                "one of the following: object."
            )
        if _claude(req) and schema_error(schema) is not None:
            return _model_error(
                f"tools.{index}.custom.input_schema: JSON schema is invalid. It must match JSON "
                "Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about "
                "tool use at https://docs.anthropic.com/en/docs/tool-use."
            )
    return None


def _cache_points(body: dict[str, Any]) -> int:
    blocks = [b for _, b in dicts(body.get("system"))]
    tool_config = body.get("toolConfig")
    blocks += [
        t for _, t in dicts(tool_config.get("tools") if isinstance(tool_config, dict) else None)
    ]
    for _, message in dicts(body.get("messages")):
        blocks += [b for _, b in dicts(message.get("content"))]
    return sum(1 for b in blocks if isinstance(b.get("cachePoint"), dict))


def cache_points_within_limit(req: RecordedRequest) -> Rejection | None:
    """400 for more than four ``cachePoint`` blocks (prompt-caching guide: "up to 4 cache
    checkpoints", https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html;
    Claude's validator answers as on the Messages API, "A maximum of 4 blocks with
    cache_control may be provided. Found 5.", quoted in
    https://github.com/tghamm/Anthropic.SDK/issues/50)."""
    found = _cache_points(body_of(req))
    if found <= CACHE_POINTS_MAX:
        return None
    return _model_error(
        f"A maximum of {CACHE_POINTS_MAX} blocks with cache_control may be provided. Found {found}."
    )


CONVERSE_RULES: tuple[Rule, ...] = (
    signed,
    json_object_body,
    starts_with_user,
    roles_alternate,
    content_not_empty,
    temperature_in_range,
    max_tokens_within_model,
    thinking_budget_valid,
    tools_listed,
    tool_config_with_tool_history,
    tool_results_match_uses,
    text_not_blank,
    system_text_not_empty,
    tool_names_valid,
    system_tools_valid,
    tool_schemas_valid,
    cache_points_within_limit,
    images_valid,
)


# --- CountTokens (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html)

COUNT_INPUTS = ("converse", "invokeModel")


def count_input_given(req: RecordedRequest) -> Rejection | None:
    """400 for a CountTokens body without ``input``, or whose ``input`` (a CountTokensInput
    union) sets other than exactly one of ``converse`` and ``invokeModel`` (``input`` is
    required: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html;
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokensInput.html:
    "This is a Union type object. Only one member of this object can be specified or
    returned."). AWS's answer to a null required member, worded as tool_names_valid's."""
    given = body_of(req).get("input")
    if not isinstance(given, dict):
        return invalid(
            "1 validation error detected: Value null at 'input' failed to satisfy "
            "constraint: Member must not be null"
        )
    if len([k for k in COUNT_INPUTS if given.get(k) is not None]) != 1:
        return invalid("input: exactly one of converse and invokeModel must be set")
    return None


def _converse(rule: Rule) -> Rule:
    """``rule`` of Converse, checked on a CountTokens body's ``input.converse``
    (ConverseTokensRequest: Converse's messages, system and toolConfig)."""

    def counted(req: RecordedRequest) -> Rejection | None:
        converse = (body_of(req).get("input") or {}).get("converse")
        return rule(replace(req, body=converse)) if isinstance(converse, dict) else None

    counted.__name__ = rule.__name__
    counted.__doc__ = rule.__doc__
    return counted


COUNT_RULES: tuple[Rule, ...] = (
    signed,
    json_object_body,
    count_input_given,
    *(_converse(rule) for rule in CONVERSE_RULES[CONVERSE_RULES.index(starts_with_user) :]),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path.endswith("/count-tokens"):
        return COUNT_RULES
    return CONVERSE_RULES if "/converse" in req.path else ()
