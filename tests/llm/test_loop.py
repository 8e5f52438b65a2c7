"""The automatic tool loop on every provider, against MockLLMServer and the real SDKs."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.rows import wire_rows
from zerda.llm import create_interface, registry
from zerda.llm.registry import NAMES as PROVIDERS
from zerda.testing import MockLLMServer

ALL = list(PROVIDERS)


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city.
        unit: celsius or fahrenheit.
    """
    return {"city": city, "temp": 18, "unit": unit}


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"kaboom: {reason}")


# The interfaces of the module's server, by row: the loop tests only call them, and
# building an SDK client per test would cost more than its turns. Closed with the server.
_MADE: dict[str, Any] = {}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s
        for llm in _MADE.values():
            llm.close()
        _MADE.clear()


@pytest.fixture
def mock(server: MockLLMServer) -> Iterator[MockLLMServer]:
    server.reset()
    yield server
    server.reset()


def llm_for(server: MockLLMServer, provider: str) -> Any:
    if provider not in _MADE:
        _MADE[provider] = create_interface(
            provider, model="test-model", max_retries=0, **server.client_options(provider)
        )
    return _MADE[provider]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def sent_text(server: MockLLMServer, provider: str, n: int) -> str:
    """The n-th request body the provider received, as text (to find tool results in)."""
    return json.dumps(server.requests_for(provider)[n].body, ensure_ascii=False)


