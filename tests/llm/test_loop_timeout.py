"""Tool timeouts and parallel calls (docs/loop.md, "Timeouts", "Parallel calls"): a call past
its timeout is answered "timed out after N s" and the loop goes on; async tools are
cancelled, sync ones abandoned in a thread that still counts against ``max_concurrency``
until it returns. Every assertion counts (threads, calls, results), none measures time."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.loop_support import (
    ID_A,
    ID_B,
    ROWS,
    WEATHER_PARIS,
    answered,
    call,
    get_weather,
    llm_for,
    sent_text,
    tool_threads,
)
from zerda.llm import tool
from zerda.llm.executable import ExecutableTool, ToolOutput
from zerda.testing import MockLLMServer

GATE = threading.Event()  # set at the end of each test: releases every stuck tool
CANCELLED: list[str] = []


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def mock(server: MockLLMServer) -> Iterator[MockLLMServer]:
    server.reset()
    GATE.clear()
    CANCELLED.clear()
    before = set(tool_threads())
    yield server
    GATE.set()
    for thread in set(tool_threads()) - before:
        thread.join(30)  # each stuck tool returns, and its thread ends
    server.reset()


def stuck(n: int) -> int:
    """Blocks until the test ends."""
    GATE.wait(60)
    return n


async def stuck_async(n: int) -> int:
    """Waits until cancelled."""
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        CANCELLED.append(f"stuck_async {n}")
        raise
    return n


@tool(timeout=0.2)
def own_timeout(n: int) -> int:
    """Has its own timeout."""
    GATE.wait(60)
    return n


class StuckExecutable(ExecutableTool):
    """A tool that executes itself (as an MCP server's tools do) and never answers."""

    name = "remote"
    description = "A remote tool."
    parameters = {"type": "object", "properties": {"n": {"type": "integer"}}}

    def call(self, arguments: dict[str, Any]) -> ToolOutput:
        GATE.wait(60)
        return ToolOutput("late")

    async def call_async(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            CANCELLED.append("remote")
            raise
        return ToolOutput("late")


def script(mock: MockLLMServer, provider: str, *calls: dict[str, Any]) -> None:
    mock.enqueue(provider, tool_calls=list(calls))
    mock.enqueue(provider, text="Moving on.")


# --- timeouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ROWS)
async def test_a_call_past_its_timeout_is_answered_and_the_loop_goes_on(
    mock: MockLLMServer, provider: str
) -> None:
    llm = llm_for(mock, provider)
    results = []
    for tools, runner in (
        ([stuck, get_weather], llm.run),
        ([stuck_async, get_weather], llm.run),
        ([stuck_async, get_weather], llm.run_async),
    ):
        name = tools[0].__name__
        script(mock, provider, call(name, ID_A, n=1), call("get_weather", ID_B, city="Paris"))
        result = runner("Go", tools=tools, tool_timeout=0.2)
        results.append(await result if asyncio.iscoroutine(result) else result)
    for result, name in zip(results, ["stuck", "stuck_async", "stuck_async"], strict=True):
        assert answered(result) == [
            (f"{name} timed out after 0.2 s", True),
            (WEATHER_PARIS, False),  # the other call of the turn is not held up
        ]
        assert result["content"] == "Moving on." and result["turns"] == 2
    assert "timed out after 0.2 s" in sent_text(mock, provider, 1)
    # An async tool is cancelled at its timeout, in run_async and on the sync run's loop.
    assert CANCELLED == ["stuck_async 1", "stuck_async 1"]


def test_a_tools_own_timeout_wins_over_tool_timeout(mock: MockLLMServer) -> None:
    script(mock, "openai", call("own_timeout", ID_A, n=1))
    result = llm_for(mock, "openai").run("Go", tools=[own_timeout], tool_timeout=30)
    assert answered(result) == [("own_timeout timed out after 0.2 s", True)]


def test_a_dict_or_attribute_timeout_applies_to_an_executable_tool(mock: MockLLMServer) -> None:
    remote = StuckExecutable()
    remote.timeout = 0.2  # what an MCP tool may be given
    script(mock, "anthropic", call("remote", ID_A, n=1))
    result = llm_for(mock, "anthropic").run("Go", tools=[remote])
    assert answered(result) == [("remote timed out after 0.2 s", True)]


async def test_an_executable_tool_is_cancelled_in_run_async(mock: MockLLMServer) -> None:
    script(mock, "gemini", call("remote", ID_A, n=1))
    result = await llm_for(mock, "gemini").run_async(
        "Go", tools=[StuckExecutable()], tool_timeout=0.2
    )
    assert answered(result) == [("remote timed out after 0.2 s", True)]
    assert CANCELLED == ["remote"]


def test_a_timed_out_sync_tool_leaves_no_thread_once_it_returns(mock: MockLLMServer) -> None:
    before = set(tool_threads())
    script(mock, "openai", call("stuck", ID_A, n=1))
    result = llm_for(mock, "openai").run("Go", tools=[stuck], tool_timeout=0.1)
    assert answered(result) == [("stuck timed out after 0.1 s", True)]
    (abandoned,) = set(tool_threads()) - before  # still running the tool, and only it
    GATE.set()
    abandoned.join(30)
    assert not abandoned.is_alive()
    assert set(tool_threads()) <= before


@pytest.mark.parametrize("runner", ["run", "run_async"])
def test_a_thousand_timed_out_calls_never_use_more_threads_than_max_concurrency(
    mock: MockLLMServer, runner: str
) -> None:
    before = set(tool_threads())
    peaks: list[int] = []

    def hang(n: int) -> int:
        """Blocks until the test ends."""
        peaks.append(len(set(tool_threads()) - before))
        GATE.wait(60)
        return n

    script(mock, "openai", *(call("hang", n=i) for i in range(1000)))
    run = getattr(llm_for(mock, "openai"), runner)
    arguments = {"tools": [hang], "tool_timeout": 0.05, "max_concurrency": 4}
    result = (
        asyncio.run(run("Go", **arguments)) if runner == "run_async" else run("Go", **arguments)
    )
    contents = [content for content, _ in answered(result)]
    assert len(contents) == 1000 and result["content"] == "Moving on."
    assert all(c.startswith("hang timed out after 0.05 s") for c in contents)
    # Four tools ran and hang still, each in its thread; no other thread was started.
    assert len(peaks) == 4 and max(peaks) == 4
    assert len(set(tool_threads()) - before) == 4


@pytest.mark.parametrize("runner", ["run", "run_async"])
def test_threads_are_reused_across_calls_and_turns(mock: MockLLMServer, runner: str) -> None:
    seen: set[int] = set()

    def quick(n: int) -> int:
        """Notes its thread."""
        seen.add(threading.get_ident())
        return n

    for _ in range(3):
        mock.enqueue("openai", tool_calls=[call("quick", n=i) for i in range(8)])
    mock.enqueue("openai", text="ok")
    run = getattr(llm_for(mock, "openai"), runner)
    arguments = {"tools": [quick], "max_concurrency": 3}
    result = (
        asyncio.run(run("Go", **arguments)) if runner == "run_async" else run("Go", **arguments)
    )
    assert len(answered(result)) == 24 and result["turns"] == 4
    assert 1 <= len(seen) <= 3


def test_an_abandoned_thread_runs_the_next_call_once_its_tool_returns(
    mock: MockLLMServer,
) -> None:
    release, returned = threading.Event(), threading.Event()
    threads: list[int] = []

    def first(n: int) -> int:
        """Blocks until the next turn's approval releases it."""
        threads.append(threading.get_ident())
        release.wait(60)
        returned.set()
        return n

    def second(n: int) -> int:
        """Notes its thread."""
        threads.append(threading.get_ident())
        return n

    def approve(c: dict[str, Any]) -> bool:
        if c["name"] == "second":  # the first call was answered as timed out by now
            release.set()
            returned.wait(30)
        return True

    mock.enqueue("openai", tool_calls=[call("first", ID_A, n=1)])
    script(mock, "openai", call("second", ID_B, n=2))
    result = llm_for(mock, "openai").run(
        "Go", tools=[first, second], tool_timeout=1, max_concurrency=1, approve=approve
    )
    assert answered(result) == [("first timed out after 1 s", True), ("2", False)]
    assert len(threads) == 2 and threads[0] == threads[1]  # the one thread, reused


def test_a_call_queued_behind_stuck_threads_is_answered_without_running(
    mock: MockLLMServer,
) -> None:
    script(mock, "openai", call("stuck", ID_A, n=1), call("stuck", ID_B, n=2))
    result = llm_for(mock, "openai").run("Go", tools=[stuck], tool_timeout=0.1, max_concurrency=1)
    assert answered(result) == [
        ("stuck timed out after 0.1 s", True),
        (
            "stuck timed out after 0.1 s without starting: every worker thread "
            "(max_concurrency=1) was still running a tool that had timed out",
            True,
        ),
    ]
    assert len(tool_threads()) >= 1


# --- parallel calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("runner", ["run", "run_async"])
@pytest.mark.parametrize("limit", [1, 2])
def test_max_concurrency_caps_the_calls_running_at_once(
    mock: MockLLMServer, runner: str, limit: int
) -> None:
    lock, running, most = threading.Lock(), [0], [0]

    def busy(n: int) -> int:
        """Counts the calls running beside it."""
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)  # long enough for the others to start, were they allowed to
        with lock:
            running[0] -= 1
        return n

    script(mock, "openai", *(call("busy", n=i) for i in range(6)))
    run = getattr(llm_for(mock, "openai"), runner)
    arguments = {"tools": [busy], "max_concurrency": limit}
    result = (
        asyncio.run(run("Go", **arguments)) if runner == "run_async" else run("Go", **arguments)
    )
    assert [c for c, _ in answered(result)] == ["0", "1", "2", "3", "4", "5"]  # call order
    assert 1 <= most[0] <= limit


async def test_async_tools_are_capped_in_run_async(mock: MockLLMServer) -> None:
    running, most = [0], [0]

    async def busy(n: int) -> int:
        """Counts the calls running beside it."""
        running[0] += 1
        most[0] = max(most[0], running[0])
        await asyncio.sleep(0.02)
        running[0] -= 1
        return n

    script(mock, "openai", *(call("busy", n=i) for i in range(5)))
    result = await llm_for(mock, "openai").run_async("Go", tools=[busy], max_concurrency=2)
    assert [c for c, _ in answered(result)] == ["0", "1", "2", "3", "4"]
    assert most[0] == 2


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"tool_timeout": -1}, "tool_timeout must be a positive number of seconds"),
        ({"tool_timeout": 0}, "tool_timeout must be a positive number of seconds"),
        ({"tool_timeout": "5"}, "tool_timeout must be a positive number of seconds"),
        ({"max_concurrency": 0}, "max_concurrency must be an int of at least 1"),
        (
            {"tools": [{"name": "x", "parameters": {"type": "object"}, "timeout": -2}]},
            r"tools\[0\] \('x'\): timeout must be a positive number of seconds",
        ),
    ],
)
def test_bad_timeouts_are_refused_before_anything_is_sent(
    mock: MockLLMServer, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        llm_for(mock, "openai").run("Go", **{"tools": [get_weather], **arguments})
    assert mock.requests_for("openai") == []


def test_an_executable_tool_with_a_bad_timeout_is_refused(mock: MockLLMServer) -> None:
    remote = StuckExecutable()
    remote.timeout = -1
    with pytest.raises(ValueError, match="tool 'remote': timeout must be a positive number"):
        llm_for(mock, "openai").run("Go", tools=[remote])


# --- MCP tools ------------------------------------------------------------------------------------

MCP_SERVER = [sys.executable, str(Path(__file__).parent / "mcp_server.py"), "--slow"]


@pytest.mark.parametrize("runner", ["run", "run_async"])
def test_tool_timeout_bounds_an_mcp_tool_and_the_session_goes_on(
    mock: MockLLMServer, runner: str
) -> None:
    pytest.importorskip("mcp")
    from zerda.llm.mcp import MCPTools

    with MCPTools(MCP_SERVER, timeout=60) as tools:
        script(mock, "openai", call("sleep", ID_A, seconds=600), call("add", ID_B, a=2, b=2))
        run = getattr(llm_for(mock, "openai"), runner)
        arguments = {"tools": tools, "tool_timeout": 1}
        outcome = run("Wait", **arguments)
        result = asyncio.run(outcome) if runner == "run_async" else outcome
        assert answered(result) == [("sleep timed out after 1 s", True), ("4", False)]
        assert result["content"] == "Moving on."
