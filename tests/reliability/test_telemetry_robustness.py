"""Telemetry never changes a call's outcome (issue 34, item 14): with message-content
capture on, histories JSON cannot write (a message containing itself, ``provider_data``
3,000 levels deep, keys and values JSON has no form for) give the same result as with
capture off, from generate, stream and run; the span carries a marker instead of the
content, and the failure is logged at DEBUG."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from zerda.llm import _telemetry, create_interface  # noqa: E402
from zerda.llm._telemetry import CAPTURE_ENV  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this")


def _selfish() -> list[dict[str, Any]]:
    message: dict[str, Any] = {"role": "user", "content": "hi"}
    message["extra"] = message
    return [message]


def _nested(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(levels):
        node["x"] = {}
        node = node["x"]
    return root


HISTORIES = {
    "self": (_selfish(), "ValueError"),
    "deep-provider-data": (
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "yo", "provider_data": {"openai": _nested(3000)}},
            {"role": "user", "content": "again"},
        ],
        "RecursionError",
    ),
    "tuple-keys": ([{"role": "user", "content": "hi", "meta": {(1, 2): "v"}}], "TypeError"),
    "str-raises": ([{"role": "user", "content": "hi", "meta": Unprintable()}], "RuntimeError"),
}


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()  # set once per process: reuse an SDK one
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield memory
    memory.shutdown()


@pytest.fixture(scope="module")
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def _outcome(llm: Any, server: MockLLMServer, how: str, history: Any) -> Any:
    """The call's result (a stream's done result); a raised exception as its repr."""
    server.enqueue("openai", text="ok")
    try:
        if how == "generate":
            return llm.generate(history)
        if how == "generate_async":
            return asyncio.run(llm.generate_async(history))
        if how == "stream":
            return list(llm.stream(history))
        result = llm.run(history)
        return {k: v for k, v in result.items() if k != "messages"}
    except Exception as exc:  # noqa: BLE001 - the outcome compared, whatever it is
        return repr(exc)
    finally:
        server.reset()


def _chat_inputs(exporter: InMemorySpanExporter) -> list[Any]:
    return [
        s.attributes.get("gen_ai.input.messages")
        for s in exporter.get_finished_spans()
        if s.instrumentation_scope.name == "zerda" and s.name.startswith("chat")
    ]


@pytest.mark.parametrize("how", ["generate", "generate_async", "stream", "run"])
@pytest.mark.parametrize("case", sorted(HISTORIES))
def test_capture_never_changes_the_outcome(
    exporter: InMemorySpanExporter,
    mock: MockLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    how: str,
    case: str,
) -> None:
    history, error = HISTORIES[case]
    llm = create_interface("openai", model="m", max_retries=0, **mock.client_options("openai"))
    monkeypatch.delenv(CAPTURE_ENV, raising=False)
    without = _outcome(llm, mock, how, history)
    assert not isinstance(without, str), without
    monkeypatch.setenv(CAPTURE_ENV, "true")
    exporter.clear()
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        assert _outcome(llm, mock, how, history) == without
    assert _chat_inputs(exporter) == [f"[not captured: {error}]"]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert f"telemetry: content not captured ({error})" in debug
    assert not any("no text for this" in r.getMessage() for r in caplog.records)


def test_output_and_tool_content_that_cannot_be_written(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    exporter.clear()
    deep = _nested(3000)
    span = _telemetry.start_chat(type("L", (), {"provider": "p", "model": "m"})(), "hi", {})
    message = {"role": "assistant", "content": "x", "provider_data": {"p": deep}}
    _telemetry.end_chat(span, {"stop_reason": "end_turn", "message": message}, None)
    tool = _telemetry.start_tool({"id": "c1", "name": "f", "arguments": {"a": deep}})
    _telemetry.end_tool(tool, {"role": "tool", "content": _selfish()[0], "is_error": False})
    chat, tool_span = [
        s for s in exporter.get_finished_spans() if s.instrumentation_scope.name == "zerda"
    ]
    assert chat.attributes["gen_ai.output.messages"] == "[not captured: RecursionError]"
    assert tool_span.attributes["gen_ai.tool.call.arguments"] == "[not captured: RecursionError]"
    assert tool_span.attributes["gen_ai.tool.call.result"] == "[not captured: ValueError]"


def test_writable_content_is_still_captured(
    exporter: InMemorySpanExporter, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    exporter.clear()
    llm = create_interface("openai", model="m", max_retries=0, **mock.client_options("openai"))
    _outcome(llm, mock, "generate", [{"role": "user", "content": "hé", "meta": {1, 2}}])
    assert _chat_inputs(exporter) == ['[{"role": "user", "content": "hé", "meta": "{1, 2}"}]']
