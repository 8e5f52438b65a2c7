"""OpenTelemetry spans (zerda.llm._telemetry) through the global tracer provider, read back
with the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

import zerda  # noqa: E402
from zerda.llm import create_interface  # noqa: E402
from zerda.llm._telemetry import CAPTURE_ENV  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temp": 18}


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    # The global provider can be set once per process: reuse an SDK provider already set.
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield memory
    memory.shutdown()


@pytest.fixture
def spans(exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv(CAPTURE_ENV, raising=False)
    exporter.clear()

    def finished() -> list[ReadableSpan]:
        # SDKs may emit spans of their own inside Zerda's: only Zerda's are asserted.
        spans = exporter.get_finished_spans()
        return [s for s in spans if s.instrumentation_scope.name == "zerda"]

    return finished


@pytest.fixture
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def llm_for(server: MockLLMServer, provider: str, **options: Any) -> Any:
    options = {"max_retries": 0, **options}
    return create_interface(provider, model="m1", **options, **server.client_options(provider))


# The zero cache and reasoning counts each mock reports (None counts are not recorded).
MOCK_ZEROS: dict[str, dict[str, int]] = {
    "openai": {
        "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.reasoning.output_tokens": 0,
    },
    "anthropic": {
        "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.cache_creation.input_tokens": 0,
    },
}


def chat_attributes(provider: str, stop: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": "m1",
        "gen_ai.response.finish_reasons": (stop,),
        "gen_ai.usage.input_tokens": usage[0],
        "gen_ai.usage.output_tokens": usage[1],
        **MOCK_ZEROS[provider],
    }


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_generate_is_one_chat_span(spans: Any, mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(provider, text="Hi.", usage={"input_tokens": 12, "output_tokens": 7})
    llm_for(mock, provider).generate("Hello")
    [span] = spans()
    assert span.name == "chat m1"
    assert span.kind is SpanKind.CLIENT
    assert dict(span.attributes) == chat_attributes(provider, "end_turn", (12, 7))
    assert span.status.status_code is StatusCode.UNSET


def test_request_parameters_are_attributes(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hi.", usage={"input_tokens": 1, "output_tokens": 2})
    llm_for(mock, "openai").generate("Hello", max_tokens=50, temperature=0.5, top_p=0.9)
    [span] = spans()
    assert dict(span.attributes) == {
        **chat_attributes("openai", "end_turn", (1, 2)),
        "gen_ai.request.max_tokens": 50,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.top_p": 0.9,
    }


def test_one_chat_span_per_call_not_per_retry(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai", retry_after=0.01)
    mock.enqueue("openai", text="Hi.", usage={"input_tokens": 3, "output_tokens": 4})
    result = llm_for(mock, "openai", max_retries=1).generate("Hello")
    assert result["content"] == "Hi."
    assert len(mock.requests_for("openai")) == 2
    [span] = spans()
    assert dict(span.attributes) == chat_attributes("openai", "end_turn", (3, 4))


def test_a_failed_generate_has_error_status(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "openai", message="bad")
    assert llm_for(mock, "openai").generate("Hello")["error"]["type"] == "invalid_request"
    [span] = spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "invalid_request"
    assert span.attributes["gen_ai.response.finish_reasons"] == ("error",)


def test_a_raised_error_has_error_status(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue_error(429, "anthropic", retry_after=0.01)
    with pytest.raises(zerda.llm.RateLimitError):
        llm_for(mock, "anthropic").generate("Hello", raise_errors=True)
    [span] = spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "rate_limit"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_stream_is_one_chat_span(spans: Any, mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(
        provider, text="Hello there", fragments=3, usage={"input_tokens": 5, "output_tokens": 6}
    )
    events = list(llm_for(mock, provider).stream("Hi"))
    assert events[-1]["result"]["content"] == "Hello there"
    [span] = spans()
    assert span.name == "chat m1"
    assert dict(span.attributes) == chat_attributes(provider, "end_turn", (5, 6))


def test_stream_async_is_one_chat_span(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="Hello", usage={"input_tokens": 5, "output_tokens": 6})

    async def consume() -> list[dict[str, Any]]:
        return [e async for e in llm_for(mock, "anthropic").stream_async("Hi")]

    asyncio.run(consume())
    [span] = spans()
    assert dict(span.attributes) == chat_attributes("anthropic", "end_turn", (5, 6))


def test_a_stream_failing_mid_way_has_error_status(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hello there", fragments=4, cut_after=2)
    events = list(llm_for(mock, "openai").stream("Hi"))
    assert events[-1]["result"]["stop_reason"] == "error"
    [span] = spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == events[-1]["result"]["error"]["type"]


def test_a_stream_the_consumer_leaves_early_ends_its_span_without_error(
    spans: Any, mock: MockLLMServer
) -> None:
    mock.enqueue("openai", text="Hello there", fragments=3)
    stream = llm_for(mock, "openai").stream("Hi")
    assert next(stream)["type"] == "text"
    stream.close()
    [span] = spans()
    assert span.status.status_code is StatusCode.UNSET


def queue_tool_turns(mock: MockLLMServer, provider: str) -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    mock.enqueue(provider, tool_calls=[call], usage={"input_tokens": 10, "output_tokens": 3})
    mock.enqueue(provider, text="Sunny.", usage={"input_tokens": 20, "output_tokens": 4})


def assert_run_spans(spans: list[ReadableSpan], provider: str) -> None:
    by_name = {s.name: s for s in spans}
    assert sorted(s.name for s in spans) == [
        "chat m1",
        "chat m1",
        "execute_tool get_weather",
        "invoke_agent",
    ]
    agent = by_name["invoke_agent"]
    assert agent.parent is None
    for span in spans:
        if span is not agent:
            assert span.parent is not None and span.parent.span_id == agent.context.span_id
            assert span.context.trace_id == agent.context.trace_id
    assert dict(agent.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": "m1",
        "gen_ai.response.finish_reasons": ("end_turn",),
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 7,
        **MOCK_ZEROS[provider],
    }
    assert dict(by_name["execute_tool get_weather"].attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
    }
    chats = [s for s in spans if s.name == "chat m1"]
    assert [dict(s.attributes) for s in sorted(chats, key=lambda s: s.start_time or 0)] == [
        chat_attributes(provider, "tool_use", (10, 3)),
        chat_attributes(provider, "end_turn", (20, 4)),
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_run_with_a_tool(spans: Any, mock: MockLLMServer, provider: str) -> None:
    queue_tool_turns(mock, provider)
    result = llm_for(mock, provider).run("Weather?", tools=[get_weather])
    assert result["content"] == "Sunny."
    assert_run_spans(spans(), provider)


def test_run_async_with_a_tool(spans: Any, mock: MockLLMServer) -> None:
    queue_tool_turns(mock, "openai")
    asyncio.run(llm_for(mock, "openai").run_async("Weather?", tools=[get_weather]))
    assert_run_spans(spans(), "openai")


def test_a_failing_tool_has_error_status(spans: Any, mock: MockLLMServer) -> None:
    def explode() -> str:
        """Fails."""
        raise RuntimeError("kaboom")

    mock.enqueue("openai", tool_calls=[{"id": "call_1", "name": "explode", "arguments": {}}])
    mock.enqueue("openai", text="Sorry.")
    llm_for(mock, "openai").run("Go", tools=[explode])
    [tool] = [s for s in spans() if s.name == "execute_tool explode"]
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes["error.type"] == "tool_error"


def test_no_content_unless_asked(spans: Any, mock: MockLLMServer) -> None:
    queue_tool_turns(mock, "openai")
    llm_for(mock, "openai").run("Weather?", tools=[get_weather], system="Be brief.")
    for span in spans():
        assert not [k for k in span.attributes if "messages" in k or "arguments" in k]
        assert "gen_ai.tool.call.result" not in span.attributes
        assert "gen_ai.system_instructions" not in span.attributes


def test_content_when_asked(
    spans: Any, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    queue_tool_turns(mock, "openai")
    llm_for(mock, "openai").run("Weather?", tools=[get_weather], system="Be brief.")
    finished = spans()
    first_chat = min((s for s in finished if s.name == "chat m1"), key=lambda s: s.start_time)
    assert json.loads(first_chat.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "content": "Weather?"}
    ]
    assert json.loads(first_chat.attributes["gen_ai.system_instructions"]) == "Be brief."
    assert json.loads(first_chat.attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
        }
    ]
    [tool] = [s for s in finished if s.name == "execute_tool get_weather"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert json.loads(tool.attributes["gen_ai.tool.call.result"]) == {"city": "Paris", "temp": 18}


def run_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(Path(zerda.__file__).parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.strip()


def test_import_zerda_llm_imports_no_opentelemetry() -> None:
    code = (
        "import sys, zerda.llm\nprint([m for m in sys.modules if m.startswith('opentelemetry')])\n"
    )
    assert run_python(code) == "[]"


def test_without_opentelemetry_calls_work_and_nothing_is_imported() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if the package were not installed\n"
        "from zerda.llm import create_interface, _telemetry\n"
        "from zerda.testing import MockLLMServer\n"
        "with MockLLMServer() as server:\n"
        "    server.enqueue('openai', text='Hi.')\n"
        "    llm = create_interface('openai:m', **server.client_options('openai'))\n"
        "    print(llm.generate('Hello')['content'], _telemetry.tracer())\n"
    )
    assert run_python(code) == "Hi. None"


def test_without_a_tracer_provider_no_span_is_made() -> None:
    code = (
        "from zerda.llm import _telemetry\n"
        "class LLM: provider, model = 'openai', 'm'\n"
        "print(_telemetry.tracer(), _telemetry.chat(LLM, 'hi', {}).__enter__())\n"
    )
    assert run_python(code) == "None None"
