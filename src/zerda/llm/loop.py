"""The tool loop (docs/loop.md): generate, run the tools the model asked for, append their
results, repeat until the model stops calling tools, or the run pauses for an approval,
meets a budget, a ``stop_on`` tool or ``max_turns``.

``run`` / ``run_async`` return the run's result; with ``stream=True`` (or ``run_stream`` /
``run_stream_async``) they give one iterator over the whole loop: each turn's stream
events, a ``tool_result`` event per answered call, a ``turn`` event before each later model
turn, and one ``done`` event holding the result a plain run returns.

The loop is written once (:func:`_body`); :mod:`zerda.llm._loop_drive` runs it sync or
async, plain or streamed. Its parts: :mod:`zerda.llm._loop_state` (options, history,
budget, result), :mod:`zerda.llm._loop_tools` (decisions, running the calls) and
:mod:`zerda.llm._loop_threads` (the threads of sync tools).

Nothing a tool does stops the loop: an exception, an unknown tool, arguments that do not
validate, a refused call or a timeout become an ``is_error`` tool result that tells the
model what went wrong, so it can correct itself. A tool's exception reaches the model as one
line; its traceback stays in the transcript's tool message (``"traceback"``, never sent) and
is logged at DEBUG on the ``zerda`` logger.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from typing import Any, Protocol

from zerda.llm._drive import NO_KWARGS
from zerda.llm._loop_drive import (
    Event,
    LoopBody,
    drive_events,
    drive_events_async,
    last_result,
    last_result_async,
)
from zerda.llm._loop_state import RunState, loop_options
from zerda.llm._loop_tools import Answer, Indexed, Plan
from zerda.llm.errors import OutputValidationError
from zerda.llm.messages import tool_message as tool_result

__all__ = ["run", "run_async", "run_stream", "run_stream_async"]

# A part of the body: None when the loop goes on, else the run's result.
Part = Generator[Any, Any, "dict[str, Any] | None"]

# What a call the model makes after final_answer's tool_choice="none" is told: a row that
# cannot enforce "none" (docs/loop.md) may still call a tool.
NO_MORE_TOOLS = "Not run: this run takes no more tool calls. Answer with what you have now."


class LLMLike(Protocol):
    """What the loop drives: an interface (``zerda.llm.base.BaseLLMInterface``) or a
    fallback over several. A Protocol, so that this module and base.py do not import each
    other."""

    def generate(self, messages: Any, **kwargs: Any) -> dict[str, Any]: ...

    async def generate_async(self, messages: Any, **kwargs: Any) -> dict[str, Any]: ...

    def stream(self, messages: Any, **kwargs: Any) -> Iterator[dict[str, Any]]: ...

    def stream_async(self, messages: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]: ...


# --- the loop, written once -------------------------------------------------------------------


def _body(llm: LLMLike, state: RunState) -> LoopBody:
    """The run: a paused run's calls first, then turns until one ends the run."""
    try:
        ended = yield from _answer(llm, state, state.unanswered, state.given)
        while ended is None:
            ended = yield from _turn(llm, state)
        return ended
    finally:
        state.close()


def _turn(llm: LLMLike, state: RunState) -> Part:
    """One model turn and its calls; None when the loop goes on."""
    result, raised = yield from _generate(llm, state, None)
    if _answer_retry(result, raised, state.retries) and state.turns < state.opts.max_turns:
        state.retries -= 1
        state.history += [result["message"], _output_feedback(result)]
        return None
    if not result["tool_calls"] or result["message"] is None:
        return _finished(state, result)
    state.add_message(result["message"], result)
    return (yield from _answer(llm, state, list(enumerate(result["tool_calls"])), {}))


def _generate(
    llm: LLMLike, state: RunState, extra: Mapping[str, Any] | None
) -> Generator[Any, Any, tuple[dict[str, Any], OutputValidationError | None]]:
    """A model turn (a ``turn`` event before it when something came before)."""
    if state.turns or state.answered:
        yield {"type": "turn", "index": state.turns + 1}
    raised = None
    try:
        result = yield llm, "generate", (list(state.history),), state.request(extra)
    except OutputValidationError as exc:
        raised, result = exc, _generated(exc)
    state.count(result)
    return result, raised


def _answer(llm: LLMLike, state: RunState, calls: list[Indexed], given: Mapping[Any, Any]) -> Part:
    """Decides, runs and answers ``calls`` (of the last assistant message); the run's
    result when that ends it, else None."""
    if not calls:
        return None
    plans = yield state.decide, "verdicts", (calls, given), NO_KWARGS
    paused = [p for p in plans if p.verdict.action == "pause"]
    if paused and any(not c.get("id") for c in state.current_calls()):
        # Results of id-less calls are matched by position: none is added until all can be.
        return state.result(state.last, "paused", paused)
    plans = state.within_budget(plans)
    running = [p for p in plans if p.verdict.action != "pause"]
    answers = yield state.runner, "answers", (running,), NO_KWARGS
    yield from _answered(state, answers)
    reason = state.stop_after(plans, answers)
    if reason in ("budget", "max_turns") and state.opts.final_answer:
        return (yield from _final_answer(llm, state, reason))
    return _ended(state, reason, paused)


def _answered(state: RunState, answers: Sequence[Answer]) -> Part:
    """The answers into the history, each as a ``tool_result`` event."""
    state.add_answers(answers)
    for answer in answers:
        yield _tool_result_event(answer)
    return None


