"""Bedrock's Converse mapping: the unified history, parts, tools, options and reasoning as
Converse fields, and the answer's pieces (usage, reasoning blocks, stop reasons) back.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from zerda.llm._request import Request
from zerda.llm.errors import (
    InvalidRequestError,
)
from zerda.llm.messages import tool_output_text
from zerda.llm.parts import b64decode, is_parts
from zerda.llm.tools import to_bedrock_tools
from zerda.llm.usage import make_usage, plus
from zerda.llm.wires.bedrock.hosted import (
    history_server_names,
    is_server_use,
    map_hosted,
    native_content,
    replay_content,
    system_tool_names,
    tool_use,
)

if TYPE_CHECKING:
    from zerda.llm.reasoning import Plan

# maxTokens sent on top of a thinking budget when the call gives none (the budget must be
# below maxTokens).
DEFAULT_MAX_TOKENS = 4096

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
}


# --- messages -------------------------------------------------------------------------


def _map_messages(
    messages: list[dict[str, Any]],
    name_pattern: str,
    replays: Callable[[dict[str, Any]], bool] | None = None,
) -> list[dict[str, Any]]:
    """Converse messages: strict user/assistant alternation (consecutive same-role turns
    merged, tool results in the user turn that follows the calls), no empty blocks.
    ``replays``: whether an assistant message's kept answer blocks go back as they came
    (the interface's ``_replays_hosted``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = _map_message(message, name_pattern, replays)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # our own fresh list: no copy per merge
        else:
            out.append({"role": role, "content": blocks})
    if not out:
        raise InvalidRequestError("messages: Bedrock needs at least one non-empty message")
    return out


def _map_message(
    message: dict[str, Any],
    name_pattern: str,
    replays: Callable[[dict[str, Any]], bool] | None = None,
) -> list[dict[str, Any]]:
    """The content blocks of one unified message (a cache point after them with
    ``cache=True``)."""
    if message["role"] == "assistant" and replays is not None and replays(message):
        blocks = _map_kept_answer(message, name_pattern)
    else:
        blocks = _map_blocks(message, name_pattern)
    return [*blocks, _CACHE_POINT] if message.get("cache_after") and blocks else blocks


def _map_kept_answer(message: dict[str, Any], name_pattern: str) -> list[dict[str, Any]]:
    """An answer that held hosted-tool blocks or citations, sent back as it came
    (hosted.replay_content), its function calls checked as any others."""
    _check_call_names(message, name_pattern)
    content = native_content(message.get("provider_data")) or []
    return replay_content(content, message["tool_calls"], _replay_reasoning_block)


def _check_call_names(message: dict[str, Any], name_pattern: str) -> None:
    name_ok = _name_rule(name_pattern)
    for j, call in enumerate(message["tool_calls"]):
        if not name_ok(call["name"]):
            raise InvalidRequestError(
                f"messages: an assistant message calls a tool named {call['name']!r} "
                f"(tool_calls[{j}]), which bedrock refuses: tool names must match {name_pattern}"
            )


def _map_blocks(message: dict[str, Any], name_pattern: str) -> list[dict[str, Any]]:
    role = message["role"]
    if role == "tool":
        return _map_tool_blocks(message)
    text = message.get("content")
    if isinstance(text, list):
        return _map_parts(text)
    blocks: list[dict[str, Any]] = (
        [{"text": text}] if isinstance(text, str) and text and not text.isspace() else []
    )
    if role != "assistant":
        return blocks
    _check_call_names(message, name_pattern)
    blocks += [tool_use(call) for call in message["tool_calls"]]
    # Signed reasoning goes back first, before the text and toolUse blocks (Claude's
    # extended thinking with tools requires it).
    provider_data = message.get("provider_data")
    return [*_replay_reasoning(provider_data), *blocks] if provider_data else blocks


@functools.lru_cache(maxsize=8)
def _name_rule(pattern: str) -> Callable[[str], Any]:
    """The row's tool-name rule, compiled once: a name matches it in full or not at all."""
    return re.compile(pattern).fullmatch


def _map_tool_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A toolResult block; a cache point among its parts goes after it (toolResult content
    takes none: ToolResultContentBlock has text, json, image, document, video)."""
    output = message["content"]
    result = _map_tool_result(message)
    cached = (
        isinstance(output, list)
        and any(isinstance(p, dict) and p.get("type") == "cache_point" for p in output)
        and is_parts(output)
    )
    return [result, _CACHE_POINT] if cached else [result]


def _map_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    output = message["content"]
    if isinstance(output, list) and is_parts(output):
        content = _map_parts([p for p in output if p["type"] != "cache_point"])
    else:
        content = [_map_tool_output(output)]
    result: dict[str, Any] = {
        "toolUseId": message["tool_call_id"],
        "content": content or [{"text": "(empty)"}],
    }
    if message.get("is_error"):
        result["status"] = "error"
    return {"toolResult": result}


# --- content parts ----------------------------------------------------------------------

_CACHE_POINT = {"cachePoint": {"type": "default"}}
# ImageFormat, DocumentFormat and AudioFormat of the Converse API
# (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html).
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_AUDIO_FORMATS = {
    "audio/mpeg": "mp3",
    "audio/wav": "wav",
    "audio/flac": "flac",
    "audio/ogg": "ogg",
    "audio/aac": "aac",
    "audio/mp4": "m4a",
    "audio/webm": "webm",
}
# DocumentBlock.name: alphanumerics, single whitespace, hyphens, parentheses, brackets.
_NAME_BAD = re.compile(r"[^a-zA-Z0-9\s\-()\[\]]+")


def _map_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content parts as Converse blocks; nameless documents numbered in order."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        blocks += _map_part(part, sum(1 for b in blocks if "document" in b) + 1)
    return blocks


def _map_part(part: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """One content part as Converse blocks (``n``: the number a nameless document gets)."""
    if part["type"] == "text":
        return [{"text": part["text"]}] if part["text"].strip() else []
    if part["type"] == "cache_point":
        return [_CACHE_POINT]
    return [_map_media(part, n)]


def _map_media(part: dict[str, Any], n: int) -> dict[str, Any]:
    """An image, document or audio block: raw bytes (boto3 base64-encodes them on the
    wire), or an ``s3Location`` for an s3:// file part."""
    if "uri" in part:
        source: dict[str, Any] = {"s3Location": {"uri": part["uri"]}}
    else:
        source = _bytes_source(part["data"])
    media_type = part.get("media_type") or ""
    kind = part["type"] if part["type"] != "file" else _file_kind(media_type)
    formats = {"image": _IMAGE_FORMATS, "audio": _AUDIO_FORMATS}.get(kind, _DOCUMENT_FORMATS)
    if media_type not in formats:
        raise InvalidRequestError(
            f"bedrock takes {kind} parts as {', '.join(formats)}, not {media_type or 'an unknown type'}",
            capability=True,  # another row may take it: a fallback moves on
        )
    block: dict[str, Any] = {"format": formats[media_type], "source": source}
    if kind == "document":
        block = {"name": _document_name(part.get("name"), n), **block}
    return {kind: block}


class _Source(dict):  # type: ignore[type-arg]
    """A media block's ``{"bytes": ...}`` source, as boto3 takes it, that also keeps the
    part's base64 text (``text``): the prebuilt body (:class:`_Blobs`) writes that text
    instead of encoding the bytes a second time. A dict in every other respect, so the
    native request stays the one boto3's ``converse()`` documents and accepts."""

    __slots__ = ("text",)
    text: str


def _bytes_source(data: str) -> dict[str, Any]:
    """``{"bytes": ...}``: the caller's own bytes when Zerda encoded them (no decoded
    copy), their base64 text kept beside them when it is the very text botocore would
    write for them."""
    raw = b64decode(data)
    if not _is_botocores_text(data, raw):
        return {"bytes": raw}
    source = _Source(bytes=raw)
    source.text = data
    return source


def _is_botocores_text(text: str, raw: bytes) -> bool:
    """Whether ``text`` is exactly ``base64.b64encode(raw)``, as botocore's serializer
    writes a blob (``_get_base64``: standard alphabet, padded). Zerda's own encoding always
    is; base64 text the caller gave may differ only where a decoder does not look: the
    unused bits of its last character before the padding (``QR==`` and ``QQ==`` both decode
    to ``A``), or characters it skips, which make the text longer. So the length and the
    last four characters settle it (every full group of four maps one-to-one to 3 bytes)."""
    if len(text) != 4 * -(-len(raw) // 3) or not raw:
        return False
    tail = raw[-(len(raw) % 3 or 3) :]
    return base64.b64encode(tail).decode("ascii") == text[-4:]


def _file_kind(media_type: str) -> str:
    major = media_type.partition("/")[0]
    return major if major in ("image", "audio") else "document"


def _document_name(name: str | None, n: int) -> str:
    """A DocumentBlock name Bedrock accepts: the file name without its extension, its other
    characters replaced, whitespace single; "Document n" when nothing is left."""
    stem = (name or "").rsplit(".", 1)[0] if name and "." in name[1:] else (name or "")
    cleaned = " ".join(_NAME_BAD.sub(" ", stem).split())[:200]
    return cleaned or f"Document {n}"


def _map_system(req: Request) -> list[dict[str, Any]]:
    """SystemContentBlocks: text, and cachePoint blocks where the system holds them."""
    if not req.system_parts:
        return [{"text": req.system}]
    return _map_parts(req.system_parts)


def _map_tool_output(output: Any) -> dict[str, Any]:
    """One ToolResultContentBlock. Bedrock's ``json`` must be an object: a list is wrapped
    as {"result": [...]}; an empty text block is refused, so empty output is "(empty)"."""
    if isinstance(output, dict):
        return {"json": output}
    if isinstance(output, list):
        return {"json": {"result": output}}
    text = tool_output_text(output)
    return {"text": text if text.strip() else "(empty)"}


def _replay_reasoning(provider_data: dict[str, Any] | None) -> list[dict[str, Any]]:
    reasoning = ((provider_data or {}).get("bedrock") or {}).get("reasoning") or []
    return [
        {"reasoningContent": _replay_reasoning_block(entry)}
        for entry in reasoning
        if isinstance(entry, dict)
    ]


def _replay_reasoning_block(entry: dict[str, Any]) -> dict[str, Any]:
    """A kept reasoningContent block as botocore sends it: redacted content was kept as
    base64 text (results stay JSON), botocore sends bytes."""
    if isinstance(entry, dict) and "redactedContent" in entry:
        return {"redactedContent": base64.b64decode(entry["redactedContent"])}
    return entry


# --- tools and options ----------------------------------------------------------------


def _map_tools(
    req: Request, messages: list[dict[str, Any]], natives: Mapping[str, str] | None = None
) -> dict[str, Any] | None:
    """toolConfig: the functions, then the hosted tools (system tools, ``natives``: unified
    type -> native name; hosted.map_hosted). Converse has no tool_choice "none": the tools
    are left out, unless the history holds toolUse/toolResult blocks, which Bedrock refuses
    without a toolConfig; then the tools named in the history are declared (never a
    made-up dummy tool), a system tool's calls by that system tool."""
    choice = req.tool_choice
    tools: list[Any] = []
    if choice != "none":
        tools = (to_bedrock_tools(req.tools) or {}).get("tools", [])
        tools += map_hosted(req.hosted, natives or {})
    if tools:
        tools += _history_system_tools(messages, tools)
        native_choice = _map_tool_choice(choice)
        return {"tools": tools, "toolChoice": native_choice} if native_choice else {"tools": tools}
    names = _history_tool_names(messages)
    tools = [{"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object"}}}} for n in names]
    tools += _history_system_tools(messages, tools)
    return {"tools": tools} if tools else None


