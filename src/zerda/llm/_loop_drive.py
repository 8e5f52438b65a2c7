"""The drivers of the tool loop's body: one body (:mod:`zerda.llm.loop`), two drivers.

The body is a generator, as the bodies :mod:`zerda.llm._drive` runs: it yields steps
``(target, name, args, kwargs)`` that the sync driver makes and the async one awaits as
``name + "_async"``, and the reply (or the exception) goes back into it. It also yields
events (dicts: ``tool_result``, ``turn``); a streamed run passes them on, a plain one drops
them. A streamed run makes each model turn with ``stream`` instead of ``generate``: its
events are passed on as they arrive, all but its ``done``, whose result is the step's reply
(the same result generate gives, DESIGN §7). Every driver ends with one
``{"type": "done", "result": ...}``: the run's result.

The run's ``invoke_agent`` span is made current only while a step is made, never across a
yield to the consumer of a streamed run (a generator resumes in its consumer's context).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Any

from zerda.llm import _telemetry

Event = dict[str, Any]
LoopBody = Generator[Any, Any, dict[str, Any]]
_END: Any = object()


class _Course:
    """Driving one body: what goes back into it next, its result, its span."""

    def __init__(self, body: LoopBody, llm: Any, resumed: bool) -> None:
        self.body = body
        self.span = _telemetry.start_agent(llm, resumed)
        self.reply: Any = None
        self.failure: BaseException | None = None
        self.result: dict[str, Any] | None = None

    def next(self) -> Any:
        """The body's next step or event; ``_END`` once it has returned its result."""
        with _telemetry.activate(self.span):
            try:
                if self.failure is None:
                    item = self.body.send(self.reply)
                else:
                    item = self.body.throw(self.failure)
            except StopIteration as done:
                self.result = done.value
                return _END
        self.reply, self.failure = None, None
        return item

    def make(self, target: Any, name: str, args: Any, kwargs: Any) -> None:
        with _telemetry.activate(self.span):
            try:
                self.reply = getattr(target, name)(*args, **kwargs)
            except BaseException as exc:  # cancelled or interrupted too: the body decides
                self.failure = exc

    async def make_async(self, target: Any, name: str, args: Any, kwargs: Any) -> None:
        with _telemetry.activate(self.span):
            try:
                self.reply = await getattr(target, name + "_async")(*args, **kwargs)
            except BaseException as exc:
                self.failure = exc

    def streamed(self, llm: Any, _name: str, args: Any, kwargs: Any) -> Iterator[Event]:
        """A model turn as ``llm.stream``: its events, its done result as the reply."""
        events = llm.stream(*args, **kwargs)
        try:
            while True:
                with _telemetry.activate(self.span):  # the turn's chat span nests under it
                    try:
                        event = next(events)
                    except StopIteration:
                        return self._missing_done()
                    except BaseException as exc:
                        self.failure = exc
                        return
                if event["type"] == "done":
                    self.reply = event["result"]
                    return
                yield event
        finally:
            events.close()

    async def streamed_async(
        self, llm: Any, _name: str, args: Any, kwargs: Any
    ) -> AsyncGenerator[Event, None]:
        events = llm.stream_async(*args, **kwargs)
        try:
            while True:
                with _telemetry.activate(self.span):
                    try:
                        event = await events.__anext__()
                    except StopAsyncIteration:
                        self._missing_done()
                        return
                    except BaseException as exc:
                        self.failure = exc
                        return
                if event["type"] == "done":
                    self.reply = event["result"]
                    return
                yield event
        finally:
            await events.aclose()

    def _missing_done(self) -> None:
        self.failure = RuntimeError("the model's stream ended without its done event")

    def ended(self) -> Event:
        """The run's done event; its span is ended first."""
        _telemetry.end_agent(self.span, self.result, None)
        return {"type": "done", "result": self.result}

    def failed(self, exc: BaseException) -> None:
        """The run stopped: its consumer left (no error) or it raised; the body is closed
        (its threads released)."""
        _telemetry.end_agent(self.span, None, None if isinstance(exc, GeneratorExit) else exc)
        self.body.close()


def drive_events(body: LoopBody, llm: Any, stream: bool, resumed: bool) -> Iterator[Event]:
    """The sync driver: the run's events (only its done event unless ``stream``)."""
    course = _Course(body, llm, resumed)
    try:
        while (item := course.next()) is not _END:
            if isinstance(item, dict):
                if stream:
                    yield item
            elif stream and item[1] == "generate":
                yield from course.streamed(*item)
            else:
                course.make(*item)
    except BaseException as exc:
        course.failed(exc)
        raise
    yield course.ended()


async def drive_events_async(
    body: LoopBody, llm: Any, stream: bool, resumed: bool
) -> AsyncIterator[Event]:
    """The async driver: as :func:`drive_events`, each step awaited."""
    course = _Course(body, llm, resumed)
    try:
        while (item := course.next()) is not _END:
            if isinstance(item, dict):
                if stream:
                    yield item
            elif stream and item[1] == "generate":
                turn = course.streamed_async(*item)
                try:  # async for does not close what it leaves early: closed here
                    async for event in turn:
                        yield event
                finally:
                    await turn.aclose()
            else:
                await course.make_async(*item)
    except BaseException as exc:
        course.failed(exc)
        raise
    yield course.ended()


def last_result(events: Iterator[Event]) -> dict[str, Any]:
    """A plain run's result: its only event is done."""
    result: dict[str, Any] = {}
    for event in events:
        result = event["result"]
    return result


async def last_result_async(events: AsyncIterator[Event]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    async for event in events:
        result = event["result"]
    return result
