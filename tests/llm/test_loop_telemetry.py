"""The loop's spans (docs/telemetry.md): a paused and a resumed run are two ``invoke_agent``
spans, the pause recorded; ``execute_tool`` spans record timeouts and decisions; streamed
and async runs nest their ``chat`` and ``execute_tool`` spans under the run's, and a tool's
own spans under its ``execute_tool``, whatever thread or task it runs in."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode  # noqa: E402

from tests.llm.loop_support import ID_A, ID_B, call, get_weather, llm_for  # noqa: E402
from zerda.llm import tool  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402

GATE = threading.Event()


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
def spans(exporter: InMemorySpanExporter) -> Any:
    exporter.clear()

    def finished() -> list[ReadableSpan]:
        return [s for s in exporter.get_finished_spans() if s.instrumentation_scope.name != ""]

    return finished


@pytest.fixture
def mock() -> Iterator[MockLLMServer]:
    GATE.clear()
    with MockLLMServer() as server:
        yield server
    GATE.set()


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Deletes a file."""
    return f"deleted {path}"


def stuck(n: int) -> int:
    """Blocks until the test ends."""
    GATE.wait(60)
    return n


def traced(city: str) -> str:
    """Starts a span of its own, on the thread it runs in."""
    with trace.get_tracer("a-tool").start_as_current_span("inside the tool"):
        return "sunny"


async def traced_async(city: str) -> str:
    """Starts a span of its own, in its task."""
    with trace.get_tracer("a-tool").start_as_current_span("inside the tool"):
        await asyncio.sleep(0)
        return "sunny"


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None
    (parent,) = [s for s in spans if s.context.span_id == span.parent.span_id]
    return parent


def test_a_paused_and_a_resumed_run_are_two_runs_the_pause_recorded(
    spans: Any, mock: MockLLMServer
) -> None:
    llm = llm_for(mock, "openai")
    mock.enqueue("openai", tool_calls=[call("delete_file", ID_B, path="/x")])
    paused = llm.run("Clean up", tools=[delete_file])
    mock.enqueue("openai", text="Done.")
    llm.run(paused["messages"], tools=[delete_file], decisions={ID_B: True})
    first, second = named(spans(), "invoke_agent")
    assert first.attributes["zerda.run.paused"] is True
    assert first.attributes["gen_ai.response.finish_reasons"] == ("paused",)
    (event,) = first.events
    assert (event.name, event.attributes["zerda.run.pending_call_ids"]) == (
        "zerda.run.paused",
        (ID_B,),
    )
    assert second.attributes["zerda.run.resumed"] is True
    assert "zerda.run.paused" not in second.attributes
    assert "zerda.run.resumed" not in first.attributes
    (execute,) = named(spans(), "execute_tool")
    assert execute.attributes["zerda.tool.approval"] == "approved"
    assert parent_of(execute, spans()) == second


def test_tool_spans_record_timeouts_and_denials(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue(
        "openai",
        tool_calls=[call("stuck", ID_A, n=1), call("get_weather", ID_B, city="Paris")],
    )
    mock.enqueue("openai", text="ok")
    llm_for(mock, "openai").run(
        "Go",
        tools=[stuck, get_weather],
        tool_timeout=0.1,
        approve=lambda c: c["name"] == "stuck" or "Not now.",
    )
    (timed_out,) = named(spans(), "execute_tool stuck")
    (denied,) = named(spans(), "execute_tool get_weather")
    assert timed_out.attributes["error.type"] == "timeout"
    assert timed_out.attributes["zerda.tool.timeout"] == 0.1
    assert timed_out.attributes["zerda.tool.approval"] == "approved"
    assert (denied.attributes["error.type"], denied.attributes["zerda.tool.approval"]) == (
        "denied",
        "denied",
    )
    assert timed_out.status.status_code == denied.status.status_code == StatusCode.ERROR


def test_a_streamed_run_nests_its_spans_under_the_run(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", tool_calls=[call("traced", ID_A, city="Paris")])
    mock.enqueue("anthropic", text="Sunny.")
    events = list(llm_for(mock, "anthropic").run_stream("Weather?", tools=[traced]))
    assert events[-1]["result"]["content"] == "Sunny."
    check_nesting(spans(), "traced")


async def test_an_async_run_nests_its_spans_under_the_run(spans: Any, mock: MockLLMServer) -> None:
    mock.enqueue("gemini", tool_calls=[call("traced_async", ID_A, city="Paris")])
    mock.enqueue("gemini", text="Sunny.")
    result = await llm_for(mock, "gemini").run_async("Weather?", tools=[traced_async])
    assert result["content"] == "Sunny."
    check_nesting(spans(), "traced_async")


def check_nesting(finished: list[ReadableSpan], tool_name: str) -> None:
    (agent,) = named(finished, "invoke_agent")
    chats = named(finished, "chat")
    (execute,) = named(finished, "execute_tool")
    (inside,) = named(finished, "inside the tool")
    assert len(chats) == 2 and all(parent_of(c, finished) == agent for c in chats)
    assert execute.name == f"execute_tool {tool_name}" and parent_of(execute, finished) == agent
    assert parent_of(inside, finished) == execute  # the tool's own span, on its thread or task


def test_a_streamed_run_left_early_ends_its_span_without_error(
    spans: Any, mock: MockLLMServer
) -> None:
    mock.enqueue("openai", text="Hello there", fragments=3)
    events = llm_for(mock, "openai").run_stream("Hi", tools=[get_weather])
    next(events)
    events.close()
    (agent,) = named(spans(), "invoke_agent")
    assert agent.status.status_code != StatusCode.ERROR
    assert agent.end_time is not None
