"""The whole loop streamed (docs/loop.md, "A streamed run"): each turn's stream events as
``stream`` yields them, a ``tool_result`` event per answered call, a ``turn`` event before
each later turn, and one ``done`` whose result is the plain run's, sync and async alike."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.loop_support import (
    ID_A,
    ID_B,
    ROWS,
    WEATHER_PARIS,
    call,
    get_weather,
    llm_for,
    tool_threads,
)
from zerda.llm import create_interface, tool
from zerda.llm.loop import run_stream
from zerda.testing import MockLLMServer

WEATHER_ROME = {"city": "Rome", "temp": 18, "unit": "celsius"}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def mock(server: MockLLMServer) -> Iterator[MockLLMServer]:
    server.reset()
    yield server
    server.reset()


def script_two_turns(mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(
        provider,
        text="Checking.",
        tool_calls=[
            call("get_weather", ID_A, city="Paris"),
            call("get_weather", ID_B, city="Rome"),
        ],
        usage={"input_tokens": 10, "output_tokens": 4},
    )
    mock.enqueue(provider, text="Sunny in both.", usage={"input_tokens": 30, "output_tokens": 5})


def tool_result_event(call_id: str, city: str, result: Any) -> dict[str, Any]:
    call_ = {"id": call_id, "name": "get_weather", "arguments": {"city": city}}
    return {"type": "tool_result", "call": call_, "result": result, "is_error": False}


@pytest.mark.parametrize("provider", ROWS)
def test_a_streamed_run_is_each_turns_stream_its_tool_results_and_a_done(
    mock: MockLLMServer, provider: str
) -> None:
    llm = llm_for(mock, provider)
    script_two_turns(mock, provider)
    events = list(llm.run_stream("Weather?", tools=[get_weather]))
    result = events[-1]["result"]
    # What stream itself yields for the same two answers and the same histories.
    script_two_turns(mock, provider)
    first = list(llm.stream("Weather?", tools=[get_weather]))
    second = list(llm.stream(result["messages"][:-1], tools=[get_weather]))
    assert events == [
        *first[:-1],
        tool_result_event(ID_A, "Paris", WEATHER_PARIS),
        tool_result_event(ID_B, "Rome", WEATHER_ROME),
        {"type": "turn", "index": 2},
        *second[:-1],
        {"type": "done", "result": result},
    ]
    assert result["content"] == "Sunny in both." and result["turns"] == 2


@pytest.mark.parametrize("provider", ROWS)
async def test_done_is_the_plain_runs_result_sync_and_async_alike(
    mock: MockLLMServer, provider: str
) -> None:
    llm = llm_for(mock, provider)
    results = []
    for runner in (plain, streamed, plain_async, streamed_async):
        script_two_turns(mock, provider)
        results.append(await runner(llm))
    assert results[0]["usage"]["input_tokens"] == 40  # summed over both turns
    assert results[0]["messages"][-1]["content"] == "Sunny in both."
    assert all(r == results[0] for r in results[1:])


async def plain(llm: Any) -> dict[str, Any]:
    result: dict[str, Any] = llm.run("Weather?", tools=[get_weather])
    return result


async def streamed(llm: Any) -> dict[str, Any]:
    events = list(llm.run("Weather?", tools=[get_weather], stream=True))
    assert [e["type"] for e in events].count("done") == 1
    result: dict[str, Any] = events[-1]["result"]
    return result


async def plain_async(llm: Any) -> dict[str, Any]:
    result: dict[str, Any] = await llm.run_async("Weather?", tools=[get_weather])
    return result


async def streamed_async(llm: Any) -> dict[str, Any]:
    events = [e async for e in llm.run_stream_async("Weather?", tools=[get_weather])]
    also = await llm.run_async("x", tools=[get_weather], stream=True, max_turns=1)
    assert hasattr(also, "__anext__")  # stream=True on run_async: an async iterator
    await also.aclose()
    result: dict[str, Any] = events[-1]["result"]
    return result


def test_a_streamed_run_over_a_fallback_moves_on_before_the_first_event(
    mock: MockLLMServer,
) -> None:
    first, second = llm_for(mock, "openai"), llm_for(mock, "anthropic")
    fallback = create_interface([first, second])
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", tool_calls=[call("get_weather", ID_A, city="Paris")])
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", text="Sunny.")
    events = list(fallback.run_stream("Weather?", tools=[get_weather]))
    result = events[-1]["result"]
    assert [e["type"] for e in events] == [
        "tool_call_delta",
        "tool_call",
        "tool_result",
        "turn",
        "text",
        "done",
    ]
    assert (result["content"], result["provider"], result["turns"]) == ("Sunny.", "anthropic", 2)


def test_run_stream_takes_the_loops_arguments(mock: MockLLMServer) -> None:
    llm = llm_for(mock, "openai")
    for _ in range(2):
        mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
    events = list(run_stream(llm, "Weather?", tools=[get_weather], max_turns=2))
    done = events[-1]["result"]
    assert (done["turns"], done["stop_reason"]) == (2, "tool_use")
    assert [e["index"] for e in events if e["type"] == "turn"] == [2]


def test_a_consumer_that_leaves_early_ends_the_run_and_its_threads(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
    mock.enqueue("openai", text="Sunny.")
    before = set(tool_threads())
    events = llm_for(mock, "openai").run_stream("Weather?", tools=[get_weather])
    for event in events:
        if event["type"] == "tool_result":
            break
    events.close()  # as a consumer leaving a for loop early does (at garbage collection)
    for thread in set(tool_threads()) - before:
        thread.join(30)  # the run closed its pool: its idle threads end
    assert set(tool_threads()) <= before
    assert len(mock.requests_for("openai")) == 1  # the second turn was never asked for


async def test_a_consumer_that_leaves_an_async_run_early_ends_it(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Sun", fragments=3)
    events = llm_for(mock, "openai").run_stream_async("Weather?", tools=[get_weather])
    assert (await events.__anext__())["type"] == "text"
    await events.aclose()
    with pytest.raises(StopAsyncIteration):
        await events.__anext__()


def test_a_stream_cut_mid_turn_ends_the_run_with_the_error_and_the_text_kept(
    mock: MockLLMServer,
) -> None:
    mock.enqueue("openai", text="Half an answer", fragments=4, cut_after=2)
    events = list(llm_for(mock, "openai").run_stream("Weather?", tools=[get_weather]))
    result = events[-1]["result"]
    assert result["stop_reason"] == "error"
    assert result["content"] == "".join(e["text"] for e in events if e["type"] == "text")
    assert result["turns"] == 1 and result["messages"] == [{"role": "user", "content": "Weather?"}]


def test_sync_runs_inside_a_running_event_loop_stream_too(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
    mock.enqueue("openai", text="Sunny.")

    async def inside() -> list[dict[str, Any]]:
        return list(llm_for(mock, "openai").run_stream("Weather?", tools=[get_weather]))

    events = asyncio.run(inside())
    assert events[-1]["result"]["content"] == "Sunny."


# --- one run of every feature: the same result four ways ---------------------------------------

GATE = threading.Event()


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Deletes a file."""
    return f"deleted {path}"


