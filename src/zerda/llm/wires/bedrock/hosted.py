"""Converse's hosted tools and citations (DESIGN §18): system tools in the request, and the
blocks an answer holds about them, read the same way from ``converse`` and from
``converse-stream``.

- Request: ``toolConfig.tools`` entries ``{"systemTool": {"name": ...}}``
  (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_SystemTool.html), the
  name from the registry row (``Traits.hosted[type].native``: ``nova_grounding``,
  ``nova_code_interpreter``); ``{"type": "native", "tool": {...}}`` goes in unchanged.
- Answer: a system tool's call is a ``toolUse`` block with ``"type": "server_tool_use"``, its
  result a ``toolResult`` block in the assistant's own message, typed
  ``<name>_result`` (``nova_code_interpreter_result``: ``json`` ``{stdOut, stdErr, exitCode,
  isError}``; ``nova_grounding_result``: ``text`` "[HIDDEN]"), as recorded
  (pydantic-ai's bedrock code-execution cassettes) and documented
  (https://docs.aws.amazon.com/nova/latest/userguide/tool-built-in.html).
  ``citationsContent`` blocks (API_runtime_CitationsContentBlock.html) hold generated text
  (``content``, which is part of the answer's text) and ``citations``; Nova 2's web grounding
  sends them without ``content``, right after the text block they support
  (https://docs.aws.amazon.com/nova/latest/nova2-userguide/web-grounding.html), so such a
  citation spans the text block before it.
- History: the answer's blocks, in order, in ``provider_data["bedrock"]["content"]`` (only
  when it holds such blocks), sent back as they came (:func:`replay_content`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from zerda.llm._server_tools import citation, server_call
from zerda.llm.messages import tool_output_text

SERVER_USE = "server_tool_use"
# The content blocks Zerda reads itself: any other kind in an answer is kept, and listed as
# a server call of type "other" (DESIGN §18: never dropped, never an error).
_KNOWN_BLOCKS = frozenset(
    {"text", "toolUse", "toolResult", "reasoningContent", "citationsContent", "cachePoint"}
    # Media and guard blocks are not hosted-tool blocks: left out, as before.
    | {"image", "document", "video", "audio", "guardContent", "searchResult"}
)
# botocore's stand-in for a union member its model does not know: it cannot be sent back.
_UNKNOWN_MEMBER = "SDK_UNKNOWN_MEMBER"


# --- request ------------------------------------------------------------------------------


def map_hosted(hosted: Iterable[Mapping[str, Any]], natives: Mapping[str, str]) -> list[Any]:
    """``toolConfig.tools`` entries for the request's hosted tools, in the caller's order:
    a system tool per unified type (``natives``: type -> native name, from the registry),
    a native tool unchanged."""
    out: list[Any] = []
    for tool in hosted:
        if tool["type"] == "native":
            out.append(tool["tool"])
        else:
            out.append({"systemTool": {"name": natives[tool["type"]]}})
    return out


def system_tool_names(tools: Iterable[Any]) -> set[str]:
    """The system tools a ``toolConfig.tools`` list declares."""
    return {
        t["systemTool"].get("name")
        for t in tools
        if isinstance(t, dict) and isinstance(t.get("systemTool"), dict)
    }


def is_server_use(block: Any) -> bool:
    use = block.get("toolUse") if isinstance(block, dict) else None
    return isinstance(use, dict) and use.get("type") == SERVER_USE


def history_server_names(messages: list[dict[str, Any]]) -> list[str]:
    """The system tools whose calls the (mapped) history replays, in order of first use:
    Bedrock wants a toolConfig for any toolUse block, and these are declared as the system
    tools they are (never as made-up functions)."""
    names = [
        b["toolUse"].get("name")
        for m in messages
        for b in m["content"]
        if m["role"] == "assistant" and is_server_use(b)
    ]
    return [n for n in dict.fromkeys(names) if isinstance(n, str)]


# --- the answer ------------------------------------------------------------------------------


class HostedReader:
    """What an answer's blocks say about hosted tools and citations, fed block by block in
    the answer's order (whole blocks: the stream rebuilds each at its contentBlockStop).
    ``kinds``: native system tool name -> unified type. The text spans are given by the
    caller (character offsets into the answer's text), so generate and stream agree."""

    def __init__(self, kinds: Mapping[str, str]) -> None:
        self.kinds = kinds
        self.calls: list[dict[str, Any]] = []
        self.citations: list[dict[str, Any]] = []
        self.blocks: list[dict[str, Any]] = []  # the answer's blocks, JSON-safe
        self.hosted = False  # whether any block is worth keeping for replay
        self._pending: dict[str, dict[str, Any]] = {}  # server calls awaiting their result
        self._last_span: tuple[int, int] | None = None

    def text(self, block: dict[str, Any], span: tuple[int, int] | None) -> None:
        self.blocks.append(block)
        self._last_span = span

    def other(self, block: dict[str, Any]) -> None:
        """A block kept as it is (reasoning, a function call): no span of text."""
        self.blocks.append(block)
        self._last_span = None

    def server_use(self, use: dict[str, Any]) -> None:
        """A system tool's call (its result comes in a later block)."""
        self.other({"toolUse": use})
        self.hosted = True
        name = use.get("name")
        kind = self.kinds.get(name, "other") if isinstance(name, str) else "other"
        call = server_call(use.get("toolUseId"), kind, name, use.get("input"))
        self.calls.append(call)
        if call["id"] is not None:
            self._pending[call["id"]] = call

    def tool_result(self, result: dict[str, Any]) -> dict[str, Any] | None:
        """A system tool's result: the call it completes (its output filled), if known."""
        self.other({"toolResult": result})
        self.hosted = True
        call = self._pending.pop(result.get("toolUseId"), None)  # type: ignore[arg-type]
        if call is not None:
            call["output"] = result_output(result)
        return call

    def cited(self, block: dict[str, Any], span: tuple[int, int] | None) -> list[dict[str, Any]]:
        """A ``citationsContent`` block: its citations over ``span`` (its own generated
        text), else over the text block right before it (Nova 2's content-less blocks)."""
        over = span if span is not None else self._last_span
        self.blocks.append({"citationsContent": block})
        self.hosted = True
        if span is not None:  # content-less blocks all support the text before them
            self._last_span = span
        found = [map_citation(c, over) for c in block.get("citations") or () if isinstance(c, dict)]
        self.citations += found
        return found

    def unknown(self, block: dict[str, Any]) -> dict[str, Any]:
        """A block of a kind Zerda does not read: kept, listed as an "other" call."""
        self.other(block)
        self.hosted = True
        key = next(iter(block), "")
        inner = block.get(key)
        name = inner.get("name") if key == _UNKNOWN_MEMBER and isinstance(inner, dict) else key
        call = server_call(None, "other", name, inner if isinstance(inner, dict) else None)
        self.calls.append(call)
        return call

    def unanswered(self) -> list[dict[str, Any]]:
        """The calls whose result never came (listed with no output)."""
        calls = list(self._pending.values())
        self._pending.clear()
        return calls


def result_output(result: dict[str, Any]) -> str | None:
    """The readable part of a system tool's result: its text, the code interpreter's
    stdout and stderr, other JSON as JSON text."""
    pieces: list[str] = []
    for item in result.get("content") or ():
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            pieces.append(item["text"])
        elif isinstance(item.get("json"), dict) and {"stdOut", "stdErr"} & item["json"].keys():
            out = item["json"]
            pieces += [
                s for s in (out.get("stdOut"), out.get("stdErr")) if isinstance(s, str) and s
            ]
        elif "json" in item:
            pieces.append(tool_output_text(item["json"]))
    return "\n".join(pieces) or None


def map_citation(native: dict[str, Any], span: tuple[int, int] | None) -> dict[str, Any]:
    """A Converse Citation (API_runtime_Citation.html) as Zerda's: the web location's URL
    (else the search result's ``source``), the title, the cited source text, and the span
    of the answer's text it supports (the web ``domain`` stays in provider_data)."""
    location: dict[str, Any] = native.get("location") or {}
    location = location if isinstance(location, dict) else {}
    web: dict[str, Any] = location.get("web") or {}
    web = web if isinstance(web, dict) else {}
    sources = native.get("sourceContent") or ()
    text = "".join(s.get("text") or "" for s in sources if isinstance(s, dict)) or None
    start, end = span if span is not None else (None, None)
    return citation(web.get("url") or native.get("source"), native.get("title"), text, start, end)


def read_blocks(blocks: list[Any], kinds: Mapping[str, str], keep: Any) -> tuple[str, HostedReader]:
    """An answer's text (its text blocks and the text of its citationsContent blocks, in
    order) and what it says about hosted tools; ``keep`` maps a reasoningContent block to
    what is kept of it (None: dropped)."""
    reader = HostedReader(kinds)
    parts: list[str] = []
    chars = 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        text = _block_text(block)
        span = (chars, chars + len(text)) if text else None
        if text:
            parts.append(text)
            chars += len(text)
        _read_block(reader, block, span, keep)
    for call in reader.unanswered():
        call["output"] = None
    return "".join(parts), reader


def _block_text(block: dict[str, Any]) -> str:
    if isinstance(block.get("text"), str):
        return str(block["text"])
    cited = block.get("citationsContent")
    if not isinstance(cited, dict):
        return ""
    return "".join(
        c["text"]
        for c in cited.get("content") or ()
        if isinstance(c, dict) and isinstance(c.get("text"), str)
    )


def _read_block(
    reader: HostedReader, block: dict[str, Any], span: tuple[int, int] | None, keep: Any
) -> None:
    """One whole block of an answer into the reader (generate's path; the stream feeds the
    same reader from its rebuilt blocks)."""
    if "text" in block:
        reader.text({"text": block["text"]}, span)
    elif "citationsContent" in block:
        reader.cited(block["citationsContent"] or {}, span)
    elif is_server_use(block):
        reader.server_use(dict(block["toolUse"]))
    elif "toolUse" in block:
        reader.other({"toolUse": function_use(block["toolUse"] or {})})
    elif "toolResult" in block:
        reader.tool_result(dict(block["toolResult"] or {}))
    elif "reasoningContent" in block:
        kept = keep(block["reasoningContent"] or {})
        if kept:
            reader.other({"reasoningContent": kept})
    elif not block.keys() <= _KNOWN_BLOCKS:
        reader.unknown(block)


def function_use(use: dict[str, Any]) -> dict[str, Any]:
    """A function call's toolUse as it goes back: without its ``type`` (Converse's
    ToolUseType has only server_tool_use; the history recordings send none)."""
    return {k: use[k] for k in ("toolUseId", "name", "input") if k in use}


def provider_content(reader: HostedReader) -> list[dict[str, Any]] | None:
    """What ``provider_data["bedrock"]["content"]`` keeps: the answer's blocks, only when
    they hold a hosted block or a citation."""
    return reader.blocks if reader.hosted else None


# --- history --------------------------------------------------------------------------------


def replay_content(
    content: list[Any], calls: list[dict[str, Any]], reasoning: Any
) -> list[dict[str, Any]]:
    """The assistant turn's blocks as the answer held them (server calls, their results,
    citations, reasoning, text, in order); function calls from the message's own
    ``tool_calls`` (by id: a call the caller removed is left out, one added goes last).
    ``reasoning`` maps a kept reasoningContent block back to what botocore sends."""
    by_id = {c["id"]: c for c in calls}
    out: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict) or _UNKNOWN_MEMBER in block or _blank(block):
            continue
        if "toolUse" in block and not is_server_use(block):
            call = by_id.pop((block["toolUse"] or {}).get("toolUseId"), None)
            if call is not None:
                out.append(tool_use(call))
        elif "reasoningContent" in block:
            out.append({"reasoningContent": reasoning(block["reasoningContent"])})
        else:
            out.append(block)
    return out + [tool_use(c) for c in by_id.values()]


def _blank(block: dict[str, Any]) -> bool:
    """A text block of spaces or tabs (between two cited spans): Converse refuses it in a
    request ("The text field in the ContentBlock object ... is blank"), so it is left out."""
    text = block.get("text")
    return isinstance(text, str) and not text.strip(" \t")


def tool_use(call: dict[str, Any]) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call["id"], "name": call["name"], "input": call["arguments"]}}


def native_content(provider_data: Any) -> list[Any] | None:
    """The kept answer blocks of an assistant message's provider_data, if any."""
    data = provider_data.get("bedrock") if isinstance(provider_data, dict) else None
    content = data.get("content") if isinstance(data, dict) else None
    return content if isinstance(content, list) else None


def server_names(content: list[Any]) -> list[str]:
    return [
        b["toolUse"]["name"]
        for b in content
        if is_server_use(b) and isinstance(b["toolUse"].get("name"), str)
    ]


# --- include_raw ------------------------------------------------------------------------------


def body_json(value: Any) -> Any:
    """What botocore handed back as the JSON body Bedrock sent: ``ResponseMetadata`` (added
    by botocore, not in the body) left out, blobs as the base64 text they were on the wire."""
    if isinstance(value, dict):
        return {k: body_json(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list):
        return [body_json(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value
