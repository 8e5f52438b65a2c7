"""Ollama through MockLLMServer: the real ``ollama`` client, sync and async, JSON and NDJSON
streaming, on the native /api/chat; the OpenAI-compatible /v1 endpoint; renderer outputs;
errors and faults."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import ollama
import openai
import pytest

from zerda.testing import MockLLMServer, Script, ScriptedCall
from zerda.testing._script import ErrorReply, RecordedRequest
from zerda.testing.wires.ollama import render as _render_ollama

MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
    {"name": "get_time", "arguments": {}},
]


def _client(server: MockLLMServer, is_async: bool = False, **opts: Any) -> Any:
    cls = ollama.AsyncClient if is_async else ollama.Client
    return cls(**server.sdk_client_kwargs("ollama"), **opts)


def _normal(parts: list[Any]) -> dict[str, Any]:
    """Fold one response or a stream's parts into text, calls, done_reason and usage."""
    text, calls = "", []
    for part in parts:
        text += part.message.content or ""
        calls += [
            (c.function.name, dict(c.function.arguments)) for c in part.message.tool_calls or []
        ]
    last = parts[-1]
    return {
        "text": text,
        "calls": calls,
        "done_reason": last.done_reason,
        "usage": (last.prompt_eval_count, last.eval_count),
    }


def chat_sync(client: Any, stream: bool) -> dict[str, Any]:
    result = client.chat(model="llama3.2", messages=MESSAGES, stream=stream)
    return _normal(list(result) if stream else [result])


async def chat_async(client: Any, stream: bool) -> dict[str, Any]:
    result = await client.chat(model="llama3.2", messages=MESSAGES, stream=stream)
    return _normal([p async for p in result] if stream else [result])


# -- through the SDK ----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_sync_text_tool_calls_and_usage(mock_llm_server: MockLLMServer, stream: bool) -> None:
    s = mock_llm_server
    s.enqueue(
        "ollama",
        text="Checking.",
        tool_calls=CALLS,
        usage={"input_tokens": 7, "output_tokens": 8},
        fragments=3,
    )
    assert chat_sync(_client(s), stream) == {
        "text": "Checking.",
        "calls": [("get_weather", {"city": "Paris", "days": 2}), ("get_time", {})],
        "done_reason": "stop",
        "usage": (7, 8),
    }
    req = s.last_request("ollama")
    assert (req.path, req.body["model"], req.body["stream"]) == ("/api/chat", "llama3.2", stream)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
async def test_async_text_tool_calls_and_usage(
    mock_llm_server: MockLLMServer, stream: bool
) -> None:
    s = mock_llm_server
    s.enqueue("ollama", text="Hi there", tool_calls=CALLS[:1], fragments=2)
    assert await chat_async(_client(s, is_async=True), stream) == {
        "text": "Hi there",
        "calls": [("get_weather", {"city": "Paris", "days": 2})],
        "done_reason": "stop",
        "usage": (10, 5),
    }