def _ended(state: RunState, reason: str | None, paused: Sequence[Plan]) -> dict[str, Any] | None:
    if reason is None:
        return None
    stop_reason = reason if reason in ("paused", "budget") else None
    return state.result(state.last, stop_reason, paused)


def _final_answer(llm: LLMLike, state: RunState, reason: str) -> Part:
    """One more turn with tools disabled (tool_choice "none"); a call the row still lets
    through is answered as not run and the model asked once more, so that no call is left
    without a result."""
    stop_reason = "budget" if reason == "budget" else None
    for _ in range(2):
        result, _raised = yield from _generate(llm, state, {"tool_choice": "none"})
        if not result["tool_calls"] or result["message"] is None:
            return _finished(state, result, stop_reason)
        state.add_message(result["message"], result)
        refused = [Answer(c, tool_result(c, NO_MORE_TOOLS, True)) for c in result["tool_calls"]]
        yield from _answered(state, refused)
    return state.result(state.last, stop_reason)


def _finished(
    state: RunState, result: dict[str, Any], stop_reason: str | None = None
) -> dict[str, Any]:
    if result["message"] is not None:
        state.history.append(result["message"])
    return state.result(result, stop_reason)


def _tool_result_event(answer: Answer) -> Event:
    message = answer.message
    return {
        "type": "tool_result",
        "call": answer.call,
        "result": message["content"],
        "is_error": message["is_error"],
    }


# --- structured output (DESIGN §13) ------------------------------------------------------------


def _output_feedback(result: dict[str, Any]) -> dict[str, Any]:
    """The user message that sends an invalid structured answer's error back."""
    return {
        "role": "user",
        "content": (
            f"Your answer is not valid: {result['parse_error']}\n"
            "Answer again, with JSON that matches the requested schema exactly."
        ),
    }


def _generated(error: OutputValidationError) -> dict[str, Any]:
    """The result an invalid structured answer raised (raise_errors=True) carries."""
    if error.result is None:
        raise error
    return error.result


def _answer_retry(
    result: dict[str, Any], raised: OutputValidationError | None, retries: int
) -> bool:
    """Whether an invalid structured answer gets another turn; raises the error when
    errors are raised and no retry is left."""
    if "parse_error" not in result or result["tool_calls"]:
        return False
    if retries > 0:
        return True
    if raised is not None:
        raise raised
    return False


# --- public API --------------------------------------------------------------------------------


def run(
    llm: LLMLike,
    messages: Any,
    *,
    tools: Sequence[Any] = (),
    stream: bool = False,
    **arguments: Any,
) -> Any:
    """Runs the loop with ``llm.generate`` (``llm.stream`` when ``stream``); see the module
    docstring and docs/loop.md. The loop's own arguments (``max_turns``, ``approve``,
    ``decisions``, ``tool_timeout``, ``budget``, ``stop_on``, ``final_answer``,
    ``max_concurrency``, ``on_tool_call``, ``output_retries``: :data:`_DEFAULTS`) are taken
    out of ``arguments``; the others go to each turn's call. Returns the run's result, or with
    ``stream=True`` an iterator over its events."""
    body, resumed = _start(llm, messages, tools, arguments)
    events = drive_events(body, llm, stream, resumed)
    return events if stream else last_result(events)


async def run_async(
    llm: LLMLike,
    messages: Any,
    *,
    tools: Sequence[Any] = (),
    stream: bool = False,
    **arguments: Any,
) -> Any:
    """:func:`run` with ``generate_async`` / ``stream_async``; with ``stream=True`` the
    awaited value is an async iterator over the run's events (:func:`run_stream_async`
    gives it without the await)."""
    body, resumed = _start(llm, messages, tools, arguments)
    events = drive_events_async(body, llm, stream, resumed)
    return events if stream else await last_result_async(events)


def _start(
    llm: LLMLike, messages: Any, tools: Sequence[Any], arguments: dict[str, Any]
) -> tuple[LoopBody, bool]:
    """The run's body and whether it resumes a paused run: the loop's own arguments
    (checked, with their defaults) split from those each turn's call gets."""
    kwargs = {k: v for k, v in arguments.items() if k not in _DEFAULTS}
    options = {**_DEFAULTS, **{k: v for k, v in arguments.items() if k in _DEFAULTS}}
    # every argument is checked here, before anything is sent
    state = RunState(messages, tools, loop_options(**options), kwargs)
    return _body(llm, state), state.resumed


def run_stream(llm: LLMLike, messages: Any, **arguments: Any) -> Iterator[Event]:
    """``run(..., stream=True)``: the whole loop as one iterator of events."""
    events: Iterator[Event] = run(llm, messages, stream=True, **arguments)
    return events


def run_stream_async(llm: LLMLike, messages: Any, **arguments: Any) -> AsyncIterator[Event]:
    """``run_async(..., stream=True)`` without the await, for ``async for``: the arguments
    are checked when it is called, the run starts at the first event asked for."""
    tools = arguments.pop("tools", ())
    body, resumed = _start(llm, messages, tools, arguments)
    return drive_events_async(body, llm, True, resumed)


# run's own arguments (loop_options) and their defaults, as run and run_async declare them.
_DEFAULTS: dict[str, Any] = {
    "max_turns": 10,
    "on_tool_call": None,
    "output_retries": 0,
    "approve": None,
    "decisions": None,
    "tool_timeout": None,
    "budget": None,
    "stop_on": (),
    "final_answer": False,
    "max_concurrency": None,
}
