"""The automatic tool loop (DESIGN.md §8): generate, run the tools the model asked for,
append their results, repeat until the model stops calling tools or ``max_turns``.

Nothing a tool does stops the loop: an exception, an unknown tool, arguments that do not
validate or a refused call become an ``is_error`` tool result that tells the model what went
wrong, so it can correct itself. A tool's exception reaches the model as one line; its
traceback stays in the transcript's tool message (``"traceback"``, never sent) and is logged
at DEBUG on the ``zerda`` logger.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import traceback
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from zerda.llm import _telemetry
from zerda.llm._drive import NO_KWARGS, Body, drive, drive_async
from zerda.llm._request import normalize_tools
from zerda.llm.errors import OutputValidationError, ZerdaError
from zerda.llm.executable import ExecutableTool, ToolOutput
from zerda.llm.messages import tool_result
from zerda.llm.usage import add_usage


class LLMLike(Protocol):
    """What the loop drives: an interface (``zerda.llm.base.BaseLLMInterface``) or a
    fallback over several. A Protocol, so that this module and base.py do not import each
    other."""

    def generate(self, messages: Any, **kwargs: Any) -> dict[str, Any]: ...

    async def generate_async(self, messages: Any, **kwargs: Any) -> dict[str, Any]: ...


logger = logging.getLogger("zerda")

Approver = Callable[[dict[str, Any]], "bool | Awaitable[bool]"]
Registry = dict[str, "Callable[..., Any] | ExecutableTool"]


def _setup(
    tools: Sequence[Any], messages: Any, max_turns: int
) -> tuple[list[Any] | None, Registry, list[Any]]:
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, not {max_turns}")
    history = (
        [{"role": "user", "content": messages}] if isinstance(messages, str) else list(messages)
    )
    try:
        unified: list[Any] | None = normalize_tools(tools)
    except ZerdaError:
        unified = list(tools)  # generate reports the problem in its usual error shape
    return unified, _registry(list(tools)), history


def _registry(tools: list[Any]) -> Registry:
    """Tool name -> what executes it: a Python function or an :class:`ExecutableTool`."""
    executors: Registry = {t.name: t for t in tools if isinstance(t, ExecutableTool)}
    rest = [t for t in tools if not isinstance(t, (ExecutableTool, dict))]
    if not rest:  # only dicts and executable tools: pydantic is not needed
        return executors
    from zerda.llm.functions import callable_registry  # pydantic: only for the loop's users

    return {**callable_registry(rest), **executors}


def _to_content(output: Any) -> Any:
    """A tool's return value as tool message content (text, a dict or a list): text as it
    is, anything else as the JSON-ready value pydantic makes of it (Enum members, datetimes, dataclasses, models,
    sets and tuples, nested anywhere; NaN as null, as pydantic's JSON mode does); what
    pydantic cannot serialise becomes its ``str()``."""
    if isinstance(output, str):
        return output
    from pydantic_core import to_jsonable_python

    value = to_jsonable_python(output, serialize_unknown=True, inf_nan_mode="null")
    if isinstance(value, (str, dict, list)):
        return value
    return json.dumps(value)  # a number, a bool or None: tool content is text, dict or list


def _refusal(call: dict[str, Any], registry: Registry) -> str | None:
    """Why ``call`` cannot run, in words for the model; None when it can."""
    if call["name"] not in registry:
        known = ", ".join(sorted(registry)) or "none"
        return f"Unknown tool {call['name']!r}. Available tools: {known}."
    return None


def _prepare_call(call: dict[str, Any], registry: Registry) -> tuple[Any, Any]:
    """(function, validated kwargs), (executable tool, arguments) or (None, error text)."""
    refusal = _refusal(call, registry)
    if refusal:
        return None, refusal
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


def _output_message(call: dict[str, Any], output: ToolOutput) -> dict[str, Any]:
    return tool_result(call, output.content, is_error=output.is_error)


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _tool_failed(call: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The tool message for a tool that raised: one line for the model; the traceback kept
    beside it in the transcript (the history check drops it, so it is never sent)."""
    logger.debug("tool %r raised", call.get("name"), exc_info=exc)
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {**tool_result(call, _error_text(exc), is_error=True), "traceback": trace}


def _run_to_end(awaitable: Awaitable[Any]) -> Any:
    """An async tool's result in the sync loop. Inside a running event loop (a notebook,
    an async framework) ``asyncio.run`` is refused, so the tool runs on a worker thread's
    own loop while this thread waits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running in this thread: the usual case
        return asyncio.run(_await(awaitable))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="zerda-tool") as pool:
        return pool.submit(asyncio.run, _await(awaitable)).result()


def _finish(result: dict[str, Any], history: list[Any], usage: Any, turns: int) -> dict[str, Any]:
    return {**result, "messages": history, "usage": usage, "turns": turns}


def _output_feedback(result: dict[str, Any]) -> dict[str, Any]:
    """The user message that sends an invalid structured answer's error back (DESIGN §13)."""
    return {
        "role": "user",
        "content": (
            f"Your answer is not valid: {result['parse_error']}\n"
            "Answer again, with JSON that matches the requested schema exactly."
        ),
    }


def _generated(result: dict[str, Any] | OutputValidationError) -> dict[str, Any]:
    """The result of one turn; an invalid structured answer raised (raise_errors=True)
    is the result it carries."""
    if isinstance(result, OutputValidationError):
        if result.result is None:
            raise result
        return result.result
    return result


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


def _run_call(call: dict[str, Any], registry: Registry, approve: Approver | None) -> dict[str, Any]:
    with _telemetry.tool(call) as span:
        message = _execute(call, registry, approve)
        _telemetry.record_tool_result(span, message)
        return message


def _execute(call: dict[str, Any], registry: Registry, approve: Approver | None) -> dict[str, Any]:
    if approve is not None and not approve(call):
        return tool_result(call, "The user refused this tool call.", is_error=True)
    fn, kwargs = _prepare_call(call, registry)
    if fn is None:
        return tool_result(call, kwargs, is_error=True)
    try:
        if isinstance(fn, ExecutableTool):
            return _output_message(call, fn.call(kwargs))
        output = fn(**kwargs)
        if inspect.isawaitable(output):  # an async tool in the sync loop: run it to the end
            output = _run_to_end(output)
        content = _to_content(output)
    except Exception as exc:
        return _tool_failed(call, exc)
    return tool_result(call, content)


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


class _Tools:
    """The tools of one turn (a step target of :mod:`zerda.llm._drive`): one after another
    in the sync loop; concurrently in the async one (async tools on the event loop, sync
    tools in threads), results kept in call order."""

    @staticmethod
    def run(calls: list[Any], registry: Registry, approve: Approver | None) -> list[Any]:
        return [_run_call(c, registry, approve) for c in calls]

    @staticmethod
    async def run_async(
        calls: list[Any], registry: Registry, approve: Approver | None
    ) -> list[Any]:
        return list(await asyncio.gather(*(_run_call_async(c, registry, approve) for c in calls)))


def _in_span(llm: LLMLike, body: Body[dict[str, Any]]) -> Body[dict[str, Any]]:
    """``body`` (the loop) in its ``invoke_agent`` span."""
    with _telemetry.agent(llm) as span:
        result = yield from body
        _telemetry.record_result(span, result)
        return result


def _turns(
    llm: LLMLike,
    messages: Any,
    tools: Sequence[Any],
    max_turns: int,
    on_tool_call: Approver | None,
    retries: int,
    kwargs: dict[str, Any],
) -> Body[dict[str, Any]]:
    """The loop, written once: it yields each turn's generate and each turn's tools, which
    ``run`` makes and ``run_async`` awaits."""
    unified, registry, history = _setup(tools, messages, max_turns)
    usage = None
    for turn in range(1, max_turns + 1):
        raised = None
        try:
            result = yield llm, "generate", (history,), {"tools": unified, **kwargs}
        except OutputValidationError as exc:
            raised, result = exc, _generated(exc)
        usage = add_usage(usage, result["usage"])
        if _answer_retry(result, raised, retries) and turn < max_turns:
            retries -= 1
            history = [*history, result["message"], _output_feedback(result)]
            continue
        if not result["tool_calls"] or result["message"] is None:
            return _finish(
                result, history + ([result["message"]] if result["message"] else []), usage, turn
            )
        outputs = yield _Tools, "run", (result["tool_calls"], registry, on_tool_call), NO_KWARGS
        history = [*history, result["message"], *outputs]
    return _finish(result, history, usage, max_turns)


def run(
    llm: LLMLike,
    messages: Any,
    *,
    tools: Sequence[Any] = (),
    max_turns: int = 10,
    on_tool_call: Approver | None = None,
    output_retries: int = 0,
    **kwargs: Any,
) -> dict[str, Any]:
    """Runs the loop with ``llm.generate``; tools run one after another, in call order.

    Returns the last result plus ``messages`` (the whole transcript, ready to continue),
    ``usage`` summed over all turns and ``turns``. Reaching ``max_turns`` is not an error:
    the last result comes back with its stop_reason unchanged. With ``response_format``
    the loop ends on the parsed answer; ``output_retries`` invalid answers are sent back
    to the model, with their validation error, for another try.
    """
    body = _turns(llm, messages, tools, max_turns, on_tool_call, output_retries, kwargs)
    return drive(_in_span(llm, body))


async def run_async(
    llm: LLMLike,
    messages: Any,
    *,
    tools: Sequence[Any] = (),
    max_turns: int = 10,
    on_tool_call: Approver | None = None,
    output_retries: int = 0,
    **kwargs: Any,
) -> dict[str, Any]:
    """The loop with ``llm.generate_async``; the tools of one turn run concurrently (async
    tools on the event loop, sync tools in threads), results kept in call order."""
    body = _turns(llm, messages, tools, max_turns, on_tool_call, output_retries, kwargs)
    return await drive_async(_in_span(llm, body))


async def _run_call_async(
    call: dict[str, Any], registry: Registry, approve: Approver | None
) -> dict[str, Any]:
    with _telemetry.tool(call) as span:
        message = await _execute_async(call, registry, approve)
        _telemetry.record_tool_result(span, message)
        return message


async def _execute_async(
    call: dict[str, Any], registry: Registry, approve: Approver | None
) -> dict[str, Any]:
    if approve is not None:
        verdict = approve(call)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if not verdict:
            return tool_result(call, "The user refused this tool call.", is_error=True)
    fn, kwargs = _prepare_call(call, registry)
    if fn is None:
        return tool_result(call, kwargs, is_error=True)
    try:
        if isinstance(fn, ExecutableTool):
            return _output_message(call, await fn.call_async(kwargs))
        if inspect.iscoroutinefunction(fn):
            output = await fn(**kwargs)
        else:  # a blocking tool must not stall the event loop
            output = await asyncio.to_thread(fn, **kwargs)
            if inspect.isawaitable(output):
                output = await output
        content = _to_content(output)
    except Exception as exc:
        return _tool_failed(call, exc)
    return tool_result(call, content)
