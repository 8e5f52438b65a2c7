"""OpenTelemetry spans after the GenAI semantic conventions (docs/telemetry.md).

When ``opentelemetry-api`` is importable (the ``otel`` extra), Zerda starts spans on the global
tracer provider, with no call to opt in: ``chat`` per generate / stream call (retries happen
inside it), ``execute_tool`` per tool the loop runs, ``invoke_agent`` per ``run``, parent of
the others. Without the package nothing is imported: the first span asks for it once, and
every later call costs one global lookup. With it but no tracer provider configured, no span
is made either (the spans would be dropped).

Message content, tool arguments and tool results are recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true`` (the variable the
OpenTelemetry GenAI instrumentations read), because they may hold personal data.
Conventions: https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
logger = logging.getLogger("zerda")
_UNSET: Any = object()
_trace: Any = _UNSET  # the opentelemetry.trace module; None when it is not installed
_tracer: Any = None
_NO_SPAN: AbstractContextManager[None] = nullcontext()

# Zerda's usage keys -> the conventions' attributes; keys another version lacks are skipped.
_USAGE = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cache_read_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
    "reasoning_tokens": "gen_ai.usage.reasoning.output_tokens",
}
_REQUEST = {
    "max_tokens": "gen_ai.request.max_tokens",
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
}


def tracer() -> Any:
    """The tracer; None when opentelemetry-api is not installed (looked up once) or when no
    tracer provider is configured (checked each time: one may be set at any moment)."""
    global _trace, _tracer
    if _trace is _UNSET:
        try:
            from opentelemetry import trace
        except ImportError:
            _trace = None
        else:
            from zerda import __version__

            # A proxy: it follows the global provider, whenever that is set.
            _trace, _tracer = trace, trace.get_tracer("zerda", __version__)
    if _trace is None:
        return None
    provider = _trace.get_tracer_provider()
    if isinstance(provider, (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)):
        return None  # nothing would record the spans
    return _tracer


def capture_content() -> bool:
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in ("true", "1")


# --- spans --------------------------------------------------------------------------------


def chat(llm: Any, messages: Any, kwargs: Mapping[str, Any]) -> AbstractContextManager[Any]:
    """The current ``chat`` span around one generate call (None without opentelemetry)."""
    if tracer() is None:
        return _NO_SPAN
    return _current(f"chat {llm.model}", "CLIENT", _chat_attributes(llm, messages, kwargs))


def start_chat(llm: Any, messages: Any, kwargs: Mapping[str, Any]) -> Any:
    """A ``chat`` span for a stream, started but not made current: a generator is resumed in
    its consumer's context, so attaching a context across its yields would leak it."""
    t = tracer()
    if t is None:
        return None
    kind = _kind("CLIENT")
    attributes = _chat_attributes(llm, messages, kwargs)
    return t.start_span(f"chat {llm.model}", kind=kind, attributes=attributes)


def start_agent(llm: Any, resumed: bool = False) -> Any:
    """The ``invoke_agent`` span of one ``run``, started but not made current: a streamed
    run is a generator, so the loop makes it current around each step only (:func:`activate`).
    A run that resumes a paused one says so (``zerda.run.resumed``)."""
    t = tracer()
    if t is None:
        return None
    attributes = _drop_none(
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": getattr(llm, "provider", None),
            "gen_ai.request.model": getattr(llm, "model", None),
            "zerda.run.resumed": resumed or None,
        }
    )
    return t.start_span("invoke_agent", kind=_kind("INTERNAL"), attributes=attributes)


def start_tool(call: Mapping[str, Any]) -> Any:
    """The ``execute_tool`` span of one call, started but not current: the call runs on a
    worker thread or in a task, where :func:`activate` makes it current; it ends when the
    call is answered (:func:`end_tool`), which for a timed-out call is before its thread
    ends."""
    t = tracer()
    if t is None:
        return None
    attributes = _drop_none(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.get("name"),
            "gen_ai.tool.call.id": call.get("id"),
            "gen_ai.tool.type": "function",
        }
    )
    if capture_content():
        attributes["gen_ai.tool.call.arguments"] = _json(call.get("arguments"))
    return t.start_span(
        f"execute_tool {call.get('name')}", kind=_kind("INTERNAL"), attributes=attributes
    )


def activate(span: Any) -> AbstractContextManager[Any]:
    """``span`` made current in this context while the block lasts; it is not ended."""
    if span is None:
        return _NO_SPAN
    return _trace.use_span(  # type: ignore[no-any-return]
        span, end_on_exit=False, record_exception=False, set_status_on_exception=False
    )


