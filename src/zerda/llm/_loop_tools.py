"""The calls of one turn of the tool loop (docs/loop.md): which tool answers a call, the
decision on each call (``approve=``, ``decisions=``, ``requires_approval``), and running
them: concurrently, each within its timeout, results in call order.

Nothing a tool does stops the loop: an exception, an unknown tool, arguments that do not
validate, a refused call or a timeout become an ``is_error`` tool result that tells the model
what went wrong. A tool's exception reaches the model as one line; its traceback stays in
the transcript's tool message (``"traceback"``, never sent) and is logged at DEBUG.

Sync functions run in the run's :class:`~zerda.llm._loop_threads.ToolThreads` (also from
``run_async``, so that a timed-out one is counted until it really ends); async functions and
:class:`ExecutableTool`\\ s run as tasks in ``run_async`` (cancelled at their timeout) and,
in the sync ``run``, to the end on a worker thread's own event loop.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
import os
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from zerda.llm import _telemetry
from zerda.llm._loop_threads import Job, Outcome, ToolThreads
from zerda.llm._tool_decorator import PAUSE, check_timeout, settings_of
from zerda.llm.executable import ExecutableTool
from zerda.llm.hosted import is_hosted
from zerda.llm.messages import tool_message as tool_result

logger = logging.getLogger("zerda")

Registry = dict[str, "Callable[..., Any] | ExecutableTool"]
Indexed = tuple[int, dict[str, Any]]  # a call and its position in the turn
REFUSED = "The user refused this tool call."
# The threads of a run without max_concurrency: the default of concurrent.futures.
DEFAULT_THREADS = min(32, (os.cpu_count() or 1) + 4)


class Verdict(NamedTuple):
    """What happens to a call: ``run`` (with edited ``arguments`` when not None), ``deny``
    or ``skip`` (answered with ``text``, not run) or ``pause``; ``approval`` is what a
    decision said ("approved", "edited", "denied"), None where none was asked."""

    action: str
    arguments: Any = None
    text: str | None = None
    approval: str | None = None


RUN = Verdict("run")


class Plan(NamedTuple):
    """A call of the turn, its position in the turn, and its verdict."""

    call: dict[str, Any]
    position: int
    verdict: Verdict

    def as_run(self) -> dict[str, Any]:
        """The call as it runs: with the edited arguments of an approval."""
        edited = self.verdict.arguments
        return self.call if edited is None else {**self.call, "arguments": edited}


class Answer(NamedTuple):
    call: dict[str, Any]  # as it ran
    message: dict[str, Any]  # the tool message


def call_key(call: Mapping[str, Any], index: int) -> Any:
    """How ``decisions=`` names a call: its id, or its position in the turn when it has none."""
    return call.get("id") or index


def verdict_of(value: Any, where: str) -> Verdict:
    """An approval's answer (True, False, a denial text, ``{"arguments": {...}}``, PAUSE)."""
    if value is PAUSE:
        return Verdict("pause")
    if value is True:
        return Verdict("run", approval="approved")
    if value is False or value == "":
        return Verdict("deny", text=REFUSED, approval="denied")
    if isinstance(value, str):
        return Verdict("deny", text=value, approval="denied")
    if _is_edit(value):
        return Verdict("run", arguments=dict(value["arguments"]), approval="edited")
    raise ValueError(
        f"{where}: expected True, False, a denial text, {{'arguments': {{...}}}} or "
        f"zerda.llm.PAUSE, not {value!r}"
    )


def _is_edit(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and set(value) == {"arguments"}
        and isinstance(value["arguments"], Mapping)
    )


# --- the tools of a run ---------------------------------------------------------------------


@dataclass(frozen=True)
class ToolTable:
    """Tool name -> what executes it, which tools need approval, their own timeouts."""

    registry: Registry
    approval: frozenset[str]
    timeouts: Mapping[str, float | None]
    default_timeout: float | None

    def timeout(self, name: str) -> float | None:
        return self.timeouts.get(name, self.default_timeout)