@pytest.mark.parametrize(
    ("stop", "native"),
    [
        ("end_turn", "stop"),
        ("tool_use", "stop"),
        ("max_tokens", "length"),
        ("stop_sequence", "stop"),
        ("content_filter", "content_filter"),
        ("other", "other"),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_each_stop_reason(
    mock_llm_server: MockLLMServer, stream: bool, stop: str, native: str
) -> None:
    mock_llm_server.enqueue("ollama", text="done", stop_reason=stop)
    result = chat_sync(_client(mock_llm_server), stream)
    assert (result["text"], result["done_reason"]) == ("done", native)


def test_native_stop_reason_is_sent_verbatim(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue("ollama", text="x", native_stop_reason="unload")
    assert chat_sync(_client(mock_llm_server), False)["done_reason"] == "unload"


def test_model_is_echoed_unless_the_script_names_one(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("ollama", text="a")
    s.enqueue("ollama", text="b", model="qwen3")
    client = _client(s)
    models = [client.chat(model="llama3.2", messages=MESSAGES).model for _ in range(2)]
    assert models == ["llama3.2", "qwen3"]


def test_error_status_raises_response_error(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue_error(404, "ollama", message="model 'nope' not found")
    with pytest.raises(ollama.ResponseError) as info:
        chat_sync(_client(mock_llm_server), False)
    assert (info.value.error, info.value.status_code) == ("model 'nope' not found", 404)


def test_429_is_reported_with_retry_after(mock_llm_server: MockLLMServer) -> None:
    # The ollama client has no retry logic of its own: the 429 reaches the caller.
    s = mock_llm_server
    s.enqueue_error(429, "ollama", message="busy", retry_after=1)
    s.enqueue_error(429, "ollama", message="busy", retry_after=1)
    with pytest.raises(ollama.ResponseError) as info:
        chat_sync(_client(s), False)
    assert (info.value.error, info.value.status_code) == ("busy", 429)
    resp = httpx.post(s.base_url("ollama") + "/api/chat", json={"model": "m"}, timeout=5)
    assert (resp.headers["retry-after"], resp.json()) == ("1", {"error": "busy"})


def test_nothing_queued_names_provider_and_path(mock_llm_server: MockLLMServer) -> None:
    with pytest.raises(ollama.ResponseError) as info:
        chat_sync(_client(mock_llm_server), True)
    assert info.value.error == "MockLLMServer: nothing queued for ollama POST /api/chat"


def test_stream_error_line_raises_response_error(mock_llm_server: MockLLMServer) -> None:
    error = {"status": 500, "message": "model runner crashed"}
    mock_llm_server.enqueue("ollama", text="partial", fragments=2, stream_error=error)
    parts: list[Any] = []
    with pytest.raises(ollama.ResponseError, match="model runner crashed"):
        parts.extend(_client(mock_llm_server).chat(model="m", messages=MESSAGES, stream=True))
    assert "".join(p.message.content for p in parts) == "partial"


def test_dropped_connection_is_a_transport_error(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue_fault("drop", "ollama")
    with pytest.raises(httpx.TransportError):
        chat_sync(_client(mock_llm_server), False)


def test_stream_cut_off_is_a_transport_error(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue("ollama", text="abcdef", fragments=3, cut_after=2)
    with pytest.raises(httpx.TransportError):
        chat_sync(_client(mock_llm_server), True)


def test_hang_with_short_client_timeout_is_a_timeout(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue_fault("hang", "ollama", delay=3)
    with pytest.raises(httpx.TimeoutException):
        chat_sync(_client(mock_llm_server, timeout=0.2), False)


def test_openai_compatible_endpoint(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("ollama", text="compat", tool_calls=CALLS[:1])
    client = openai.OpenAI(base_url=s.base_url("ollama") + "/v1", api_key="ollama", max_retries=0)
    resp = client.chat.completions.create(model="llama3.1", messages=MESSAGES)  # type: ignore[arg-type]
    choice = resp.choices[0]
    assert (choice.message.content, choice.finish_reason, resp.system_fingerprint) == (
        "compat",
        "tool_calls",
        "fp_ollama",
    )
    call = choice.message.tool_calls[0]  # type: ignore[index]
    assert (call.function.name, json.loads(call.function.arguments)) == (  # type: ignore[union-attr]
        "get_weather",
        {"city": "Paris", "days": 2},
    )
    assert s.last_request("ollama").path == "/v1/chat/completions"


# -- renderer outputs ---------------------------------------------------------------------


def _req(body: Any, path: str = "/api/chat") -> RecordedRequest:
    return RecordedRequest("ollama", "POST", path, {}, {}, body)


def _without_time(obj: dict[str, Any]) -> dict[str, Any]:
    assert obj["created_at"].endswith("Z")
    return {k: v for k, v in obj.items() if k != "created_at"}


DONE = {
    "done": True,
    "total_duration": 1_000_000,
    "load_duration": 100_000,
    "prompt_eval_duration": 200_000,
    "eval_duration": 700_000,
}


def test_stream_unless_the_request_says_false() -> None:
    assert _render_ollama.wants_stream(_req({"model": "m"}))
    assert _render_ollama.wants_stream(_req({"model": "m", "stream": True}))
    assert not _render_ollama.wants_stream(_req({"model": "m", "stream": False}))
    assert not _render_ollama.wants_stream(_req({"model": "m"}, "/v1/chat/completions"))


def test_json_body() -> None:
    script = Script(
        text="Hi",
        tool_calls=[ScriptedCall("f", {"a": 1}, id="call_f"), ScriptedCall("g", {}, id="call_x")],
        usage={"input_tokens": 3, "output_tokens": 4},
    )
    reply = _render_ollama.render(script, _req({"model": "llama3.2", "stream": False}))
    assert reply.headers == {"content-type": "application/json; charset=utf-8"}
    assert _without_time(json.loads(reply.body or b"")) == {
        "model": "llama3.2",
        "message": {
            "role": "assistant",
            "content": "Hi",
            "tool_calls": [
                {"id": "call_f", "function": {"index": 0, "name": "f", "arguments": {"a": 1}}},
                {"id": "call_x", "function": {"index": 1, "name": "g", "arguments": {}}},
            ],
        },
        **DONE,
        "done_reason": "stop",
        "prompt_eval_count": 3,
        "eval_count": 4,
    }


def test_stream_lines() -> None:
    script = Script(text="Hello", tool_calls=[ScriptedCall("f", {"a": 1}, "call_f")], fragments=2)
    reply = _render_ollama.render(script, _req({"model": "m"}))
    assert (reply.headers, reply.closing_chunks) == ({"content-type": "application/x-ndjson"}, 1)
    assert all(c.endswith(b"\n") and c.count(b"\n") == 1 for c in reply.chunks or [])
    lines = [_without_time(json.loads(c)) for c in reply.chunks or []]
    assert lines == [
        {"model": "m", "message": {"role": "assistant", "content": "Hel"}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": "lo"}, "done": False},
        {
            "model": "m",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "call_f", "function": {"index": 0, "name": "f", "arguments": {"a": 1}}}
                ],
            },
            "done": False,
        },
        {
            "model": "m",
            "message": {"role": "assistant", "content": ""},
            **DONE,
            "done_reason": "stop",
            "prompt_eval_count": 10,
            "eval_count": 5,
        },
    ]


def test_string_arguments_are_sent_as_the_string() -> None:
    script = Script(tool_calls=[ScriptedCall("f", "not json", "call_f")])
    reply = _render_ollama.render(script, _req({"model": "m", "stream": False}))
    calls = json.loads(reply.body or b"")["message"]["tool_calls"]
    assert calls == [
        {"id": "call_f", "function": {"index": 0, "name": "f", "arguments": "not json"}}
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_calls_without_a_scripted_id_get_ollamas_own(stream: bool) -> None:
    """Ollama names each native call ``call_`` + 8 lowercase alphanumerics (recording
    ollama/langchaingo@8d98658ae2a1__llms.ollama.TestCloudToolCall__i00), in streams too."""
    script = Script(tool_calls=[ScriptedCall("f", {"a": 1}), ScriptedCall("g", {})])
    reply = _render_ollama.render(script, _req({"model": "m", "stream": stream}))
    lines = (
        [json.loads(c) for c in reply.chunks] if reply.chunks else [json.loads(reply.body or b"")]
    )
    calls = [c for line in lines for c in line["message"].get("tool_calls", [])]
    ids = [c["id"] for c in calls]
    assert all(re.fullmatch(r"call_[a-z0-9]{8}", i) for i in ids) and len(set(ids)) == 2
    assert calls == [
        {"id": ids[0], "function": {"index": 0, "name": "f", "arguments": {"a": 1}}},
        {"id": ids[1], "function": {"index": 1, "name": "g", "arguments": {}}},
    ]


def test_error_bodies() -> None:
    reply = _render_ollama.render_error(ErrorReply(400, "bad"))
    assert (reply.status, reply.body) == (400, b'{"error": "bad"}')
    assert _render_ollama.render_stream_error(ErrorReply(500, "boom")) == b'{"error": "boom"}\n'
