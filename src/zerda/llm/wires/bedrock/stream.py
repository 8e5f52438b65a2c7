"""Bedrock's converse-stream: the events of one attempt, and what they feed the accumulator."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from zerda.llm.wires.bedrock.fastpath import _read_events
from zerda.llm.wires.bedrock.map import _keep_reasoning

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


def _feed_delta(acc: StreamAccumulator, event: dict[str, Any]) -> list[dict[str, Any]]:
    delta = event.get("delta") or {}
    index = event.get("contentBlockIndex")
    if "text" in delta:
        return acc.text(delta["text"])
    if "toolUse" in delta:
        return acc.add_arguments(index, (delta["toolUse"] or {}).get("input"))
    if "reasoningContent" in delta:
        content = delta["reasoningContent"] or {}
        _add_reasoning(acc, index, content)
        return acc.reasoning(content.get("text"))
    return []


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


def _close_reasoning(acc: StreamAccumulator, index: Any) -> None:
    block = _open_reasoning(acc).pop(index, None)
    if block is None:
        return
    if block["redacted"] is not None:
        native: dict[str, Any] = {"redactedContent": block["redacted"]}
    else:
        native = {
            "reasoningText": {"text": "".join(block["text"]), "signature": block["signature"]}
        }
    kept = _keep_reasoning(native)
    if kept:
        acc.provider_data.setdefault("bedrock", {"reasoning": []})["reasoning"].append(kept)