def tool_table(tools: Sequence[Any], default_timeout: float | None) -> ToolTable:
    """The table of ``tools`` (``run``'s list); a bad ``timeout`` or ``requires_approval``
    is a ValueError naming the tool."""
    registry = _registry(list(tools))
    settings = [
        _dict_settings(i, t)
        for i, t in enumerate(tools)
        if isinstance(t, dict) and not is_hosted(t)
    ]
    settings += [_executor_settings(name, fn) for name, fn in registry.items()]
    known = [s for s in settings if s is not None]
    return ToolTable(
        registry,
        frozenset(name for name, needs, _, _ in known if needs),
        {name: seconds for name, _, seconds, given in known if given},
        default_timeout,
    )


def _registry(tools: list[Any]) -> Registry:
    """Tool name -> what executes it: a Python function or an :class:`ExecutableTool`."""
    executors: Registry = {t.name: t for t in tools if isinstance(t, ExecutableTool)}
    rest = [t for t in tools if not isinstance(t, (ExecutableTool, dict))]
    if not rest:  # only dicts and executable tools: pydantic is not needed
        return executors
    from zerda.llm.functions import callable_registry  # pydantic: only for the loop's users

    return {**callable_registry(rest), **executors}


Settings = tuple[str, bool, "float | None", bool]  # name, needs approval, timeout, given


def _dict_settings(index: int, tool: dict[str, Any]) -> Settings | None:
    """``requires_approval`` and ``timeout`` of a unified or OpenAI-style tool dict."""
    inner = tool["function"] if isinstance(tool.get("function"), dict) else tool
    name = inner.get("name")
    if not isinstance(name, str):
        return None  # generate reports it
    merged = {**inner, **tool}
    return _checked(f"tools[{index}] ({name!r})", name, merged)


def _executor_settings(name: str, fn: Any) -> Settings:
    """What ``@tool`` set on a function, or the attributes of an ExecutableTool."""
    source = settings_of(fn) if not isinstance(fn, ExecutableTool) else fn
    if source is None:
        return name, False, None, False
    values = {
        "requires_approval": getattr(source, "requires_approval", False),
        "timeout": getattr(source, "timeout", None),
    }
    return _checked(f"tool {name!r}", name, values)


def _checked(where: str, name: str, values: Mapping[str, Any]) -> Settings:
    needs = values.get("requires_approval", False)
    if not isinstance(needs, bool):
        raise ValueError(f"{where}: requires_approval must be True or False, not {needs!r}")
    seconds = check_timeout(values.get("timeout"), f"{where}: timeout")
    return name, needs, seconds, values.get("timeout") is not None


# --- decisions ------------------------------------------------------------------------------


class Decisions:
    """The verdicts of a turn's calls, asked in call order, one after another (a person
    may be answering): a step target of the loop's body (sync ``verdicts``, async twin)."""

    def __init__(self, table: ToolTable, approve: Callable[[dict[str, Any]], Any] | None):
        self.table = table
        self.approve = approve

    def verdicts(self, calls: Sequence[Indexed], given: Mapping[Any, Verdict]) -> list[Plan]:
        """``calls``: (position in the turn, call); ``given``: the decisions of a resume."""
        plans = []
        for j, call in calls:
            answer = self._ask(call, j, given)
            if inspect.isawaitable(answer):  # an async approve in the sync run
                answer = run_to_end(answer)
            plans.append(self._plan(call, j, answer))
        return plans

    async def verdicts_async(
        self, calls: Sequence[Indexed], given: Mapping[Any, Verdict]
    ) -> list[Plan]:
        plans = []
        for j, call in calls:
            answer = self._ask(call, j, given)
            if inspect.isawaitable(answer):
                answer = await answer
            plans.append(self._plan(call, j, answer))
        return plans

    def _ask(self, call: dict[str, Any], j: int, given: Mapping[Any, Verdict]) -> Any:
        """A decision given at resume, else approve's answer; without approve, a tool that
        requires approval pauses and any other runs."""
        key = call_key(call, j)
        if key in given:
            return given[key]
        if self.approve is not None:
            return self.approve(call)
        return Verdict("pause") if call.get("name") in self.table.approval else RUN

    @staticmethod
    def _plan(call: dict[str, Any], j: int, answer: Any) -> Plan:
        if isinstance(answer, Verdict):
            return Plan(call, j, answer)
        return Plan(call, j, verdict_of(answer, f"approve() for tool call {call_key(call, j)!r}"))


