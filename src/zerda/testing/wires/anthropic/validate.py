"""What Anthropic's ``POST /v1/messages`` refuses, one rule per function.

Errors are ``{"type": "error", "error": {"type", "message"}, "request_id"}`` (recording
anthropic/pydantic-ai__test_anthropic.test_anthropic_explicit_effort_xhigh_unsupported_model_errors__i00);
messages name the field the way the API's validator does (``messages.1.content.0``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import (
    Rejection,
    Rule,
    base64_size,
    body_of,
    dicts,
    has_header,
    list_of,
)

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_MAX_BYTES = 5 * 1024 * 1024


def invalid(message: str) -> Rejection:
    return Rejection(400, message, "invalid_request_error")


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
    """400 for a message role other than user and assistant (the system prompt is the
    top-level ``system`` field; API reference, ``messages[].role``,
    https://docs.anthropic.com/en/api/messages)."""
    for index, message in dicts(body_of(req).get("messages")):
        if message.get("role") not in ("user", "assistant"):
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


def tool_results_follow_uses(req: RecordedRequest) -> Rejection | None:
    """400 for a ``tool_result`` whose ``tool_use_id`` is not a ``tool_use`` of the
    previous message ("unexpected `tool_use_id` found in `tool_result` blocks ... Each
    `tool_result` block must have a corresponding `tool_use` block in the previous
    message", tool-use guide https://docs.anthropic.com/en/docs/build-with-claude/tool-use)."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (index, message) in enumerate(messages):
        previous = messages[position - 1][1] if position else {}
        uses = {str(b.get("id")) for _, b in _blocks(previous, "tool_use")}
        for block_index, block in _blocks(message, "tool_result"):
            if str(block.get("tool_use_id")) not in uses:
                return invalid(
                    f"messages.{index}.content.{block_index}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the previous message."
                )
    return None


def tool_uses_answered(req: RecordedRequest) -> Rejection | None:
    """400 when a ``tool_use`` has no ``tool_result`` in the next message ("`tool_use` ids
    were found without `tool_result` blocks immediately after", tool-use guide
    https://docs.anthropic.com/en/docs/build-with-claude/tool-use). A final
    assistant message may end with tool uses: nothing follows it yet."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (index, message) in enumerate(messages[:-1]):
        uses = [str(b.get("id")) for _, b in _blocks(message, "tool_use")]
        following = messages[position + 1][1]
        answered = {str(b.get("tool_use_id")) for _, b in _blocks(following, "tool_result")}
        missing = [u for u in uses if u not in answered]
        if missing:
            return invalid(
                f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
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
    image" on the API)."""
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


MESSAGES_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    max_tokens_present,
    messages_present,
    roles_valid,
    content_not_empty,
    tool_results_follow_uses,
    tool_uses_answered,
    tool_use_ids_valid,
    tool_names_valid,
    images_valid,
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return MESSAGES_RULES if req.path == "/v1/messages" else ()
