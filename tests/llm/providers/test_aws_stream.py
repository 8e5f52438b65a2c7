"""AWSInterface.stream / stream_async (Bedrock ConverseStream): event assembly, the done ==
generate invariant, recorded streams, mid-stream faults, closing, and the thread pump."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.providers.test_aws import MODEL, check_recorded, expected_calls, recorded
from zerda.llm.wires.bedrock import stream as bedrock_stream
from zerda.llm.wires.bedrock.interface import AWSInterface
from zerda.testing import MockLLMServer
from zerda.testing._eventstream import encode_event

# Cache and reasoning counts the mock does not report.
NO_DETAILS = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}


@pytest.fixture(scope="module")
def module_server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def server(module_server: MockLLMServer) -> MockLLMServer:
    module_server.reset()
    return module_server


@pytest.fixture(scope="module")
def module_llm(module_server: MockLLMServer) -> AWSInterface:
    return AWSInterface(MODEL, max_retries=0, **module_server.client_options("bedrock"))


@pytest.fixture
def llm(server: MockLLMServer, module_llm: AWSInterface) -> AWSInterface:
    return module_llm


async def collect_async(llm: AWSInterface, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    return [event async for event in llm.stream_async(*args, **kwargs)]


def done(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "done"
    assert all(e["type"] != "done" for e in events[:-1])
    result: dict[str, Any] = events[-1]["result"]
    return result


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["type"] == "text"]


def calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["tool_call"] for e in events if e["type"] == "tool_call"]


# --- assembly --------------------------------------------------------------------------------


def raw_stream(*events: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(encode_event(name, payload) for name, payload in events)


def test_call_without_input_deltas_has_empty_arguments(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    body = raw_stream(
        ("messageStart", {"role": "assistant"}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "ping"}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "tool_use"}),
        (
            "metadata",
            {
                "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
                "metrics": {"latencyMs": 1},
            },
        ),
    )
    server.enqueue_raw(
        200, body, {"content-type": "application/vnd.amazon.eventstream"}, provider="bedrock"
    )
    events = list(llm.stream("q"))
    assert calls(events) == [{"id": "t1", "name": "ping", "arguments": {}}]
    assert done(events)["usage"] == {"input_tokens": 1, "output_tokens": 2, **NO_DETAILS}


def test_no_argument_call(server: MockLLMServer, llm: AWSInterface) -> None:
    server.enqueue("bedrock", tool_calls=[{"id": "t1", "name": "ping", "arguments": {}}])
    assert calls(list(llm.stream("q"))) == [{"id": "t1", "name": "ping", "arguments": {}}]


def test_invalid_argument_json_is_kept_raw(server: MockLLMServer, llm: AWSInterface) -> None:
    server.enqueue(
        "bedrock", tool_calls=[{"id": "t1", "name": "f", "arguments": '{"city": "Par'}], fragments=2
    )
    call = {"id": "t1", "name": "f", "arguments": {"_raw": '{"city": "Par'}}
    assert calls(list(llm.stream("q"))) == [call]


def test_max_tokens_cut(server: MockLLMServer, llm: AWSInterface) -> None:
    server.enqueue("bedrock", text="The answer is", stop_reason="max_tokens")
    result = done(list(llm.stream("q", max_tokens=3)))
    assert (result["content"], result["stop_reason"]) == ("The answer is", "max_tokens")


def test_signed_reasoning_goes_to_provider_data(server: MockLLMServer, llm: AWSInterface) -> None:
    body = raw_stream(
        ("messageStart", {"role": "assistant"}),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "let me "}}},
        ),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "think"}}},
        ),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"reasoningContent": {"text": "unsigned"}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Hi"}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "end_turn"}),
    )
    server.enqueue_raw(
        200, body, {"content-type": "application/vnd.amazon.eventstream"}, provider="bedrock"
    )
    result = done(list(llm.stream("q")))
    assert result["content"] == "Hi"
    assert result["provider_data"] == {
        "bedrock": {"reasoning": [{"reasoningText": {"text": "let me think", "signature": "c2ln"}}]}
    }
    assert result["message"]["provider_data"] == result["provider_data"]


# --- done == generate ------------------------------------------------------------------------------

# The scripts every provider shares are the contract's (contract.py); these are Bedrock's own
# stop reasons and broken argument JSON.
SCRIPTS: list[dict[str, Any]] = [
    {"tool_calls": [{"id": "tooluse_1", "name": "f", "arguments": "not json"}]},
    {"text": "halt", "stop_reason": "stop_sequence"},
    {"text": "no", "stop_reason": "content_filter"},
]


@pytest.mark.parametrize("script", SCRIPTS)
async def test_done_equals_generate(
    server: MockLLMServer, llm: AWSInterface, script: dict[str, Any]
) -> None:
    for _ in range(3):
        server.enqueue("bedrock", **script)
    expected = await asyncio.to_thread(llm.generate, "q")
    streamed = await asyncio.to_thread(lambda: list(llm.stream("q")))
    streamed_async = await collect_async(llm, "q")
    assert done(streamed) == expected
    assert done(streamed_async) == expected
    assert streamed_async == streamed
    assert len(calls(streamed)) == len(expected["tool_calls"])


# --- recorded ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", recorded(streaming=True))
def test_recorded_stream(server: MockLLMServer, llm: AWSInterface, fixture: dict[str, Any]) -> None:
    server.enqueue_recorded(fixture, provider="bedrock")
    events = list(llm.stream("q"))
    result = done(events)
    check_recorded(result, fixture)
    if fixture["response"]["status"] < 400:
        assert calls(events) == expected_calls(fixture)
        assert "".join(texts(events)) == fixture["derived"]["text"]


@pytest.mark.parametrize("fixture", recorded(streaming=True))
async def test_recorded_stream_async(
    server: MockLLMServer, llm: AWSInterface, fixture: dict[str, Any]
) -> None:
    server.enqueue_recorded(fixture, provider="bedrock")
    check_recorded(done(await collect_async(llm, "q")), fixture)


# --- faults ------------------------------------------------------------------------------------


def error_done(events: list[dict[str, Any]], kind: str, content: str | None) -> None:
    result = done(events)
    assert (result["stop_reason"], result["content"], result["message"]) == ("error", content, None)
    assert result["error"]["type"] == kind
    assert result["error"]["provider"] == "bedrock"


def test_cut_at_an_event_boundary_is_a_server_error(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    body = raw_stream(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "half"}}),
    )
    server.enqueue_raw(
        200, body, {"content-type": "application/vnd.amazon.eventstream"}, provider="bedrock"
    )
    # A clean end without messageStop: the truncation rule (docs/errors.md).
    error_done(list(llm.stream("q")), "server", "half")


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, "rate_limit"),
        (400, "invalid_request"),
        (500, "server"),
        (503, "server"),
        (424, "server"),
    ],
)
def test_in_stream_error_event(
    server: MockLLMServer, llm: AWSInterface, status: int, kind: str
) -> None:
    server.enqueue(
        "bedrock",
        text="so far",
        fragments=2,
        stream_error={"status": status, "message": "oops"},
        cut_after=3,
    )
    events = list(llm.stream("q"))
    error_done(events, kind, "so far")
    assert "oops" in done(events)["error"]["message"]


# --- retries ----------------------------------------------------------------------------------


@pytest.fixture
def retrying(server: MockLLMServer, monkeypatch: pytest.MonkeyPatch) -> AWSInterface:
    """An interface that retries twice, with ~10 ms backoff when no Retry-After is sent."""
    monkeypatch.setattr("zerda.llm._retry.INITIAL_RETRY_DELAY", 0.01)
    return AWSInterface(MODEL, max_retries=2, **server.client_options("bedrock"))


def attempts(server: MockLLMServer) -> int:
    return len(server.requests_for("bedrock"))


def enqueue_failures_then_text(server: MockLLMServer) -> None:
    server.enqueue_fault("drop", "bedrock")
    server.enqueue_error(503, "bedrock", message="busy", retry_after=0.01)
    server.enqueue("bedrock", text="third time", fragments=3)


def test_a_stream_is_retried_before_its_first_event(
    server: MockLLMServer, retrying: AWSInterface
) -> None:
    enqueue_failures_then_text(server)
    events = list(retrying.stream("q"))
    assert texts(events) == ["thir", "d ti", "me"]
    assert done(events)["content"] == "third time"
    assert attempts(server) == 3


async def test_an_async_stream_is_retried_before_its_first_event(
    server: MockLLMServer, retrying: AWSInterface
) -> None:
    enqueue_failures_then_text(server)
    events = await collect_async(retrying, "q")
    assert texts(events) == ["thir", "d ti", "me"]
    assert done(events)["content"] == "third time"
    assert attempts(server) == 3


def test_an_empty_stream_is_a_server_error_not_retried(
    server: MockLLMServer, retrying: AWSInterface
) -> None:
    """A 200 with no event at all is a broken response: not retried, as every broken 200
    body is not (docs/errors.md)."""
    server.enqueue_raw(
        200, b"", {"content-type": "application/vnd.amazon.eventstream"}, provider="bedrock"
    )
    server.enqueue("bedrock", text="full")
    error_done(list(retrying.stream("q")), "server", None)
    assert attempts(server) == 1


# --- closing -----------------------------------------------------------------------------------


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts closes of the HTTP response under each stream."""
    closed: list[int] = []
    original = bedrock_stream._Events.close

    def close(self: bedrock_stream._Events) -> None:
        closed.append(1)
        original(self)

    monkeypatch.setattr(bedrock_stream._Events, "close", close)
    return closed


