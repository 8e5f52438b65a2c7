"""GeminiInterface.stream / stream_async against MockLLMServer and the real google-genai SDK:
events, the done result (equal to generate's for the same response), mid-stream faults,
closing on break, and every streamed recorded exchange."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.providers.histories import TOOLS
from tests.llm.providers.test_gemini import (
    RECORDED,
    _go_sdk_format,
    _load,
    expected_from_recording,
    make,
    recorded_params,
    result,
)
from zerda.testing import GEMINI_THOUGHT_SIGNATURE, MockLLMServer
from zerda.testing._script import ErrorReply

pytest.importorskip("google.genai")

STREAM_PATH = "/v1/models/gemini-2.5-flash:streamGenerateContent"

# Cache and reasoning counts the mock does not report.
NO_DETAILS = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture
def mock(server: MockLLMServer) -> MockLLMServer:
    server.reset()
    return server


def delta_event(index: int, call: dict[str, Any]) -> dict[str, Any]:
    """The one tool_call_delta of a call that arrives whole: its arguments as JSON text."""
    arguments = json.dumps(call["arguments"])
    return {
        "type": "tool_call_delta",
        "index": index,
        "id": call["id"],
        "name": call["name"],
        "arguments": arguments,
    }


def events_of(mock: MockLLMServer, **kwargs: Any) -> list[dict[str, Any]]:
    events = list(make(mock).stream(kwargs.pop("messages", "hi"), **kwargs))
    assert mock.last_request("gemini").path == STREAM_PATH
    return events


async def async_events_of(mock: MockLLMServer, **kwargs: Any) -> list[dict[str, Any]]:
    return [e async for e in make(mock).stream_async(kwargs.pop("messages", "hi"), **kwargs)]


def call_event(call: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "tool_call": call}


def test_a_call_arrives_whole_even_with_many_fragments(mock: MockLLMServer) -> None:
    # Gemini never splits a call: `fragments` splits the text only. The call is signed, as
    # a thinking model's first call of a turn is, in streams too.
    call = {"id": None, "name": "get_weather", "arguments": {"city": "Rio de Janeiro"}}
    mock.enqueue("gemini", text="ab", tool_calls=[call], fragments=2)
    signed = {"gemini": {"thought_signatures": [GEMINI_THOUGHT_SIGNATURE]}}
    assert events_of(mock, tools=TOOLS) == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
        delta_event(0, call),
        call_event(call),
        {"type": "done", "result": result("ab", [call], "tool_use", provider_data=signed)},
    ]


def test_parallel_calls_with_signatures_and_a_no_argument_call(mock: MockLLMServer) -> None:
    calls = [
        {"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}},
        {"id": None, "name": "get_time", "arguments": {}},
        {"id": None, "name": "get_weather", "arguments": {"city": "Bergen"}},
    ]
    signatures = {"gemini": {"thought_signatures": [None, "c2ln", None]}}
    mock.enqueue("gemini", tool_calls=calls, provider_data=signatures, interleave=True)
    assert events_of(mock, tools=TOOLS) == [
        *[e for i, c in enumerate(calls) for e in (delta_event(i, c), call_event(c))],
        {"type": "done", "result": result(None, calls, "tool_use", provider_data=signatures)},
    ]


def test_argument_text_is_not_gemini_and_ends_in_an_error(mock: MockLLMServer) -> None:
    # Gemini's args is always an object; the SDK refuses anything else.
    mock.enqueue("gemini", tool_calls=[{"name": "f", "arguments": '{"a": 1'}])
    done = events_of(mock)[-1]["result"]
    assert (done["stop_reason"], done["error"]["type"]) == ("error", "server")


def assert_error_done(
    done: dict[str, Any], content: str | None, kind: str, status: int | None
) -> None:
    assert done["type"] == "done"
    got = done["result"]
    assert (got["content"], got["stop_reason"], got["message"]) == (content, "error", None)
    assert (got["error"]["type"], got["error"]["status_code"]) == (kind, status)


def test_error_event_mid_stream_keeps_the_partial_text(mock: MockLLMServer) -> None:
    mock.enqueue(
        "gemini", text="Hello there", fragments=3, cut_after=1, stream_error=ErrorReply(503)
    )
    events = events_of(mock)
    assert_error_done(events[-1], "Hell", "server", 503)


@pytest.mark.parametrize("body", ["", "data: {}\n\n", 'data: {"candidates": []}\n\n'])
async def test_a_stream_with_no_answer_at_all_is_a_server_error(
    mock: MockLLMServer, body: str
) -> None:
    expected = {
        "type": "server",
        "message": "gemini sent a malformed response: "
        "the stream is empty (no candidates, prompt feedback or usage)",
        "status_code": None,
        "provider": "gemini",
        "retryable": False,
    }
    for _ in range(2):
        mock.enqueue_raw(200, body, headers={"content-type": "text/event-stream"})
    events = events_of(mock)
    assert [e["type"] for e in events] == ["done"]
    assert events[0]["result"]["error"] == expected
    events = await async_events_of(mock)
    assert events[0]["result"]["error"] == expected


def _pool(transport_owner: Any) -> Any:
    """httpx(2)'s connection pool behind google-genai's client (private, so looked up
    defensively: the test skips if the layout changes)."""
    pool = getattr(getattr(transport_owner, "_transport", None), "_pool", None)
    if pool is None or not hasattr(pool, "_requests"):
        pytest.skip("the SDK's HTTP client no longer exposes its connection pool")
    return pool


def test_breaking_out_closes_the_response(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", text="a b c d e f", fragments=6, chunk_delay=0.2)
    llm = make(mock)
    stream = llm.stream("hi")
    assert next(stream) == {"type": "text", "text": "a "}
    pool = _pool(llm.client._api_client._httpx_client)
    assert len(pool._requests) == 1
    stream.close()
    assert pool._requests == []


async def test_breaking_out_of_an_async_stream_closes_the_response(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", text="a b c d e f", fragments=6, chunk_delay=0.2)
    llm = make(mock)
    stream = llm.stream_async("hi")
    assert await anext(stream) == {"type": "text", "text": "a "}
    outer = llm.async_client._api_client._async_httpx_client
    # google-genai keeps one inner client (and pool) per event loop.
    inner = getattr(outer, "_loop_clients", {}).get(asyncio.get_running_loop(), outer)
    pool = _pool(inner)
    assert len(pool._requests) == 1
    await stream.aclose()
    assert pool._requests == []


# The scripts every provider shares are the contract's (contract.py); Gemini's own: id-less
# calls with thought signatures, its finish reasons.
SCRIPTS: dict[str, dict[str, Any]] = {
    "calls": {
        "text": "Let me check.",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Kyiv"}, "id": "g1"},
            {"name": "get_time", "arguments": {}},
        ],
        "provider_data": {"gemini": {"thought_signatures": ["c2ln", None]}},
        "usage": {"input_tokens": 21, "output_tokens": 6, **NO_DETAILS},
        "fragments": 3,
    },
    "filtered": {"native_stop_reason": "SAFETY"},
    "malformed_call": {"native_stop_reason": "MALFORMED_FUNCTION_CALL"},
}


@pytest.mark.parametrize("name", SCRIPTS)
async def test_done_equals_generate_sync_and_async(mock: MockLLMServer, name: str) -> None:
    script = SCRIPTS[name]
    llm = make(mock)
    mock.enqueue("gemini", **script)
    generated = llm.generate("hi", tools=TOOLS)
    mock.enqueue("gemini", **script)
    streamed = list(llm.stream("hi", tools=TOOLS))[-1]["result"]
    mock.enqueue("gemini", **script)
    streamed_async = (await async_events_of(mock, tools=TOOLS))[-1]["result"]
    assert streamed == generated
    assert streamed_async == generated


async def test_async_events_equal_sync_events(mock: MockLLMServer) -> None:
    script = SCRIPTS["calls"]
    mock.enqueue("gemini", **script)
    sync = events_of(mock, tools=TOOLS)
    mock.enqueue("gemini", **script)
    assert await async_events_of(mock, tools=TOOLS) == sync


# --- recorded streams -------------------------------------------------------------------


@pytest.mark.parametrize("path", recorded_params(streaming=True))
def test_recorded_stream(mock: MockLLMServer, path: Path) -> None:
    fixture = _load(path)
    mock.enqueue_recorded(fixture, provider="gemini")
    events = list(make(mock).stream("hi"))
    done = events[-1]["result"]
    if _go_sdk_format(fixture):
        # A JSON array of integer-enum chunks: the Go SDK's format, unreadable by google-genai.
        assert done["stop_reason"] == "error" and done["error"]["type"] == "server"
        return
    expected = expected_from_recording(fixture)
    assert {k: done[k] for k in ("content", "tool_calls", "stop_reason")} == expected
    assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == expected["tool_calls"]
    text = "".join(e["text"] for e in events if e["type"] == "text")
    assert (text or None) == expected["content"]
    assert done["usage"] is not None


def test_recorded_streams_are_present_or_skipped() -> None:
    if not RECORDED.is_dir():
        pytest.skip(f"{RECORDED} is absent")
    assert any(json.loads(p.read_text())["streaming"] for p in (RECORDED / "gemini").glob("*"))