def _history_system_tools(messages: list[dict[str, Any]], declared: list[Any]) -> list[Any]:
    """The system tools whose calls the history replays and ``declared`` lacks."""
    have = system_tool_names(declared)
    return [{"systemTool": {"name": n}} for n in history_server_names(messages) if n not in have]


def _map_tool_choice(choice: str | dict[str, str] | None) -> dict[str, Any] | None:
    if choice == "auto":
        return {"auto": {}}
    if choice == "required":
        return {"any": {}}
    if isinstance(choice, dict):
        return {"tool": {"name": choice["name"]}}
    return None  # None: the model's default (auto)


def _history_tool_names(messages: list[dict[str, Any]]) -> list[str]:
    """The tools the history calls, in order of first use (every toolResult answers one of
    these calls: resolve_tool_ids refuses orphan results)."""
    names = [
        b["toolUse"]["name"]
        for m in messages
        for b in m["content"]
        if "toolUse" in b and not is_server_use(b)
    ]
    return list(dict.fromkeys(names))


def _map_options(req: Request) -> dict[str, Any]:
    """inferenceConfig, with only what the caller set (and maxTokens above a thinking
    budget, which Claude requires)."""
    max_tokens = req.max_tokens
    if max_tokens is None and req.reasoning and req.reasoning.on and req.reasoning.budget:
        max_tokens = req.reasoning.budget + DEFAULT_MAX_TOKENS
    fields = {
        "maxTokens": max_tokens,
        "temperature": req.temperature,
        "topP": req.top_p,
        "stopSequences": req.stop,
    }
    return {k: v for k, v in fields.items() if v is not None}


