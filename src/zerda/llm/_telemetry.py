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
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
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


def agent(llm: Any) -> AbstractContextManager[Any]:
    """The current ``invoke_agent`` span around one ``run``."""
    if tracer() is None:
        return _NO_SPAN
    attributes = _drop_none(
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": getattr(llm, "provider", None),
            "gen_ai.request.model": getattr(llm, "model", None),
        }
    )
    return _current("invoke_agent", "INTERNAL", attributes)


def tool(call: Mapping[str, Any]) -> AbstractContextManager[Any]:
    """The current ``execute_tool`` span around one tool execution."""
    if tracer() is None:
        return _NO_SPAN
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
    return _current(f"execute_tool {call.get('name')}", "INTERNAL", attributes)


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
    return json.dumps(value, ensure_ascii=False, default=str)