def test_breaking_out_closes_the_response(
    server: MockLLMServer, llm: AWSInterface, closes: list[int]
) -> None:
    server.enqueue("bedrock", text="a long answer " * 20, fragments=20, chunk_delay=0.01)
    stream = llm.stream("q")
    first = next(stream)
    assert first["type"] == "text"
    assert closes == []
    stream.close()
    assert closes == [1]
    server.enqueue("bedrock", text="next")  # the client still works
    assert done(list(llm.stream("q")))["content"] == "next"


async def test_breaking_out_async_closes_the_response(
    server: MockLLMServer, llm: AWSInterface, closes: list[int]
) -> None:
    server.enqueue("bedrock", text="a long answer " * 4, fragments=4, chunk_delay=0.25)
    stream = llm.stream_async("q")
    async for event in stream:
        assert event["type"] == "text"
        break
    start = time.perf_counter()
    await stream.aclose()
    assert time.perf_counter() - start < 0.1  # the loop never waits for the pool thread
    for _ in range(100):  # the pool thread closes the response at its next read
        if closes:
            break
        await asyncio.sleep(0.01)
    assert closes == [1]
    server.enqueue("bedrock", text="next")
    assert done(await collect_async(llm, "q"))["content"] == "next"


async def test_cancelled_while_connecting_closes_the_response(
    server: MockLLMServer, llm: AWSInterface, closes: list[int]
) -> None:
    """Cancelled while its first attempt waits in a pool thread: the stream that attempt
    opens afterwards is closed, not leaked."""
    server.enqueue("bedrock", text="too late", delay=0.2)
    task = asyncio.create_task(collect_async(llm, "q"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if closes:
            break
        await asyncio.sleep(0.01)
    assert closes == [1]


async def test_stream_async_does_not_block_the_loop(
    server: MockLLMServer, llm: AWSInterface
) -> None:
    server.enqueue("bedrock", text="slow stream", fragments=5, chunk_delay=0.06)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    events = await collect_async(llm, "q")
    task.cancel()
    assert done(events)["content"] == "slow stream"
    assert ticks >= 10


async def test_concurrent_async_streams(server: MockLLMServer, llm: AWSInterface) -> None:
    server.set_default("bedrock", text="same answer", fragments=3, chunk_delay=0.02)
    results = await asyncio.gather(*(collect_async(llm, "q") for _ in range(16)))
    assert {done(events)["content"] for events in results} == {"same answer"}
    assert json.dumps([done(events) for events in results])