def _map_reasoning(plan: Plan | None) -> dict[str, Any]:
    """Reasoning per model family (the family's row in zerda.llm.reasoning.TABLE):
    Claude's ``thinking`` in ``additionalModelRequestFields`` (a budget, or adaptive with
    Converse's ``outputConfig.effort``), Amazon Nova 2's ``reasoningConfig``, gpt-oss's
    ``reasoning_effort``: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-reasoning.html"""
    if plan is None:
        return {}
    style = plan.family.style
    if not plan.on:
        key = "reasoningConfig" if style == "nova" else "thinking"
        return {"additionalModelRequestFields": {key: dict(plan.off)}}
    if style == "nova":
        config = {"type": "enabled", "maxReasoningEffort": plan.effort}
        return {"additionalModelRequestFields": {"reasoningConfig": config}}
    if style == "reasoning_effort":
        return {"additionalModelRequestFields": {"reasoning_effort": plan.effort}}
    if style not in ("budget", "adaptive"):
        return {}  # a family that reasons with no switch (DeepSeek-R1)
    thinking: dict[str, Any] = (
        {"type": "enabled", "budget_tokens": plan.budget}
        if plan.budget is not None
        else {"type": "adaptive"}
    )
    native: dict[str, Any] = {"additionalModelRequestFields": {"thinking": thinking}}
    if plan.effort is not None:
        native["outputConfig"] = {"effort": plan.effort}
    return native


