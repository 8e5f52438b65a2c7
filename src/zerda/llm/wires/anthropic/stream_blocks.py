"""A Messages stream's content blocks, kept for what DESIGN §18 needs of them: the server
tool calls (emitted when their result arrives), the citations (emitted when the text block
they cite is complete) and, when the turn used a server tool, its native blocks for
``provider_data`` — the same as generate's (server_tools.py) for the same answer.

Stream shapes (https://docs.claude.com/en/docs/build-with-claude/streaming): a
``server_tool_use`` / ``mcp_tool_use`` block starts with an empty input that
``input_json_delta`` events complete; result blocks arrive whole in ``content_block_start``;
citations arrive one by one as ``citations_delta`` on their text block. Per block the cost is
one small record; per delta nothing but the input fragments of a server tool use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zerda.llm.tools import _get
from zerda.llm.wires.anthropic import server_tools as _server

if TYPE_CHECKING:
    from zerda.llm._stream import StreamAccumulator

Events = list[dict[str, Any]]
_SCRATCH = "anthropic_blocks"


@dataclass
class Blocks:
    """The blocks so far, by their stream index, in order."""

    records: list[dict[str, Any]] = field(default_factory=list)
    by_index: dict[Any, dict[str, Any]] = field(default_factory=dict)
    inputs: dict[Any, list[str]] = field(default_factory=dict)  # server tool uses' JSON
    pending: dict[Any, dict[str, Any]] = field(default_factory=dict)  # uses without result
    places: dict[Any, int] = field(default_factory=dict)  # use id -> its place in records
    emitted: list[int] = field(default_factory=list)  # each server call's place, as emitted
    hosted: bool = False


def blocks_of(acc: StreamAccumulator) -> Blocks:
    blocks = acc.scratch.get(_SCRATCH)
    if blocks is None:
        blocks = acc.scratch[_SCRATCH] = Blocks()
    return blocks


def start(acc: StreamAccumulator, index: Any, record: dict[str, Any]) -> None:
    """A text, thinking or tool_use block began (``record``: what it will be kept as; a
    text block's holds where its text starts in the content)."""
    blocks = blocks_of(acc)
    blocks.records.append(record)
    blocks.by_index[index] = record


def start_hosted(acc: StreamAccumulator, index: Any, block: Any) -> Events:
    """A block no plain answer has: a server tool use (its input to come), a result (which
    completes its use's call) or one Zerda does not know (a call of type other)."""
    blocks = blocks_of(acc)
    blocks.hosted = True
    record: dict[str, Any] = _server.plain(block)
    start(acc, index, record)
    if record.get("type") in _server.USE_BLOCKS:
        blocks.inputs[index] = []
        use_id = _server.link(record, "id")
        blocks.pending[use_id] = record
        blocks.places[use_id] = len(blocks.records) - 1
        return []
    use_id = _server.link(record, "tool_use_id")
    # Where the call's use came (the block itself when the use came in an earlier turn).
    place = (
        blocks.places.get(use_id, len(blocks.records) - 1)
        if use_id in blocks.pending
        else len(blocks.records) - 1
    )
    blocks.emitted.append(place)
    return acc.server_call(_server.call_of_result(record, blocks.pending))


def add_input(acc: StreamAccumulator, index: Any, fragment: Any) -> bool:
    """An ``input_json_delta`` of a server tool use (True), else not one (False)."""
    inputs = blocks_of(acc).inputs if _SCRATCH in acc.scratch else {}
    if index not in inputs:
        return False
    if isinstance(fragment, str):
        inputs[index].append(fragment)
    return True


def add_citation(acc: StreamAccumulator, index: Any, native: Any) -> None:
    """A ``citations_delta``: one more citation of the text block at ``index``."""
    record = blocks_of(acc).by_index.get(index)
    if record is not None:
        record.setdefault("citations", []).append(_server.plain(native))


def stop(acc: StreamAccumulator, index: Any) -> Events:
    """A block ended: a server tool use's input parsed, a tool_use's input text kept (the
    accumulator parses it too), a text block's end noted and its citations emitted."""
    if _SCRATCH not in acc.scratch:
        return []
    blocks = blocks_of(acc)
    record = blocks.by_index.get(index)
    if record is None:
        return []
    if index in blocks.inputs:
        fragments = blocks.inputs.pop(index)
        if fragments or "input" not in record:  # else the input came whole in the start
            record["input"] = _parsed("".join(fragments))
    elif record.get("type") == "tool_use":
        call = acc.open_call(index)
        record["_json"] = "".join(call.fragments) if call else ""
    elif record.get("type") == "text":
        record["_end"] = acc.content_length
        events: Events = []
        for native in record.get("citations") or []:
            events += acc.citation(_server.cited(native, record["_start"], record["_end"]))
        return events
    return []


def finish(acc: StreamAccumulator) -> Events:
    """The message ended: the uses still without a result are calls too, and a turn that
    used a server tool keeps its native blocks (``provider_data["anthropic"]["content"]``)."""
    blocks = acc.scratch.get(_SCRATCH)
    if blocks is None or not blocks.hosted:
        return []
    events: Events = []
    for use_id, use in blocks.pending.items():
        blocks.emitted.append(blocks.places[use_id])
        events += acc.server_call(_server.call_of_use(use, None))
    blocks.pending.clear()
    # The result lists them in the order they were made, as generate does.
    ordered = sorted(zip(blocks.emitted, acc.server_calls, strict=True), key=lambda p: p[0])
    acc.server_calls[:] = [call for _, call in ordered]
    text = "".join(acc.text_parts)
    content = [_native(record, text) for record in blocks.records]
    acc.provider_data.setdefault("anthropic", {})["content"] = content
    return events


def _native(record: dict[str, Any], text: str) -> dict[str, Any]:
    """A record as the block generate keeps (server_tools.native_block)."""
    kind = record.get("type")
    if kind == "text":
        out: dict[str, Any] = {"type": "text", "text": text[record["_start"] : record.get("_end")]}
        if record.get("citations"):
            out["citations"] = record["citations"]
        return out
    if kind == "tool_use":
        out = {k: v for k, v in record.items() if k != "_json"}
        out["input"] = _parsed(record.get("_json") or "")
        return out
    return dict(record)


def _parsed(text: str) -> Any:
    """A streamed input's JSON (empty: no parameters); text that is not JSON kept as it is."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def text_record(acc: StreamAccumulator, block: Any) -> dict[str, Any]:
    """A text block's record: where its text starts in the content, and the citations its
    start event already carries."""
    record: dict[str, Any] = {"type": "text", "_start": acc.content_length}
    citations = _get(block, "citations")
    if citations:
        record["citations"] = [_server.plain(c) for c in citations]
    return record