def run_to_end(awaitable: Awaitable[Any]) -> Any:
    """An awaitable's result from sync code: on this thread's own event loop, or on a
    worker thread's when this thread already runs one (a notebook, an async framework)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running in this thread: the usual case
        return asyncio.run(_await(awaitable))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="zerda-approve") as pool:
        return pool.submit(asyncio.run, _await(awaitable)).result()


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


# --- running the calls ----------------------------------------------------------------------


class _Started(NamedTuple):
    """A call under way: where its answer goes, its span and timeout, its job or its task."""

    position: int
    call: dict[str, Any]
    span: Any
    approval: str | None
    timeout: float | None
    job: Job | None = None
    work: Callable[[Callable[[], None] | None], Awaitable[Outcome]] | None = None


class Runner:
    """Runs a turn's calls: a step target of the loop's body (``answers`` in the sync run,
    ``answers_async`` in the async one). Owns the run's threads (``close`` at the end)."""

    def __init__(self, table: ToolTable, max_concurrency: int | None) -> None:
        self.table = table
        self.limit = max_concurrency or DEFAULT_THREADS
        self.max_concurrency = max_concurrency
        self._threads: ToolThreads | None = None
        self._slots: Any = None  # run_async: an asyncio.Semaphore with max_concurrency

    def answers(self, plans: Sequence[Plan]) -> list[Answer]:
        done, started = self._start(plans, tasks=False)
        jobs = [s.job for s in started if s.job is not None]
        if jobs:
            self._pool().wait(jobs)
        return _in_order({**done, **{s.position: self._settled(s) for s in started}})

    async def answers_async(self, plans: Sequence[Plan]) -> list[Answer]:
        import asyncio

        if self._slots is None and self.max_concurrency:
            self._slots = asyncio.Semaphore(self.max_concurrency)
        done, started = self._start(plans, tasks=True)
        jobs = [s.job for s in started if s.job is not None]
        tasks = [s for s in started if s.work is not None]
        task_answers, _ = await asyncio.gather(
            asyncio.gather(*(self._task(s) for s in tasks)),
            self._pool().wait_async(jobs) if jobs else asyncio.sleep(0),
        )
        from_tasks = dict(zip((s.position for s in tasks), task_answers, strict=True))
        from_jobs = {s.position: self._settled(s) for s in started if s.job is not None}
        return _in_order({**done, **from_jobs, **from_tasks})

    def close(self) -> None:
        if self._threads is not None:
            self._threads.close()

    # --- one call ----------------------------------------------------------------------

    def _pool(self) -> ToolThreads:
        if self._threads is None:
            self._threads = ToolThreads(self.limit)
        return self._threads

    def _start(
        self, plans: Sequence[Plan], tasks: bool
    ) -> tuple[dict[int, Answer], list[_Started]]:
        """Answers the calls that do not run; starts the others (threads, or tasks to be
        awaited when ``tasks``)."""
        done: dict[int, Answer] = {}
        started: list[_Started] = []
        for plan in plans:
            if plan.verdict.action != "run":
                done[plan.position] = _not_run(plan)
                continue
            begun = self._begin(plan, tasks)
            if isinstance(begun, Answer):
                done[plan.position] = begun
            else:
                started.append(begun)
        return done, started

    def _begin(self, plan: Plan, tasks: bool) -> Answer | _Started:
        call = plan.as_run()
        span = _telemetry.start_tool(call)
        fn, kwargs = prepare_call(call, self.table.registry)
        if fn is None:  # not callable as asked: no thread needed
            message = tool_result(call, kwargs, is_error=True)
            _telemetry.end_tool(span, message, approval=plan.verdict.approval)
            return Answer(call, message)
        timeout = self.table.timeout(call["name"])
        base = _Started(plan.position, call, span, plan.verdict.approval, timeout)
        if tasks and _is_async(fn):
            return base._replace(work=lambda release: _call_async(fn, kwargs, timeout, release))
        job = Job(_in_thread(fn, kwargs, timeout, span), timeout)
        self._pool().submit(job)
        return base._replace(job=job)

    def _settled(self, started: _Started) -> Answer:
        job = started.job
        assert job is not None and job.settled is not None
        return self._answer(started, job.settled, job.settled_ns or None)

    async def _task(self, started: _Started) -> Answer:
        assert started.work is not None
        slots = self._slots
        if slots is not None:
            await slots.acquire()
        with _telemetry.activate(started.span):
            outcome = await started.work(slots.release if slots is not None else None)
        return self._answer(started, outcome, None)

    def _answer(self, started: _Started, outcome: Outcome, end_ns: int | None) -> Answer:
        message = message_for(started.call, outcome, self.limit)
        timed_out = started.timeout if outcome[0] in ("timeout", "starved") else None
        _telemetry.end_tool(
            started.span,
            message,
            approval=started.approval,
            timed_out=timed_out,
            end_ns=end_ns,
        )
        return Answer(started.call, message)


