"""Long answers: a non-streaming Messages call the anthropic SDK refuses is streamed instead,
and the stream assembled into the very result a non-streaming answer gives.

``messages.create()`` refuses a non-streaming call that "may take longer than 10 minutes"
(``ValueError: Streaming is required for operations that may take longer than 10
minutes``): ``BaseClient._calculate_nonstreaming_timeout`` in ``anthropic/_base_client.py``
(anthropic 0.x to 2.x) expects ``60 * 60 s * max_tokens / 128_000`` and refuses above
``60 * 10 s`` (so above 21,333 tokens), and above the model's own limit in
``anthropic/_constants.py``'s ``MODEL_NONSTREAMING_TOKENS`` (Claude Opus 4 and 4.1: 8,192).
The SDK's answer is to stream (https://platform.claude.com/docs/en/cli-sdks-libraries/sdks/python#long-requests):
so does ``generate`` (and ``run``), through the stream's own reader (the wire's ``_feed``) and
accumulator, whose result is the one ``stream`` ends with. The rule is mirrored here rather
than asked of the SDK so that the fast path (which posts without ``create()``) and
``fast_path=False`` decide alike, and so that a long call is streamed whatever timeout it
was given: a connection idle for minutes may be dropped on the way whatever the client waits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm.wires.anthropic.interface import AnthropicInterface

# _calculate_nonstreaming_timeout's figures (module docstring).
_MAXIMUM_TIME = 60 * 60  # seconds the SDK allows the longest answer
_DEFAULT_TIME = 60 * 10  # seconds beyond which it requires streaming
_TOKENS_IN_MAXIMUM_TIME = 128_000  # the answer length it expects to take _MAXIMUM_TIME


@dataclass(frozen=True)
class Streamed:
    """A long answer read from its stream: what ``_call`` returns for ``_map_response``."""

    acc: StreamAccumulator
    chunks: tuple[Any, ...] = ()  # the stream's events: result["raw"] with include_raw=True


def needs_stream(sdk: Any, kwargs: dict[str, Any]) -> bool:
    """Whether ``messages.create(**kwargs)`` would refuse to answer without streaming."""
    max_tokens = kwargs.get("max_tokens")
    if kwargs.get("stream") or isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        return False
    expected = _MAXIMUM_TIME * max_tokens / _TOKENS_IN_MAXIMUM_TIME
    limit = _nonstreaming_limits(sdk).get(str(kwargs.get("model")))
    return expected > _DEFAULT_TIME or bool(limit and max_tokens > limit)


def _nonstreaming_limits(sdk: Any) -> dict[str, int]:
    """The SDK's per-model limits (a private table, in the fast path's list of private
    names); none when the installed SDK lacks it: then the time rule alone decides."""
    limits = getattr(getattr(sdk, "_constants", None), "MODEL_NONSTREAMING_TOKENS", None)
    return limits if isinstance(limits, dict) else {}


def collect(llm: AnthropicInterface, open_stream: Callable[[], Any]) -> Streamed:
    """One attempt: opens the stream, reads it to its end, finishes the accumulator."""
    from zerda.llm._stream import StreamAccumulator  # as in interface/calls.py

    acc = StreamAccumulator(llm.provider)
    chunks = []
    with open_stream() as stream:
        for chunk in stream:
            chunks.append(chunk)
            llm._feed(acc, chunk)
    return _finished(llm, acc, chunks)


async def collect_async(
    llm: AnthropicInterface, open_stream: Callable[[], Awaitable[Any]]
) -> Streamed:
    """As :func:`collect`; the stream is opened and read with awaits."""
    from zerda.llm._stream import StreamAccumulator  # as in interface/calls.py

    acc = StreamAccumulator(llm.provider)
    chunks = []
    stream = await open_stream()
    async with stream:
        async for chunk in stream:
            chunks.append(chunk)
            llm._feed(acc, chunk)
    return _finished(llm, acc, chunks)


def _finished(llm: AnthropicInterface, acc: StreamAccumulator, chunks: list[Any]) -> Streamed:
    """What ``stream`` does after its last chunk: the truncation rule (an answer cut short
    is an error, never a success), then the calls still open completed."""
    llm._check_finished(acc)
    acc.end_all_calls()
    return Streamed(acc, tuple(chunks))