@contextmanager
def _current(name: str, kind: str, attributes: dict[str, Any]) -> Iterator[Any]:
    with _tracer.start_as_current_span(
        name,
        kind=_kind(kind),
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as exc:
            _set_error(span, getattr(exc, "type", None) or type(exc).__qualname__)
            raise


# --- results ------------------------------------------------------------------------------


def record_result(span: Any, result: Mapping[str, Any] | None) -> None:
    """Usage, finish reason and error status of a generate, stream or run result."""
    if span is None or result is None:
        return
    stop = result.get("stop_reason")
    if stop:
        span.set_attribute("gen_ai.response.finish_reasons", (stop,))
    for key, attribute in _USAGE.items():
        value = (result.get("usage") or {}).get(key)
        if isinstance(value, int):
            span.set_attribute(attribute, value)
    error = result.get("error")
    if error:
        _set_error(span, error.get("type") or "unknown")
    elif capture_content() and result.get("message") is not None:
        span.set_attribute("gen_ai.output.messages", _json([result["message"]]))


def end_chat(span: Any, result: Mapping[str, Any] | None, error: BaseException | None) -> None:
    """Ends a stream's span: its result, or the exception that ended it early."""
    if span is None:
        return
    if error is not None:
        _set_error(span, getattr(error, "type", None) or type(error).__qualname__)
    record_result(span, result)
    span.end()


def end_agent(span: Any, result: Mapping[str, Any] | None, error: BaseException | None) -> None:
    """Ends a run's span; a paused run records the pause (``zerda.run.paused`` and an
    event listing the ids of the calls awaiting a decision)."""
    if span is None:
        return
    if result is not None and result.get("stop_reason") == "paused":
        ids = tuple(str(c.get("id")) for c in result.get("pending") or ())
        span.set_attribute("zerda.run.paused", True)
        span.add_event("zerda.run.paused", {"zerda.run.pending_call_ids": ids})
    end_chat(span, result, error)


def end_tool(
    span: Any,
    message: Mapping[str, Any],
    *,
    approval: str | None = None,
    timed_out: float | None = None,
    end_ns: int | None = None,
) -> None:
    """Ends a call's span: its result, the decision on it (``zerda.tool.approval``:
    approved, edited, denied; ``error.type`` ``denied``) and a timeout (``error.type``
    ``timeout``, ``zerda.tool.timeout`` in seconds); ``end_ns``: when it was answered."""
    if span is None:
        return
    record_tool_result(span, message)
    if approval is not None:
        span.set_attribute("zerda.tool.approval", approval)
        if approval == "denied":
            _set_error(span, "denied")
    if timed_out is not None:
        span.set_attribute("zerda.tool.timeout", timed_out)
        _set_error(span, "timeout")
    span.end(end_time=end_ns)


def record_tool_result(span: Any, message: Mapping[str, Any]) -> None:
    if span is None:
        return
    if message.get("is_error"):
        _set_error(span, "tool_error")
    if capture_content():
        span.set_attribute("gen_ai.tool.call.result", _json(message.get("content")))


# --- helpers ------------------------------------------------------------------------------


def _chat_attributes(llm: Any, messages: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    attributes = _drop_none(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": llm.provider,
            "gen_ai.request.model": llm.model,
            **{attr: kwargs.get(key) for key, attr in _REQUEST.items()},
        }
    )
    if capture_content():
        history = [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
        attributes["gen_ai.input.messages"] = _json(history)
        if kwargs.get("system") is not None:
            attributes["gen_ai.system_instructions"] = _json(kwargs["system"])
    return attributes


def _set_error(span: Any, error_type: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR))


def _kind(name: str) -> Any:
    from opentelemetry.trace import SpanKind

    return getattr(SpanKind, name)


def _drop_none(attributes: dict[str, Any]) -> dict[str, Any]:
    # An attribute value must be a str, bool, int, float or a sequence of them.
    return {
        k: v for k, v in attributes.items() if isinstance(v, (str, bool, int, float, list, tuple))
    }


def _json(value: Any) -> str:
    """Captured content as JSON text. Telemetry never changes a call's outcome: what cannot
    be written (a message holding itself, nesting past the recursion limit, keys JSON has
    no form for, a value whose ``str`` raises) is replaced by a marker, and the failure is
    logged at DEBUG, by its type only (the content may be personal data)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except Exception as exc:  # noqa: BLE001 - whatever the content, the call goes on
        logger.debug("telemetry: content not captured (%s)", type(exc).__name__)
        return f"[not captured: {type(exc).__name__}]"