def _in_order(answers: dict[int, Answer]) -> list[Answer]:
    return [answers[i] for i in sorted(answers)]


def _not_run(plan: Plan) -> Answer:
    """A denied call (with its execute_tool span, marked denied) or a skipped one."""
    message = tool_result(plan.call, plan.verdict.text, is_error=True)
    if plan.verdict.action == "deny":
        span = _telemetry.start_tool(plan.call)
        _telemetry.end_tool(span, message, approval="denied")
    return Answer(plan.call, message)


def _is_async(fn: Any) -> bool:
    if isinstance(fn, ExecutableTool):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an instance with an async __call__
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _in_thread(fn: Any, kwargs: Any, timeout: float | None, span: Any) -> Callable[[], Outcome]:
    """What a thread runs: the call in a copy of this context, its span current (so spans
    the tool starts nest under it)."""
    context = contextvars.copy_context()

    def run() -> Outcome:
        return context.run(_in_span, span, fn, kwargs, timeout)

    return run


def _in_span(span: Any, fn: Any, kwargs: Any, timeout: float | None) -> Outcome:
    with _telemetry.activate(span):
        return _call_sync(fn, kwargs, timeout)


def _call_sync(fn: Any, kwargs: Any, timeout: float | None) -> Outcome:
    """Runs a call on this (worker) thread; an async tool on this thread's own loop."""
    try:
        if isinstance(fn, ExecutableTool):
            return ("output", fn.call(kwargs))
        value = fn(**kwargs)
        if inspect.isawaitable(value):
            import asyncio

            return asyncio.run(_awaited(value, timeout))  # type: ignore[no-any-return]
        return ("content", to_content(value))
    except BaseException as exc:  # reported to the waiter, never lost
        return ("raised", exc)


async def _awaited(awaitable: Awaitable[Any], timeout: float | None) -> Outcome:
    import asyncio

    return await _within(asyncio.ensure_future(awaitable), timeout, _as_content)


async def _call_async(
    fn: Any, kwargs: Any, timeout: float | None, release: Callable[[], None] | None
) -> Outcome:
    """Runs a call as a task, cancelled at its timeout; ``release`` is called when the task
    really ends (a slot of max_concurrency)."""
    import asyncio

    try:
        if isinstance(fn, ExecutableTool):
            awaitable = fn.call_async(kwargs)
        else:
            awaitable = fn(**kwargs)
        task = asyncio.ensure_future(awaitable)
    except Exception as exc:
        if release is not None:
            release()
        return ("raised", exc)
    if release is not None:
        task.add_done_callback(lambda _: release())
    return await _within(
        task, timeout, _as_output if isinstance(fn, ExecutableTool) else _as_content
    )