@tool(timeout=0.1)
def hang(n: int) -> int:
    """Blocks until the module's tests end."""
    GATE.wait(60)
    return n


def approve(c: dict[str, Any]) -> Any:
    if c["name"] == "delete_file":
        return {"arguments": {"path": "/tmp/safe"}}
    return c["arguments"] != {"city": "Rome"} or "Not Rome."


def script_every_feature(mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(
        provider,
        text="Working.",
        tool_calls=[
            call("get_weather", ID_A, city="Paris"),
            call("delete_file", ID_B, path="/etc"),
            call("hang", "mnoPQR789", n=1),
        ],
        usage={"input_tokens": 10, "output_tokens": 3},
    )
    mock.enqueue(
        provider,
        tool_calls=[
            call("get_weather", "stuVWX012", city="Rome"),
            call("get_weather", "yzaBCD345", city="Oslo"),
        ],
        usage={"input_tokens": 20, "output_tokens": 3},
    )
    mock.enqueue(provider, text="Partly done.", usage={"input_tokens": 30, "output_tokens": 4})


@pytest.mark.parametrize("provider", ROWS)
async def test_every_feature_gives_the_same_result_sync_async_and_streamed(
    mock: MockLLMServer, provider: str
) -> None:
    llm = llm_for(mock, provider)
    arguments: dict[str, Any] = {
        "tools": [get_weather, delete_file, hang],
        "approve": approve,
        "budget": {"tool_calls": 4},
        "final_answer": True,
        "max_concurrency": 2,
    }
    results = []
    GATE.clear()
    try:
        for runner in ("run", "run_async", "run_stream", "run_stream_async"):
            script_every_feature(mock, provider)
            method = getattr(llm, runner)
            if runner == "run_stream":
                results.append(list(method("Go", **arguments))[-1]["result"])
            elif runner == "run_stream_async":
                results.append([e async for e in method("Go", **arguments)][-1]["result"])
            else:
                outcome = method("Go", **arguments)
                results.append(await outcome if asyncio.iscoroutine(outcome) else outcome)
    finally:
        GATE.set()
    first = results[0]
    assert [(m["content"], m["is_error"]) for m in first["messages"] if m["role"] == "tool"] == [
        (WEATHER_PARIS, False),
        ("deleted /tmp/safe", False),  # the approval edited the arguments
        ("hang timed out after 0.1 s", True),
        ("Not Rome.", True),  # denied: not counted against the budget
        ({"city": "Oslo", "temp": 18, "unit": "celsius"}, False),
    ]
    assert (first["content"], first["stop_reason"], first["turns"]) == ("Partly done.", "budget", 3)
    assert first["usage"]["input_tokens"] == 60
    assert all(r == first for r in results[1:])
