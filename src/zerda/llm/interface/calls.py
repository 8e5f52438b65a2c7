"""One call's course, written once for a sync method and its async twin.

``generate`` and ``generate_async`` both run :meth:`Calls._generation` (through
:mod:`zerda.llm._drive`): it yields the two calls that are awaited in the async twin
(admission under the rate limit, the SDK call) and does all the rest. A stream's driver
(``stream`` / ``stream_async``) opens and reads the SDK's stream itself, the one thing that
differs, and hands each step to a :class:`Streaming`: the span, the accumulator, the
truncation rule, the result and the failure shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from zerda.llm import _lazy, _telemetry
from zerda.llm._drive import NO_KWARGS, Body
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    from zerda.llm import _names, _stream
    from zerda.llm._request import Request
    from zerda.llm.interface.api import BaseLLMInterface
else:
    # Loaded by the request checks (_names) and with the first stream (_stream).
    _names = _lazy.module("zerda.llm._names", __name__, "_names")
    _stream = _lazy.module("zerda.llm._stream", __name__, "_stream")


class Calls(Host):
    """The body of ``generate`` / ``generate_async``."""

    def _generation(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> Body[dict[str, Any]]:
        llm: BaseLLMInterface = self  # type: ignore[assignment]
        with _telemetry.chat(llm, messages, kwargs) as span:
            req = None
            try:
                req, native = llm._checked_request(messages, kwargs)
                reserved = yield llm, "_admit", (native, req), NO_KWARGS
                raw = yield llm, "_call", (native,), NO_KWARGS
                result = _names.restore_result(llm._map_response(raw), req.tool_names)
                result = llm._with_extras(result, req, raw)
                llm._settle(reserved, result)
            except Exception as exc:
                result = llm._fail(exc, raise_errors)
            _telemetry.record_result(span, result)
            return llm._with_output(result, req.output if req else None, raise_errors)


class Streaming:
    """What a stream does besides reading its chunks (see the module docstring)."""

    __slots__ = ("acc", "chunks", "llm", "names", "raise_errors", "req", "result", "span")

    def __init__(
        self, llm: BaseLLMInterface, messages: Any, raise_errors: bool | None, kwargs: Any
    ) -> None:
        llm._check_open()
        self.llm = llm
        self.raise_errors = raise_errors
        self.acc = _stream.StreamAccumulator(llm.provider)
        self.span = _telemetry.start_chat(llm, messages, kwargs)
        self.req: Request | None = None
        self.names: dict[str, str] = {}
        self.result: dict[str, Any] | None = None
        # include_raw=True: every chunk as JSON, for result["raw"] (DESIGN §18).
        self.chunks: list[Any] | None = None

    def start(self, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The checked request's SDK arguments; the output it expects is noted."""
        self.req, native = self.llm._checked_request(messages, kwargs)
        self.names = self.req.tool_names
        self.acc.expect_output(self.req.output)
        if self.req.include_raw:
            self.chunks = []
        return native

    def finish(self, reserved: int) -> Iterator[dict[str, Any]]:
        """After the last chunk: the truncation rule, the calls still open, the result."""
        llm, acc = self.llm, self.acc
        llm._check_finished(acc)
        for event in acc.end_all_calls():
            yield _names.restore_event(event, self.names)
        result = _names.restore_result(acc.result(llm._make_result), self.names)
        assert self.req is not None  # start() ran
        self.result = llm._with_extras(result, self.req, None, self.chunks)
        llm._settle(reserved, self.result)

    def fail(self, exc: BaseException) -> None:
        """A failure becomes the error result (or is raised, per raise_errors); the
        consumer stopping, a cancellation or an interruption ends the span and goes on."""
        if isinstance(exc, GeneratorExit):  # the consumer stopped reading: not a failure
            _telemetry.end_chat(self.span, None, None)
            raise exc
        if not isinstance(exc, Exception):  # cancelled, interrupted
            _telemetry.end_chat(self.span, None, exc)
            raise exc
        self.result = self.llm._stream_failed(self.span, exc, self.raise_errors, self.acc)

    def done(self) -> Iterator[dict[str, Any]]:
        """The end of every stream: the span ended, the structured answer, done."""
        llm, result = self.llm, self.result
        assert result is not None
        _telemetry.end_chat(self.span, result, None)
        req = self.req
        result = llm._with_output(result, req.output if req else None, self.raise_errors)
        yield from self.acc.final_partial(result)
        yield {"type": "done", "result": result}