def _merge_native(kwargs: dict[str, Any], native: dict[str, Any]) -> dict[str, Any]:
    """``**native`` passed through; a dict given for a field Zerda also fills
    (inferenceConfig, toolConfig) is merged into it, the caller's keys winning."""
    out = dict(kwargs)
    for key, value in native.items():
        mine = out.get(key)
        out[key] = (
            {**mine, **value} if isinstance(mine, dict) and isinstance(value, dict) else value
        )
    return out


# --- response pieces ------------------------------------------------------------------


def _map_usage(usage: Any) -> dict[str, Any] | None:
    """DESIGN.md §12: ``inputTokens`` leaves out the cache reads and writes (``totalTokens``
    is all four), so they are added; Converse does not report reasoning tokens:
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html"""
    if not usage:
        return None
    read = usage.get("cacheReadInputTokens", usage.get("cacheReadInputTokenCount"))
    write = usage.get("cacheWriteInputTokens", usage.get("cacheWriteInputTokenCount"))
    return make_usage(
        plus(usage.get("inputTokens"), read, write),
        usage.get("outputTokens"),
        cache_read=read,
        cache_write=write,
    )


def _reasoning_text(block: Any) -> str:
    """The shown text of a reasoningContent block ("" for redacted reasoning)."""
    text = (block or {}).get("reasoningText") if isinstance(block, dict) else None
    value = text.get("text") if isinstance(text, dict) else None
    return value if isinstance(value, str) else ""


def _keep_reasoning(block: dict[str, Any]) -> dict[str, Any] | None:
    """A reasoningContent block worth sending back: signed reasoning text or redacted
    content (base64 text, so results stay JSON). Unsigned reasoning is dropped: it is not
    content, and no model needs it back."""
    if block.get("redactedContent") is not None:
        return {"redactedContent": _b64(block["redactedContent"])}
    text = block.get("reasoningText") or {}
    if not text.get("signature"):
        return None
    return {"reasoningText": {"text": text.get("text", ""), "signature": text["signature"]}}


def _b64(data: Any) -> str:
    raw = data if isinstance(data, bytes) else str(data).encode("utf-8")
    return base64.b64encode(raw).decode("ascii")
