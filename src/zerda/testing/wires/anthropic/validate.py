"""What Anthropic's ``POST /v1/messages`` refuses, one rule per function.

Errors are ``{"type": "error", "error": {"type", "message"}, "request_id"}`` (recording
anthropic/pydantic-ai__test_anthropic.test_anthropic_explicit_effort_xhigh_unsupported_model_errors__i00);
messages name the field the way the API's validator does (``messages.1.content.0``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import (
    Rejection,
    Rule,
    base64_size,
    body_of,
    dicts,
    has_header,
    image_format,
    list_of,
    number,
    schema_error,
    shown,
)
from zerda.testing.wires.anthropic.hosted_rules import (
    API_HOSTED_RULES,
    SERVER_TOOL_RULES,
    api_tool_types_known,
)

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_MAX_BYTES = 5 * 1024 * 1024
CACHE_POINTS_MAX = 4
THINKING_BUDGET_MIN = 1024

# Each model's most output tokens, from the models overview's "Max output" row
# (https://docs.anthropic.com/en/docs/about-claude/models/overview) and its legacy-model
# table; the first pattern found in the model id decides. Models not listed are not checked.
MAX_OUTPUT = (
    (re.compile(r"claude-3-7-sonnet"), 64000),
    (re.compile(r"claude-3-5-(sonnet|haiku)"), 8192),
    (re.compile(r"claude-3-(haiku|opus|sonnet)"), 4096),
    (re.compile(r"claude-opus-4-6"), 128000),
    (re.compile(r"claude-opus-4-5"), 64000),
    (re.compile(r"claude-opus-4(-[01])?(-\d{8}|@|$|-v\d)"), 32000),
    (re.compile(r"claude-(sonnet|haiku)-4(-[056])?(-\d{8}|@|$|-v\d)"), 64000),
)
# The beta header that lifts claude-3-7-sonnet to 128k output tokens (models overview).
OUTPUT_128K_BETA = "output-128k"


@dataclass
class Turn:
    """Consecutive messages of one role: their first index, the role, every block with
    where it is (``messages.3.content.0``)."""

    index: int
    role: Any
    blocks: list[tuple[str, dict[str, Any]]]


def invalid(message: str) -> Rejection:
    return Rejection(400, message, "invalid_request_error")


def version_header_present(req: RecordedRequest) -> Rejection | None:
    """400 "anthropic-version: header is required" without the ``anthropic-version``
    header (versioning page, https://docs.anthropic.com/en/api/versioning: "When making API
    requests, you must send an anthropic-version request header"; the body is quoted in
    https://github.com/envoyproxy/ai-gateway/pull/1909)."""
    if has_header(req, "anthropic-version"):
        return None
    return invalid("anthropic-version: header is required")


def api_key_present(req: RecordedRequest) -> Rejection | None:
    """401 ``authentication_error`` "x-api-key header is required" without ``x-api-key``
    (or an OAuth ``Authorization``). Errors page: https://docs.anthropic.com/en/api/errors
    (401 authentication_error)."""
    if has_header(req, "x-api-key", "authorization"):
        return None
    return Rejection(401, "x-api-key header is required", "authentication_error")


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """400 for a body that is not a JSON object (errors page: invalid_request_error,
    "There was an issue with the format or content of your request",
    https://docs.anthropic.com/en/api/errors)."""
    return None if isinstance(req.body, dict) else invalid("Request body is not valid JSON")


def _required(field: str) -> Rule:
    def rule(req: RecordedRequest) -> Rejection | None:
        return None if field in body_of(req) else invalid(f"{field}: Field required")

    rule.__name__ = f"{field}_present"
    rule.__doc__ = (
        f'400 "{field}: Field required" (API reference: ``{field}`` is required,'
        " https://docs.anthropic.com/en/api/messages; the max_tokens body is quoted in"
        " https://github.com/tickernelz/opencode-mem/issues/50)."
    )
    return rule


model_present = _required("model")
max_tokens_present = _required("max_tokens")
messages_present = _required("messages")


def roles_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a message role other than user and assistant, or ``system`` first (the
    system prompt is the top-level ``system`` field; API reference, ``messages[].role``,
    https://docs.anthropic.com/en/api/messages). A ``system`` message later in the
    conversation is taken: "Mid-conversation system messages", Claude 4.8's release notes
    quoted in https://github.com/simonw/llm-anthropic/issues/73; recording
    anthropic/pydantic-ai__test_anthropic_mid_conversation_system.test_native_tool_availability_delta__i00)."""
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if role not in ("user", "assistant") and not (role == "system" and index > 0):
            return invalid(f"messages.{index}.role: Input should be 'user' or 'assistant'")
    return None


def content_not_empty(req: RecordedRequest) -> Rejection | None:
    """400 "all messages must have non-empty content except for the optional final
    assistant message" (API reference: an empty final assistant turn is the only empty
    message allowed, https://docs.anthropic.com/en/api/messages)."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (index, message) in enumerate(messages):
        content = message.get("content")
        last_assistant = position == len(messages) - 1 and message.get("role") == "assistant"
        if content in ("", []) and not last_assistant:
            return invalid(
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
    return None


def _blocks(message: dict[str, Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, b) for i, b in dicts(message.get("content")) if b.get("type") == kind]


def _turns(req: RecordedRequest) -> list[Turn]:
    """The conversation as the API reads it: consecutive messages of one role are one turn
    (API reference, ``messages``: "consecutive user or assistant turns in your request will
    be combined into a single turn", https://docs.anthropic.com/en/api/messages; recording
    anthropic/pydantic-ai__test_tool_search.test_cross_provider_capability_replay_anthropic-claude-sonnet-4-5-openai-responses-gpt-5.4__i01
    has two assistant messages before their results), ``system`` messages left out."""
    turns: list[Turn] = []
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if role == "system":
            continue
        blocks = [(f"messages.{index}.content.{i}", b) for i, b in dicts(message.get("content"))]
        if turns and turns[-1].role == role:
            turns[-1].blocks.extend(blocks)
        else:
            turns.append(Turn(index, role, blocks))
    return turns


def _of(turn: Turn | None, kind: str) -> list[tuple[str, dict[str, Any]]]:
    return [(where, b) for where, b in (turn.blocks if turn else []) if b.get("type") == kind]


def tool_results_follow_uses(req: RecordedRequest) -> Rejection | None:
    """400 for a ``tool_result`` whose ``tool_use_id`` is not a ``tool_use`` of the
    previous turn ("unexpected `tool_use_id` found in `tool_result` blocks ... Each
    `tool_result` block must have a corresponding `tool_use` block in the previous
    message", tool-use guide https://docs.anthropic.com/en/docs/build-with-claude/tool-use)."""
    turns = _turns(req)
    for position, turn in enumerate(turns):
        previous = turns[position - 1] if position else None
        uses = {str(b.get("id")) for _, b in _of(previous, "tool_use")}
        for where, block in _of(turn, "tool_result"):
            if str(block.get("tool_use_id")) not in uses:
                return invalid(
                    f"{where}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the previous message."
                )
    return None


def tool_uses_answered(req: RecordedRequest) -> Rejection | None:
    """400 when a ``tool_use`` has no ``tool_result`` in the next turn ("`tool_use` ids
    were found without `tool_result` blocks immediately after", tool-use guide
    https://docs.anthropic.com/en/docs/build-with-claude/tool-use). A final
    assistant turn may end with tool uses: nothing follows it yet."""
    turns = _turns(req)
    for position, turn in enumerate(turns[:-1]):
        uses = [str(b.get("id")) for _, b in _of(turn, "tool_use")]
        following = turns[position + 1]
        answered = {str(b.get("tool_use_id")) for _, b in _of(following, "tool_result")}
        missing = [u for u in uses if u not in answered]
        if missing:
            return invalid(
                f"messages.{following.index}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message."
            )
    return None


def tool_results_first(req: RecordedRequest) -> Rejection | None:
    """400 when the turn answering tool uses does not begin with its ``tool_result``
    blocks (tool-use guide: "the tool_result blocks must come FIRST in the content array.
    Any text must come AFTER all tool results",
    https://docs.anthropic.com/en/docs/build-with-claude/tool-use/implement-tool-use; the
    answer "Did not find 1 `tool_result` block(s) at the beginning of this message" is
    quoted in https://github.com/Zoo-Code-Org/Zoo-Code/pull/1705)."""
    turns = _turns(req)
    for position, turn in enumerate(turns[1:], start=1):
        wanted = len(_of(turns[position - 1], "tool_use"))
        if not wanted or turn.role != "user":
            continue
        kinds = [b.get("type") for _, b in turn.blocks]
        leading = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
        if leading < kinds.count("tool_result"):
            return invalid(
                f"messages.{turn.index}: Did not find {wanted} `tool_result` block(s) at the "
                "beginning of this message. Messages following `tool_use` blocks must begin "
                "with a matching number of `tool_result` blocks."
            )
    return None


def tool_use_ids_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a ``tool_use`` id outside ``^[a-zA-Z0-9_-]+$`` (API reference,
    ``ToolUseBlockParam.id``, https://docs.anthropic.com/en/api/messages)."""
    for index, message in dicts(body_of(req).get("messages")):
        for block_index, block in _blocks(message, "tool_use"):
            call_id = block.get("id")
            if not isinstance(call_id, str) or not TOOL_USE_ID.fullmatch(call_id):
                return invalid(
                    f"messages.{index}.content.{block_index}.tool_use.id: String should match "
                    "pattern '^[a-zA-Z0-9_-]+$'"
                )
    return None


def tool_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a custom tool name outside ``^[a-zA-Z0-9_-]{1,64}$`` (tool-use guide:
    "name: The name of the tool. Must match the regex ^[a-zA-Z0-9_-]{1,64}$",
    https://docs.anthropic.com/en/docs/build-with-claude/tool-use)."""
    for index, tool in dicts(body_of(req).get("tools")):
        if tool.get("type") not in (None, "custom"):
            continue  # server tools (web_search_20250305...) have fixed names
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            return invalid(
                f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
    return None


def images_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a base64 image whose media type is not jpeg, png, gif or webp, or whose
    data is over 5 MB (vision guide, https://docs.anthropic.com/en/docs/build-with-claude/vision:
    "supported formats: image/jpeg, image/png, image/gif, image/webp"; "maximum 5MB per
    image" on the API). Bytes of another format than the declared one are refused too:
    "Image does not match the provided media type image/png", quoted in
    https://github.com/anthropics/claude-code/issues/13131."""
    for index, message in dicts(body_of(req).get("messages")):
        for path, block in _image_blocks(message, f"messages.{index}.content"):
            source = block.get("source")
            if not isinstance(source, dict) or source.get("type") != "base64":
                continue
            if source.get("media_type") not in IMAGE_TYPES:
                return invalid(
                    f"{path}.image.source.base64.media_type: Input should be 'image/jpeg', "
                    "'image/png', 'image/gif' or 'image/webp'"
                )
            found = image_format(source.get("data"))
            if found is not None and f"image/{found}" != source.get("media_type"):
                return invalid(
                    f"{path}.image.source.base64.data: Image does not match the provided media "
                    f"type {source.get('media_type')}"
                )
            size = _decoded_size(source.get("data"))
            if size > IMAGE_MAX_BYTES:
                return invalid(
                    f"{path}.image.source.base64: image exceeds 5 MB maximum: {size} bytes > "
                    f"{IMAGE_MAX_BYTES} bytes"
                )
    return None


def _image_blocks(message: dict[str, Any], prefix: str) -> list[tuple[str, dict[str, Any]]]:
    """Image blocks of a message, tool results' nested content included."""
    out = []
    for i, block in dicts(message.get("content")):
        if block.get("type") == "image":
            out.append((f"{prefix}.{i}", block))
        elif block.get("type") == "tool_result":
            nested = {"content": list_of(block.get("content"))}
            out.extend(_image_blocks(nested, f"{prefix}.{i}.content"))
    return out


def _decoded_size(data: Any) -> int:
    return base64_size(data) if isinstance(data, str) else 0


FORCED_TOOL_CHOICES = ("any", "tool")
THINKING_FORCED = "Thinking may not be enabled when tool_choice forces tool use."


def forces_tool_while_thinking(body: dict[str, Any], kinds: tuple[str, ...]) -> bool:
    """Whether ``body`` asks for thinking of one of ``kinds`` with a forced tool_choice."""
    thinking, choice = body.get("thinking"), body.get("tool_choice")
    return (
        isinstance(thinking, dict)
        and thinking.get("type") in kinds
        and isinstance(choice, dict)
        and choice.get("type") in FORCED_TOOL_CHOICES
    )


def thinking_allows_tool_choice(req: RecordedRequest) -> Rejection | None:
    """400 "Thinking may not be enabled when tool_choice forces tool use." for budget
    thinking (``"type": "enabled"``) with ``tool_choice`` ``any`` or a named tool: "Tool use
    with thinking only supports tool_choice: {"type": "auto"} ... or {"type": "none"}"
    (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#extended-thinking-with-tool-use;
    the answer is quoted in https://github.com/can1357/oh-my-pi/issues/341 and
    https://github.com/Alcova-AI/adk-anthropic-go/pull/23). Adaptive thinking with a forced
    tool_choice is refused alike (the same two reports), but for claude-opus-4-6: recorded
    exchanges
    (anthropic/pydantic-ai__test_anthropic.test_anthropic_opus_46_adaptive_thinking_accepts_tool_output_unified__i00)
    got 200 and the forced tool call."""
    body = body_of(req)
    if forces_tool_while_thinking(body, ("enabled",)):
        return invalid(THINKING_FORCED)
    if forces_tool_while_thinking(body, ("adaptive",)) and not ADAPTIVE_TAKES_FORCED.search(
        _model(req)
    ):
        return invalid(THINKING_FORCED)
    return None


# The models whose adaptive thinking takes a forced tool_choice on the Messages API (the
# library's anthropic row says the same: Traits.forced_tool_with_adaptive).
ADAPTIVE_TAKES_FORCED = re.compile(r"claude-opus-4-6")


def _model(req: RecordedRequest) -> str:
    """The model: the body's, else the path's (Bedrock's and Vertex AI's URLs name it)."""
    model = body_of(req).get("model")
    return model if isinstance(model, str) else req.path


def max_tokens_within_model(req: RecordedRequest) -> Rejection | None:
    """400 "max_tokens: 100000 > 64000, which is the maximum allowed number of output
    tokens for claude-sonnet-4-5" for ``max_tokens`` over the model's output limit (models
    overview, "Max output", https://docs.anthropic.com/en/docs/about-claude/models/overview;
    claude-3-7-sonnet takes 128k with the ``output-128k-2025-02-19`` beta header)."""
    wanted = number(body_of(req).get("max_tokens"))
    model = _model(req)
    limit = next((n for pattern, n in MAX_OUTPUT if pattern.search(model)), None)
    if wanted is None or limit is None or wanted <= limit:
        return None
    if OUTPUT_128K_BETA in req.headers.get("anthropic-beta", "") and wanted <= 128000:
        return None
    return invalid(
        f"max_tokens: {shown(wanted)} > {limit}, which is the maximum allowed number of output "
        f"tokens for {model}"
    )


def temperature_in_range(req: RecordedRequest) -> Rejection | None:
    """400 for a ``temperature`` outside 0 to 1 (API reference, ``temperature``: "Ranges
    from 0.0 to 1.0", https://docs.anthropic.com/en/api/messages); the message is the
    validator's usual bound answer, as for ``budget_tokens``."""
    value = number(body_of(req).get("temperature"))
    if value is None or 0 <= value <= 1:
        return None
    bound = "less than or equal to 1" if value > 1 else "greater than or equal to 0"
    return invalid(f"temperature: Input should be {bound}")


def thinking_budget_valid(req: RecordedRequest) -> Rejection | None:
    """400 "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    (API reference, ``thinking.budget_tokens``: "Must be ≥1024 and less than max_tokens",
    https://docs.anthropic.com/en/api/messages; extended-thinking guide,
    https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking)."""
    thinking = body_of(req).get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = number(thinking.get("budget_tokens"))
    if budget is None or budget >= THINKING_BUDGET_MIN:
        return None
    return invalid(
        "thinking.enabled.budget_tokens: Input should be greater than or equal to "
        f"{THINKING_BUDGET_MIN}"
    )


def _text_blocks(message: dict[str, Any]) -> list[Any]:
    """The texts of a message: its string content, or its text blocks' ``text``."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text") for _, b in dicts(content) if b.get("type") == "text"]


def text_blocks_valid(req: RecordedRequest) -> Rejection | None:
    """400 "messages: text content blocks must be non-empty" for an empty text block, and
    "messages: text content blocks must contain non-whitespace text" for a message whose
    only content is whitespace text. Bodies quoted in
    https://github.com/anthropics/claude-code/issues/59812 and
    https://github.com/anthropics/claude-code/issues/23369; which shapes are refused (a
    whitespace block beside real text is taken) was measured in
    https://github.com/LibreChat-AI/agents/pull/124. The final assistant message is
    trailing_whitespace_valid's."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (_, message) in enumerate(messages):
        texts = _text_blocks(message)
        if any(t == "" for t in texts if isinstance(message.get("content"), list)):
            return invalid("messages: text content blocks must be non-empty")
        final = position == len(messages) - 1 and message.get("role") == "assistant"
        content = message.get("content")
        only_text = isinstance(content, str) or len(texts) == len(list_of(content))
        joined = "".join(t for t in texts if isinstance(t, str))
        if only_text and not final and joined and not joined.strip():
            return invalid("messages: text content blocks must contain non-whitespace text")
    return None


def trailing_whitespace_valid(req: RecordedRequest) -> Rejection | None:
    """400 "messages: final assistant content cannot end with trailing whitespace" when
    the last message is an assistant prefill ending in whitespace (body quoted in
    https://github.com/tailcallhq/forgecode/issues/1872; prefill guide,
    https://docs.anthropic.com/en/docs/build-with-claude/prompt-engineering/prefill-claudes-response)."""
    messages = list_of(body_of(req).get("messages"))
    last = messages[-1] if messages else None
    if not isinstance(last, dict) or last.get("role") != "assistant":
        return None
    content = last.get("content")
    blocks = list(dicts(content))
    text = content if isinstance(content, str) else None
    if blocks and blocks[-1][1].get("type") == "text":
        text = blocks[-1][1].get("text")
    if isinstance(text, str) and text and text != text.rstrip():
        return invalid("messages: final assistant content cannot end with trailing whitespace")
    return None


def _cache_blocks(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every block that may carry ``cache_control``: system, tools, message blocks and the
    blocks inside tool results."""
    yield from (b for _, b in dicts(body.get("system")))
    yield from (t for _, t in dicts(body.get("tools")))
    for _, message in dicts(body.get("messages")):
        for _, block in dicts(message.get("content")):
            yield block
            yield from (b for _, b in dicts(block.get("content")))


def cache_points_within_limit(req: RecordedRequest) -> Rejection | None:
    """400 "A maximum of 4 blocks with cache_control may be provided. Found 5." (prompt
    caching guide: "You can define up to 4 cache breakpoints",
    https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching; body quoted in
    https://github.com/tghamm/Anthropic.SDK/issues/50)."""
    found = sum(1 for b in _cache_blocks(body_of(req)) if b.get("cache_control"))
    if found <= CACHE_POINTS_MAX:
        return None
    return invalid(
        f"A maximum of {CACHE_POINTS_MAX} blocks with cache_control may be provided. Found {found}."
    )


def tool_names_unique(req: RecordedRequest) -> Rejection | None:
    """400 "tools: Tool names must be unique." (body quoted in
    https://github.com/microsoft/vscode/issues/278073 and
    https://github.com/danny-avila/LibreChat/issues/13162)."""
    names = [t.get("name") for _, t in dicts(body_of(req).get("tools")) if "name" in t]
    if len(names) == len({str(n) for n in names}):
        return None
    return invalid("tools: Tool names must be unique.")


def tool_use_ids_unique(req: RecordedRequest) -> Rejection | None:
    """400 "messages.1.content.1: `tool_use` ids must be unique" for two ``tool_use``
    blocks of one turn with the same id (body quoted in
    https://github.com/trycua/cua/issues/524)."""
    for turn in _turns(req):
        seen: set[str] = set()
        for where, block in _of(turn, "tool_use"):
            if str(block.get("id")) in seen:
                return invalid(f"{where}: `tool_use` ids must be unique")
            seen.add(str(block.get("id")))
    return None


def tool_schemas_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a custom tool whose ``input_schema`` is not an object schema
    ("tools.0.custom.input_schema.type: Input should be 'object'") or breaks JSON Schema
    draft 2020-12 (tool-use guide: ``input_schema`` is "A JSON Schema object",
    https://docs.anthropic.com/en/docs/build-with-claude/tool-use; the metaschema answer
    "JSON schema is invalid. It must match JSON Schema draft 2020-12" is quoted in
    https://github.com/anthropics/claude-code/issues/7365)."""
    for index, tool in dicts(body_of(req).get("tools")):
        if tool.get("type") not in (None, "custom"):
            continue
        schema = tool.get("input_schema")
        where = f"tools.{index}.custom.input_schema"
        if not isinstance(schema, dict):
            return invalid(f"{where}: Field required" if schema is None else f"{where}: Input "
                           "should be a valid dictionary")  # fmt: skip
        if schema.get("type") != "object":
            return invalid(f"{where}.type: Input should be 'object'")
        if schema_error(schema) is not None:
            return invalid(
                f"{where}: JSON schema is invalid. It must match JSON Schema draft 2020-12 "
                "(https://json-schema.org/draft/2020-12). Learn more about tool use at "
                "https://docs.anthropic.com/en/docs/tool-use."
            )
    return None


MESSAGES_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    max_tokens_present,
    messages_present,
    max_tokens_within_model,
    temperature_in_range,
    thinking_budget_valid,
    roles_valid,
    content_not_empty,
    text_blocks_valid,
    trailing_whitespace_valid,
    tool_results_follow_uses,
    tool_uses_answered,
    tool_results_first,
    tool_use_ids_valid,
    tool_use_ids_unique,
    tool_names_valid,
    tool_names_unique,
    tool_schemas_valid,
    cache_points_within_limit,
    images_valid,
    thinking_allows_tool_choice,
    *SERVER_TOOL_RULES,  # names, domains and uses of server tools (hosted_rules.py)
)


# The generation settings of a Messages request, which POST /v1/messages/count_tokens has
# no field for (its body: model, messages, system, tools, tool_choice, thinking...).
NOT_COUNTED = (
    "max_tokens",
    "stream",
    "stop_sequences",
    "temperature",
    "top_p",
    "top_k",
    "metadata",
    "service_tier",
)


def count_fields_known(req: RecordedRequest) -> Rejection | None:
    """400 "max_tokens: Extra inputs are not permitted" for a generation setting sent to
    the counting endpoint (API reference, https://docs.anthropic.com/en/api/messages-count-tokens,
    lists no such field; the answer is quoted in https://github.com/Wei-Shaw/sub2api/pull/4913)."""
    body = body_of(req)
    for field in NOT_COUNTED:
        if field in body:
            return invalid(f"{field}: Extra inputs are not permitted")
    return None


# POST /v1/messages/count_tokens: the Messages rules on the history and tools, ``model``
# and ``messages`` required, no ``max_tokens`` (API reference above).
COUNT_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    messages_present,
    count_fields_known,
    *MESSAGES_RULES[MESSAGES_RULES.index(roles_valid) :],
)

# On api.anthropic.com the ``anthropic-version`` header is required (Bedrock and Vertex AI
# take the version in the body: their wires' rules).
# Its own tool types and the MCP connector are api.anthropic.com's (hosted_rules.py).
API_MESSAGES_RULES: tuple[Rule, ...] = (
    api_key_present,
    version_header_present,
    *MESSAGES_RULES[1:],
    *API_HOSTED_RULES,
)
API_COUNT_RULES: tuple[Rule, ...] = (
    api_key_present,
    version_header_present,
    *COUNT_RULES[1:],
    api_tool_types_known,
)
_RULES_BY_PATH = {"/v1/messages": API_MESSAGES_RULES, "/v1/messages/count_tokens": API_COUNT_RULES}


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return _RULES_BY_PATH.get(req.path, ())