def tool_messages(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in result["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("provider", ALL)
def test_two_turn_run(mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(
        provider,
        tool_calls=[call("get_weather", city="Paris")],
        usage={"input_tokens": 10, "output_tokens": 3},
    )
    mock.enqueue(provider, text="Sunny, 18.", usage={"input_tokens": 20, "output_tokens": 4})
    result = llm_for(mock, provider).run("Weather in Paris?", tools=[get_weather])
    assert result["content"] == "Sunny, 18."
    assert result["stop_reason"] == "end_turn"
    assert result["turns"] == 2
    # Summed per key; the cache and reasoning counts depend on what each mock reports.
    assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (30, 7)
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    (tool_msg,) = tool_messages(result)
    assert tool_msg["content"] == {"city": "Paris", "temp": 18, "unit": "celsius"}
    assert tool_msg["is_error"] is False
    assert tool_msg["tool_call_id"] == result["messages"][1]["tool_calls"][0]["id"]
    assert "18" in sent_text(mock, provider, 1)


@pytest.mark.parametrize("provider", ALL)
def test_three_turn_run_with_parallel_calls_keeps_call_order(
    mock: MockLLMServer, provider: str
) -> None:
    mock.enqueue(
        provider, tool_calls=[call("get_weather", city="Paris"), call("get_weather", city="Rome")]
    )
    mock.enqueue(provider, tool_calls=[call("get_weather", city="Oslo", unit="fahrenheit")])
    mock.enqueue(provider, text="Done.")
    result = llm_for(mock, provider).run("Weather?", tools=[get_weather])
    assert result["turns"] == 3 and result["content"] == "Done."
    assert [m["content"]["city"] for m in tool_messages(result)] == ["Paris", "Rome", "Oslo"]
    assert tool_messages(result)[2]["content"]["unit"] == "fahrenheit"
    assert len(mock.requests_for(provider)) == 3


@pytest.mark.parametrize("provider", ALL)
def test_a_raising_tool_becomes_an_error_result_and_the_loop_continues(
    mock: MockLLMServer, provider: str
) -> None:
    mock.enqueue(provider, tool_calls=[call("explode", reason="test")])
    mock.enqueue(provider, text="Sorry, that failed.")
    result = llm_for(mock, provider).run("Go", tools=[explode])
    (tool_msg,) = tool_messages(result)
    assert tool_msg["is_error"] is True
    assert tool_msg["content"] == "RuntimeError: kaboom: test"
    assert result["content"] == "Sorry, that failed."
    assert "kaboom: test" in sent_text(mock, provider, 1)


@pytest.mark.parametrize("provider", ALL)
def test_an_unknown_tool_becomes_an_error_result(mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(provider, tool_calls=[call("launch_rockets", target="moon")])
    mock.enqueue(provider, text="ok")
    result = llm_for(mock, provider).run("Go", tools=[get_weather])
    (tool_msg,) = tool_messages(result)
    assert tool_msg == {
        "role": "tool",
        "tool_call_id": result["messages"][1]["tool_calls"][0]["id"],
        "name": "launch_rockets",
        "content": "Unknown tool 'launch_rockets'. Available tools: get_weather.",
        "is_error": True,
    }
    assert "Unknown tool" in sent_text(mock, provider, 1)


@pytest.mark.parametrize("provider", ALL)
@pytest.mark.parametrize("arguments", [{"town": "Paris"}, "{not json"])
def test_invalid_arguments_become_an_error_result(
    mock: MockLLMServer, provider: str, arguments: Any
) -> None:
    if registry.get(provider).wire in ("gemini", "vertex") and isinstance(arguments, str):
        pytest.skip("Gemini's wire format carries arguments as an object: never invalid JSON")
    mock.enqueue(provider, tool_calls=[{"name": "get_weather", "arguments": arguments}])
    mock.enqueue(provider, text="ok")
    result = llm_for(mock, provider).run("Go", tools=[get_weather])
    (tool_msg,) = tool_messages(result)
    assert tool_msg["is_error"] is True
    assert "get_weather" in tool_msg["content"]
    if isinstance(arguments, str):
        assert "not valid JSON" in tool_msg["content"]
    else:
        assert "city" in tool_msg["content"]


@pytest.mark.parametrize("provider", ALL)
def test_max_turns_returns_the_last_result_unchanged(mock: MockLLMServer, provider: str) -> None:
    for _ in range(2):
        mock.enqueue(provider, tool_calls=[call("get_weather", city="Paris")])
    result = llm_for(mock, provider).run("Loop forever", tools=[get_weather], max_turns=2)
    assert result["turns"] == 2
    assert result["stop_reason"] == "tool_use"
    assert len(tool_messages(result)) == 2  # the transcript stays ready to continue
    assert len(mock.requests_for(provider)) == 2


def test_on_tool_call_can_refuse(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", city="Paris")])
    mock.enqueue("openai", text="ok")
    seen = []

    def refuse(c: dict[str, Any]) -> bool:
        seen.append(c["name"])
        return False

    result = llm_for(mock, "openai").run("Go", tools=[get_weather], on_tool_call=refuse)
    assert seen == ["get_weather"]
    assert tool_messages(result)[0]["content"] == "The user refused this tool call."
    assert tool_messages(result)[0]["is_error"] is True


def test_the_transcript_continues_on_another_provider(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", tool_calls=[call("get_weather", city="Paris")])
    mock.enqueue("gemini", text="Sunny.")
    first = llm_for(mock, "gemini").run("Weather?", tools=[get_weather])
    mock.enqueue("mistral", text="Still sunny.")
    history = [*first["messages"], {"role": "user", "content": "And now?"}]
    second = llm_for(mock, "mistral").generate(history, tools=[get_weather])
    assert second["content"] == "Still sunny."


def test_run_errors_end_the_loop_with_the_error_shape(mock: MockLLMServer) -> None:
    mock.enqueue_error(401, "openai", message="bad key")
    result = llm_for(mock, "openai").run("Go", tools=[get_weather])
    assert result["stop_reason"] == "error"
    assert result["error"]["type"] == "authentication"
    assert result["turns"] == 1


def test_max_turns_must_be_positive(mock: MockLLMServer) -> None:
    with pytest.raises(ValueError, match="max_turns must be at least 1"):
        llm_for(mock, "openai").run("Go", tools=[get_weather], max_turns=0)


# --- run_async ------------------------------------------------------------------------

DELAY = 0.5
SPANS: list[tuple[float, float]] = []


async def slow_async(n: int) -> int:
    """Waits, then answers."""
    began = time.perf_counter()
    await asyncio.sleep(DELAY)
    SPANS.append((began, time.perf_counter()))
    return n


def slow_sync(n: int) -> int:
    """Blocks, then answers."""
    began = time.perf_counter()
    time.sleep(DELAY)
    SPANS.append((began, time.perf_counter()))
    return n


# How the tools of a turn are run is the loop's, whatever the row: one row per wire protocol
# (each reads the turn's calls its own way), as in the other loop files.
@pytest.mark.parametrize("provider", wire_rows())
async def test_run_async_runs_a_turns_tools_concurrently(
    mock: MockLLMServer, provider: str
) -> None:
    calls = [
        call("slow_async", n=1),
        call("slow_sync", n=2),
        call("slow_async", n=3),
        call("slow_sync", n=4),
    ]
    mock.enqueue(provider, tool_calls=calls)
    mock.enqueue(provider, text="ok")
    SPANS.clear()
    result = await llm_for(mock, provider).run_async("Go", tools=[slow_async, slow_sync])
    # Run one by one, each tool would start after the previous one ended; run concurrently,
    # all four have started before the first one ends.
    assert len(SPANS) == 4
    assert max(start for start, _ in SPANS) < min(end for _, end in SPANS)
    assert [m["content"] for m in tool_messages(result)] == ["1", "2", "3", "4"]
    assert result["content"] == "ok" and result["turns"] == 2


def test_run_runs_a_turns_sync_tools_concurrently_in_call_order(mock: MockLLMServer) -> None:
    # Each call waits for the other at a barrier: run one after another, the first would
    # wait alone until the barrier breaks (an error result); run concurrently, both pass.
    barrier = threading.Barrier(2, timeout=30)

    def meet(n: int) -> int:
        """Waits for the other call."""
        barrier.wait()
        return n

    mock.enqueue("openai", tool_calls=[call("meet", n=1), call("meet", n=2)])
    mock.enqueue("openai", text="ok")
    result = llm_for(mock, "openai").run("Go", tools=[meet])
    assert [(m["content"], m["is_error"]) for m in tool_messages(result)] == [
        ("1", False),
        ("2", False),
    ]


async def test_run_async_matches_run(mock: MockLLMServer) -> None:
    for _ in range(2):
        mock.enqueue(
            "anthropic",
            tool_calls=[call("get_weather", city="Paris")],
            usage={"input_tokens": 1, "output_tokens": 1},
        )
        mock.enqueue("anthropic", text="Sunny.", usage={"input_tokens": 1, "output_tokens": 1})
    llm = llm_for(mock, "anthropic")
    sync_result = llm.run("Weather?", tools=[get_weather])
    async_result = await llm.run_async("Weather?", tools=[get_weather])

    def without_ids(r: dict[str, Any]) -> str:
        text = json.dumps(r, sort_keys=True)
        for m in r["messages"]:
            for c in m.get("tool_calls") or []:
                text = text.replace(c["id"], "ID")
        return text

    assert without_ids(sync_result) == without_ids(async_result)


async def test_run_async_accepts_an_async_approver(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", city="Paris")])
    mock.enqueue("openai", text="ok")

    async def approve(c: dict[str, Any]) -> bool:
        return c["arguments"]["city"] == "Paris"

    result = await llm_for(mock, "openai").run_async(
        "Go", tools=[get_weather], on_tool_call=approve
    )
    assert tool_messages(result)[0]["is_error"] is False
