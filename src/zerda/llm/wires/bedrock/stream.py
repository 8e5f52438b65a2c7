"""Bedrock's converse-stream: the events of one attempt, and what they feed the accumulator."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from zerda.llm.wires.bedrock.fastpath import _read_events
from zerda.llm.wires.bedrock.hosted import SERVER_USE, HostedReader, function_use
from zerda.llm.wires.bedrock.map import _keep_reasoning, _map_usage

if TYPE_CHECKING:
    from zerda.llm._stream import StreamAccumulator


class _Events:
    """A converse-stream's events; closing it (or leaving its ``with``) closes the HTTP
    response. (A stream that ends before ``messageStop`` is reported by the base class.)
    ``fast``: read through the fast path's reader; otherwise botocore's ``EventStream`` is
    iterated as documented."""

    def __init__(self, stream: Any, fast: bool = True) -> None:
        self._stream = stream
        self._events = _read_events(stream) if fast else iter(stream)
        self._first: list[dict[str, Any]] = []

    def prefetch(self) -> None:
        """Reads the first event now (it is still yielded first); none if it is empty."""
        self._first = list(itertools.islice(self._events, 1))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        first, self._first = self._first, []
        yield from first
        yield from self._events

    def __enter__(self) -> _Events:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._stream.close()


def _close_opened(job: Future[_Events]) -> None:
    """Closes the stream a cancelled attempt opened after all."""
    if not job.cancelled() and job.exception() is None:
        job.result().close()


def feed(acc: StreamAccumulator, chunk: Any, kinds: dict[str, str]) -> list[dict[str, Any]]:
    """One converse-stream event into the accumulator; the events it gives the caller.
    ``kinds``: native system tool name -> unified hosted type (the interface's row)."""
    if "contentBlockDelta" in chunk:
        return _feed_delta(acc, chunk["contentBlockDelta"], kinds)
    if "contentBlockStart" in chunk:
        return _feed_start(acc, chunk["contentBlockStart"], kinds)
    if "contentBlockStop" in chunk:
        return _feed_stop(acc, chunk["contentBlockStop"].get("contentBlockIndex"), kinds)
    if "messageStop" in chunk:
        acc.finished = True
        acc.native_stop = chunk["messageStop"].get("stopReason")
        return _feed_end(acc, kinds)
    if "metadata" in chunk:
        acc.usage = _map_usage(chunk["metadata"].get("usage"))
    return []


def _feed_delta(
    acc: StreamAccumulator, event: dict[str, Any], kinds: dict[str, str]
) -> list[dict[str, Any]]:
    delta = event.get("delta") or {}
    index = event.get("contentBlockIndex")
    if "text" in delta:
        return _blocks(acc, kinds).text(acc, index, delta["text"])
    if "toolUse" in delta:
        fragment = (delta["toolUse"] or {}).get("input")
        if _blocks(acc, kinds).server_fragment(index, fragment):
            return []
        return acc.add_arguments(index, fragment)
    if "reasoningContent" in delta:
        content = delta["reasoningContent"] or {}
        _add_reasoning(acc, index, content)
        return acc.reasoning(content.get("text"))
    if "toolResult" in delta:
        _blocks(acc, kinds).result_content(index, delta["toolResult"])
    elif "citation" in delta:
        _blocks(acc, kinds).citation(index, delta["citation"])
    return []


def _feed_start(
    acc: StreamAccumulator, event: dict[str, Any], kinds: dict[str, str]
) -> list[dict[str, Any]]:
    """contentBlockStart: a function call opens in the accumulator; a system tool's call
    or result, or a block Zerda does not read, opens here (:class:`_Blocks`)."""
    start = event.get("start") or {}
    index = event.get("contentBlockIndex")
    use = start.get("toolUse")
    if isinstance(use, dict) and use.get("type") != SERVER_USE:
        _blocks(acc, kinds).function(index, use)
        return acc.start_call(index, use.get("toolUseId"), use.get("name"))  # type: ignore[arg-type]
    return _blocks(acc, kinds).start(acc, index, start)


def _feed_stop(acc: StreamAccumulator, index: Any, kinds: dict[str, str]) -> list[dict[str, Any]]:
    blocks = _blocks(acc, kinds)
    blocks.reader_block(_close_reasoning(acc, index))
    events = blocks.stop(acc, index)
    return events + acc.end_call(index)


def _feed_end(acc: StreamAccumulator, kinds: dict[str, str]) -> list[dict[str, Any]]:
    """messageStop: the calls whose result never came, and the answer's blocks kept."""
    state = acc.scratch.get(_BLOCKS)
    return state.finish(acc) if state is not None else []


_BLOCKS = "bedrock_blocks"


def _blocks(acc: StreamAccumulator, kinds: dict[str, str]) -> _Blocks:
    state = acc.scratch.get(_BLOCKS)
    if state is None:
        state = acc.scratch[_BLOCKS] = _Blocks(kinds)
    return state  # type: ignore[no-any-return]


class _Blocks:
    """A stream's content blocks rebuilt whole at their contentBlockStop and read by the
    same :class:`HostedReader` as generate's answer, so both give the same server calls,
    citations and kept blocks. Text is not copied per delta: a block's span (character
    offsets) is noted, its text sliced from the content once, when it must be kept."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.reader = HostedReader(kinds)
        self.spans: dict[Any, list[int]] = {}
        self.open: dict[Any, dict[str, Any]] = {}  # server calls and results, by index
        self.cites: dict[Any, list[dict[str, Any]]] = {}
        self.functions: dict[Any, dict[str, Any]] = {}
        self.texts: list[tuple[dict[str, Any], list[int]]] = []  # filled at the end

    def text(self, acc: StreamAccumulator, index: Any, delta: Any) -> list[dict[str, Any]]:
        span = self.spans.get(index)
        if span is None:
            span = self.spans[index] = [acc.content_length, acc.content_length]
        events = acc.text(delta)
        span[1] = acc.content_length
        return events

    def function(self, index: Any, use: dict[str, Any]) -> None:
        self.functions[index] = function_use(use)

    def start(self, acc: StreamAccumulator, index: Any, start: dict[str, Any]) -> list[Any]:
        if isinstance(start.get("toolUse"), dict):
            self.open[index] = {"toolUse": dict(start["toolUse"]), "fragments": []}
        elif isinstance(start.get("toolResult"), dict):
            self.open[index] = {"toolResult": {**start["toolResult"], "content": []}}
        elif start and not start.keys() <= {"image"}:
            return acc.server_call(self.reader.unknown(dict(start)))
        return []

    def server_fragment(self, index: Any, fragment: Any) -> bool:
        block = self.open.get(index)
        if block is None or "fragments" not in block:
            return False
        if isinstance(fragment, str):
            block["fragments"].append(fragment)
        return True

    def result_content(self, index: Any, items: Any) -> None:
        block = self.open.get(index)
        if block is not None and "toolResult" in block and isinstance(items, list):
            block["toolResult"]["content"] += items

    def citation(self, index: Any, delta: Any) -> None:
        """A CitationsDelta: a new citation, or (holding only source text) more of the
        last one's source text."""
        if not isinstance(delta, dict):
            return
        found = self.cites.setdefault(index, [])
        if found and delta.keys() <= {"sourceContent"}:
            found[-1].setdefault("sourceContent", []).extend(delta.get("sourceContent") or [])
        else:
            found.append({**delta, "sourceContent": list(delta.get("sourceContent") or [])})
            if not delta.get("sourceContent"):
                del found[-1]["sourceContent"]

    def reader_block(self, kept: dict[str, Any] | None) -> None:
        if kept is not None:
            self.reader.other({"reasoningContent": kept})

    def stop(self, acc: StreamAccumulator, index: Any) -> list[dict[str, Any]]:
        block = self.open.pop(index, None)
        if block is not None and "toolUse" in block:
            use = {**block["toolUse"], "input": _input("".join(block["fragments"]))}
            self.reader.server_use(use)
        elif block is not None:
            call = self.reader.tool_result(block["toolResult"])
            return acc.server_call(call) if call is not None else []
        elif index in self.cites:
            return self._cited(acc, index)
        elif index in self.functions:
            self.reader.other({"toolUse": self.functions.pop(index)})
        elif index in self.spans:
            text: dict[str, Any] = {"text": ""}
            self.texts.append((text, self.spans[index]))
            self.reader.text(text, (self.spans[index][0], self.spans[index][1]))
        return []

    def _cited(self, acc: StreamAccumulator, index: Any) -> list[dict[str, Any]]:
        span = self.spans.get(index)
        block: dict[str, Any] = {"citations": self.cites.pop(index)}
        if span is not None:
            block = {"content": [{"text": (acc.content or "")[span[0] : span[1]]}], **block}
        found = self.reader.cited(block, (span[0], span[1]) if span else None)
        return [event for c in found for event in acc.citation(c)]

    def finish(self, acc: StreamAccumulator) -> list[dict[str, Any]]:
        events = [e for call in self.reader.unanswered() for e in acc.server_call(call)]
        acc.server_calls[:] = self.reader.calls  # in the answer's order, as generate's
        if not self.reader.hosted:
            return events
        content = acc.content or ""
        for text, span in self.texts:
            text["text"] = content[span[0] : span[1]]
        arguments = {call.id: call.arguments for call in acc.calls}
        for block in self.reader.blocks:
            use = block.get("toolUse")
            if use is not None and use.get("type") != SERVER_USE:
                use["input"] = arguments.get(use.get("toolUseId"))
        acc.provider_data.setdefault("bedrock", {})["content"] = self.reader.blocks
        return events


def _input(text: str) -> Any:
    """A system tool call's input from its JSON fragments (kept as text if not JSON)."""
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _open_reasoning(acc: StreamAccumulator) -> dict[Any, dict[str, Any]]:
    # StreamAccumulator has no slot for per-block reasoning; keep it beside its state.
    state: dict[Any, dict[str, Any]] = acc.scratch.setdefault("bedrock_reasoning", {})
    return state


def _add_reasoning(acc: StreamAccumulator, index: Any, delta: dict[str, Any]) -> None:
    block = _open_reasoning(acc).setdefault(
        index, {"text": [], "signature": None, "redacted": None}
    )
    if delta.get("text"):
        block["text"].append(delta["text"])
    if delta.get("signature"):
        block["signature"] = delta["signature"]
    if delta.get("redactedContent") is not None:
        block["redacted"] = delta["redactedContent"]


def _close_reasoning(acc: StreamAccumulator, index: Any) -> dict[str, Any] | None:
    """The reasoning block at ``index`` closed: what is kept of it (None: nothing)."""
    block = _open_reasoning(acc).pop(index, None)
    if block is None:
        return None
    if block["redacted"] is not None:
        native: dict[str, Any] = {"redactedContent": block["redacted"]}
    else:
        native = {
            "reasoningText": {"text": "".join(block["text"]), "signature": block["signature"]}
        }
    kept = _keep_reasoning(native)
    if kept:
        acc.provider_data.setdefault("bedrock", {}).setdefault("reasoning", []).append(kept)
    return kept