async def _within(task: Any, timeout: float | None, convert: Callable[[Any], Outcome]) -> Outcome:
    """The task's outcome, or ("timeout", seconds) once cancelled at its timeout. A
    cancelled task is not awaited: one that ignores its cancellation is abandoned."""
    import asyncio

    task.add_done_callback(_retrieve)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except BaseException:  # the run itself was cancelled: its tools too
        task.cancel()
        raise
    if not done:
        task.cancel()
        return ("timeout", timeout)
    if task.cancelled():
        return ("raised", asyncio.CancelledError("the tool was cancelled"))
    if task.exception() is not None:
        return ("raised", task.exception())
    try:
        return convert(task.result())
    except Exception as exc:
        return ("raised", exc)


def _retrieve(task: Any) -> None:
    """Reads an abandoned task's exception, so that asyncio does not log it as lost."""
    if not task.cancelled():
        task.exception()


def _as_content(value: Any) -> Outcome:
    return ("content", to_content(value))


def _as_output(value: Any) -> Outcome:
    return ("output", value)


# --- calls and their messages -----------------------------------------------------------------


def prepare_call(call: dict[str, Any], registry: Registry) -> tuple[Any, Any]:
    """(function, validated kwargs), (executable tool, arguments) or (None, error text)."""
    if call["name"] not in registry:
        known = ", ".join(sorted(registry)) or "none"
        return None, f"Unknown tool {call['name']!r}. Available tools: {known}."
    fn = registry[call["name"]]
    if isinstance(fn, ExecutableTool):  # it validates its own arguments (an MCP server does)
        return _executable_arguments(fn, call["arguments"])
    from zerda.llm.functions import validate_arguments

    try:
        return fn, validate_arguments(fn, call["arguments"])
    except ValueError as exc:
        return None, str(exc)


def _executable_arguments(tool: ExecutableTool, arguments: Any) -> tuple[Any, Any]:
    if isinstance(arguments, dict) and set(arguments) == {"_raw"}:
        return None, (
            f"The arguments for tool {tool.name!r} were not valid JSON: {arguments['_raw']!r}. "
            "Call it again with a JSON object that matches its parameters schema."
        )
    return tool, arguments


def to_content(output: Any) -> Any:
    """A tool's return value as tool message content (text, a dict or a list): text as it
    is, anything else as the JSON-ready value pydantic makes of it (Enum members,
    datetimes, dataclasses, models, sets and tuples, nested anywhere; NaN as null, as
    pydantic's JSON mode does); what pydantic cannot serialise becomes its ``str()``."""
    if isinstance(output, str):
        return output
    from pydantic_core import to_jsonable_python

    value = to_jsonable_python(output, serialize_unknown=True, inf_nan_mode="null")
    if isinstance(value, (str, dict, list)):
        return value
    return json.dumps(value)  # a number, a bool or None: tool content is text, dict or list


def message_for(call: dict[str, Any], outcome: Outcome, limit: int) -> dict[str, Any]:
    """The tool message for a call's outcome."""
    kind, value = outcome
    if kind == "content":
        return tool_result(call, value)
    if kind == "output":
        return tool_result(call, value.content, is_error=value.is_error)
    if kind == "raised":
        if isinstance(value, (KeyboardInterrupt, SystemExit)):
            raise value  # the process is stopping: not the tool's answer
        return tool_failed(call, value)
    text = f"{call['name']} timed out after {value:g} s"
    if kind == "starved":
        text += (
            " without starting: every worker thread (max_concurrency="
            f"{limit}) was still running a tool that had timed out"
        )
    return tool_result(call, text, is_error=True)


def tool_failed(call: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The tool message for a tool that raised: one line for the model; the traceback kept
    beside it in the transcript (the history check drops it, so it is never sent)."""
    logger.debug("tool %r raised", call.get("name"), exc_info=exc)
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {**tool_result(call, f"{type(exc).__name__}: {exc}", is_error=True), "traceback": trace}
