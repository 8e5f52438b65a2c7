"""OllamaInterface.stream / stream_async (DESIGN.md §7): NDJSON chunks carrying text deltas,
whole tool calls and, on the last (done) chunk, done_reason and usage."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tests.llm.providers.histories import TOOLS
from tests.llm.providers.test_ollama import (
    _recorded,
    expected_calls,
    expected_stop,
    make,
)
from zerda.llm import ServerError
from zerda.testing import MockLLMServer

NDJSON = {"content-type": "application/x-ndjson"}

# Cache and reasoning counts the mock does not report.
NO_DETAILS = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}


@pytest.fixture
def server() -> Any:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _no_ollama_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)


def collect(llm: Any, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    return list(llm.stream(*args, **kwargs))


async def collect_async(llm: Any, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    return [e async for e in llm.stream_async(*args, **kwargs)]


def done(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "done"
    assert [e for e in events if e["type"] == "done"] == [events[-1]]
    result: dict[str, Any] = events[-1]["result"]
    return result


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["type"] == "text"]


def calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["tool_call"] for e in events if e["type"] == "tool_call"]


def ndjson(*chunks: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(c).encode() + b"\n" for c in chunks)


def chunk(content: str = "", tool_calls: Any = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"model": "m", "message": message, "done": False, **extra}


def final(reason: str = "stop") -> dict[str, Any]:
    return {**chunk(), "done": True, "done_reason": reason, "prompt_eval_count": 4, "eval_count": 6}


# --- the invariant: done result == generate result ----------------------------------------

# The scripts every provider shares are the contract's (contract.py); these are Ollama's own:
# arguments that are not JSON, a done_reason Zerda does not know. Each call has its id in
# the script: the mock otherwise makes a new one per response, as Ollama does (calls without
# ids, from older servers, are the raw bodies below).
SCRIPTS: list[dict[str, Any]] = [
    {
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_w"}],
        "fragments": 4,
    },
    {
        "text": "Checking both.",
        "fragments": 3,
        "interleave": True,
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_w"},
            {"name": "get_time", "arguments": {}, "id": "call_t"},
        ],
    },
    {"tool_calls": [{"name": "get_time", "arguments": "{not json", "id": "call_t"}]},
    {"text": "odd", "native_stop_reason": "unload"},
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_done_equals_generate(server: MockLLMServer, script: dict[str, Any]) -> None:
    llm = make(server)
    server.enqueue("ollama", **script)
    server.enqueue("ollama", **script)
    expected = llm.generate("hi", tools=TOOLS)
    events = collect(llm, "hi", tools=TOOLS)
    assert done(events) == expected
    assert calls(events) == expected["tool_calls"]
    assert "".join(texts(events)) == (expected["content"] or "")
    assert server.requests[1].body == {**server.requests[0].body, "stream": True}


@pytest.mark.parametrize("script", SCRIPTS)
async def test_done_equals_generate_async(server: MockLLMServer, script: dict[str, Any]) -> None:
    llm = make(server)
    server.enqueue("ollama", **script)
    server.enqueue("ollama", **script)
    expected = await llm.generate_async("hi", tools=TOOLS)
    events = await collect_async(llm, "hi", tools=TOOLS)
    assert done(events) == expected
    assert calls(events) == expected["tool_calls"]


# --- event sequences ----------------------------------------------------------------------


def test_calls_spread_over_chunks(server: MockLLMServer) -> None:
    """Ollama may send each whole call in its own chunk: none is lost or merged."""
    body = ndjson(
        chunk("Let me see. "),
        chunk(
            tool_calls=[
                {"id": "call_a", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
            ]
        ),
        chunk(tool_calls=[{"function": {"index": 1, "name": "get_time", "arguments": {}}}]),
        final(),
    )
    server.enqueue_raw(200, body, NDJSON, provider="ollama", chunk_size=40)
    events = collect(make(server), "hi", tools=TOOLS)
    assert events[:-1] == [
        {"type": "text", "text": "Let me see. "},
        {
            "type": "tool_call_delta",
            "index": 0,
            "id": "call_a",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
        },
        {
            "type": "tool_call",
            "tool_call": {"id": "call_a", "name": "get_weather", "arguments": {"city": "Oslo"}},
        },
        {"type": "tool_call_delta", "index": 1, "id": None, "name": "get_time", "arguments": "{}"},
        {"type": "tool_call", "tool_call": {"id": None, "name": "get_time", "arguments": {}}},
    ]
    assert done(events) == {
        "content": "Let me see. ",
        "tool_calls": calls(events),
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 4, "output_tokens": 6, **NO_DETAILS},
        "reasoning": None,
        "message": {"role": "assistant", "content": "Let me see. ", "tool_calls": calls(events)},
        "cost": None,  # the ollama row has no price provider
    }


def test_thinking_chunks_are_not_text(server: MockLLMServer) -> None:
    body = ndjson(
        {**chunk(), "message": {"role": "assistant", "content": "", "thinking": "hmm"}},
        chunk("4"),
        final(),
    )
    server.enqueue_raw(200, body, NDJSON, provider="ollama")
    events = collect(make(server), "2+2?")
    assert texts(events) == ["4"]
    assert done(events)["content"] == "4"


# --- failures -----------------------------------------------------------------------------


def test_error_line_mid_stream(server: MockLLMServer) -> None:
    server.enqueue(
        "ollama",
        text="abcdef",
        fragments=3,
        cut_after=2,
        stream_error={"status": 500, "message": "runner died"},
    )
    result = done(collect(make(server), "hi"))
    assert result["content"] == "abcd"
    assert result["error"] == {
        "type": "server",
        "message": "runner died",
        "status_code": None,
        "provider": "ollama",
        "retryable": False,
    }


def test_stream_closed_before_done_chunk(server: MockLLMServer) -> None:
    server.enqueue_raw(200, ndjson(chunk("partial ")), NDJSON, provider="ollama")
    result = done(collect(make(server), "hi"))
    # A clean end without the done chunk: the truncation rule (docs/errors.md).
    assert (result["content"], result["error"]["type"]) == ("partial ", "server")


def test_empty_stream(server: MockLLMServer) -> None:
    server.enqueue_raw(200, b"", NDJSON, provider="ollama")
    assert done(collect(make(server), "hi"))["error"]["type"] == "server"


async def test_raise_errors_async(server: MockLLMServer) -> None:
    server.enqueue(
        "ollama", text="abcdef", fragments=3, stream_error={"status": 500, "message": "x"}
    )
    seen: list[dict[str, Any]] = []
    with pytest.raises(ServerError):
        async for event in make(server).stream_async("hi", raise_errors=True):
            seen.append(event)
    assert texts(seen) == ["ab", "cd", "ef"]


# --- NDJSON splitting ---------------------------------------------------------------------

UNICODE_BREAKS = "a\u0085b\u2028c\u2029d\re\x1cf"  # line breaks to str.splitlines, not NDJSON


def unescaped(*chunks: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(c, ensure_ascii=False).encode() + b"\n" for c in chunks)


async def test_unicode_line_breaks_in_text_and_arguments_stay_whole(server: MockLLMServer) -> None:
    # The SDK's own reader (httpx iter_lines) cut such lines in two: the stream failed.
    call = {"function": {"name": "f", "arguments": {"q": UNICODE_BREAKS}}}
    body = unescaped(chunk(UNICODE_BREAKS), chunk(tool_calls=[call]), final())
    assert "\u2028".encode() in body
    for _ in range(2):
        server.enqueue_raw(200, body, NDJSON, provider="ollama")
    for events in (collect(make(server), "hi"), await collect_async(make(server), "hi")):
        assert texts(events) == [UNICODE_BREAKS]
        result = done(events)
        assert "error" not in result
        assert result["content"] == UNICODE_BREAKS
        assert result["tool_calls"] == [
            {"id": None, "name": "f", "arguments": {"q": UNICODE_BREAKS}}
        ]


def test_unicode_line_breaks_from_the_mock_server(server: MockLLMServer) -> None:
    server.enqueue("ollama", text=UNICODE_BREAKS, fragments=3)
    events = collect(make(server), "hi")
    assert "".join(texts(events)) == UNICODE_BREAKS
    assert done(events)["content"] == UNICODE_BREAKS


def test_crlf_blank_lines_and_a_last_line_without_newline(server: MockLLMServer) -> None:
    body = b"\r\n".join(json.dumps(c).encode() for c in (chunk("a"), chunk("b"), final()))
    server.enqueue_raw(200, b"\n" + body.replace(b"\r\n", b"\r\n\n", 1), NDJSON, provider="ollama")
    events = collect(make(server), "hi")
    assert texts(events) == ["a", "b"]
    assert done(events)["stop_reason"] == "end_turn"


def test_line_splitter_joins_lines_cut_anywhere() -> None:
    from zerda.llm.wires.ollama.fastpath import LineSplitter

    body = unescaped(chunk("é\u2028x"), final())
    for size in (1, 2, 3, 7, len(body)):
        lines = LineSplitter()
        got = [line for i in range(0, len(body), size) for line in lines.feed(body[i : i + size])]
        assert got + lines.flush() == body.split(b"\n")[:2]


def test_a_line_that_is_not_an_object_is_a_server_error(server: MockLLMServer) -> None:
    server.enqueue_raw(200, ndjson(chunk("a")) + b"[1, 2]\n", NDJSON, provider="ollama")
    result = done(collect(make(server), "hi"))
    assert (result["content"], result["error"]["type"], result["error"]["retryable"]) == (
        "a",
        "server",
        False,
    )
    assert result["error"]["message"].startswith(
        "ollama sent a malformed response: a stream line is not an object"
    )


def test_a_line_that_is_not_json_is_a_server_error(server: MockLLMServer) -> None:
    server.enqueue_raw(200, ndjson(chunk("a")) + b"{oops\n", NDJSON, provider="ollama")
    result = done(collect(make(server), "hi"))
    assert (result["content"], result["error"]["type"], result["error"]["retryable"]) == (
        "a",
        "server",
        False,
    )


def test_an_http_error_keeps_its_status_and_retry_after(server: MockLLMServer) -> None:
    import ollama

    from zerda.llm.wires.ollama.fastpath import stream_chunks
    from zerda.llm.wires.ollama.interface import _retry_after

    server.enqueue_error(429, "ollama", message="slow down", retry_after=7)
    llm = make(server)
    with pytest.raises(ollama.ResponseError) as info:
        next(stream_chunks(llm.client, ollama, {"model": "m", "messages": [], "stream": True}))
    assert (info.value.status_code, info.value.error) == (429, "slow down")
    assert _retry_after(info.value) == 7


# --- closing ------------------------------------------------------------------------------


def test_breaking_out_closes_the_response(server: MockLLMServer) -> None:
    responses: list[httpx.Response] = []
    llm = make(server, event_hooks={"response": [responses.append]})
    server.enqueue("ollama", text="x" * 40, fragments=20, chunk_delay=0.01)
    stream = llm.stream("hi")
    assert next(stream) == {"type": "text", "text": "xx"}
    assert not responses[0].is_closed
    stream.close()
    assert responses[0].is_closed


async def test_breaking_out_closes_the_response_async(server: MockLLMServer) -> None:
    responses: list[httpx.Response] = []

    async def hook(response: httpx.Response) -> None:
        responses.append(response)

    llm = make(server, event_hooks={"response": [hook]})
    server.enqueue("ollama", text="x" * 40, fragments=20, chunk_delay=0.01)
    stream = llm.stream_async("hi")
    async for _event in stream:
        break
    assert not responses[0].is_closed
    await stream.aclose()
    assert responses[0].is_closed


# --- recorded streams ---------------------------------------------------------------------


def _lines(fx: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in fx["response"]["body"].splitlines() if line.strip()]


def _as_one_response(fx: dict[str, Any]) -> dict[str, Any]:
    """The non-streamed body equivalent to a recorded NDJSON stream."""
    lines = _lines(fx)
    tool_calls = [c for line in lines for c in line["message"].get("tool_calls", [])]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(line["message"].get("content", "") for line in lines),
    }
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {**lines[-1], "message": message}


@pytest.mark.parametrize("fx", _recorded(streaming=True))
def test_recorded_streams(server: MockLLMServer, fx: dict[str, Any]) -> None:
    llm = make(server)
    server.enqueue_recorded(fx, provider="ollama")
    events = collect(llm, "hi")
    result = done(events)
    derived = fx["derived"]
    assert result["content"] == (derived["text"] or None)
    assert result["tool_calls"] == expected_calls(fx) == calls(events)
    assert result["stop_reason"] == expected_stop(fx)
    assert result["usage"] == derived["usage_norm"]
    assert "".join(texts(events)) == derived["text"]
    # The same response, non-streamed, through generate.
    server.enqueue_raw(
        200, _as_one_response(fx), {"content-type": "application/json"}, provider="ollama"
    )
    assert llm.generate("hi") == result


@pytest.mark.parametrize("fx", _recorded(streaming=True)[:2])
async def test_recorded_streams_async(server: MockLLMServer, fx: dict[str, Any]) -> None:
    llm = make(server)
    server.enqueue_recorded(fx, provider="ollama")
    server.enqueue_recorded(fx, provider="ollama")
    sync_result = done(await asyncio.to_thread(collect, llm, "hi"))
    assert done(await collect_async(llm, "hi")) == sync_result
