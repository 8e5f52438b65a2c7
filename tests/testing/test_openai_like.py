"""OpenAI, Groq and Mistral through MockLLMServer: the real SDKs, sync and async, JSON and
streaming, parse what the server renders; renderers' whole outputs; retries and faults."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import pytest

from zerda.testing import MockLLMServer, Script, ScriptedCall
from zerda.testing._script import ErrorReply, RecordedRequest
from zerda.testing.wires.groq import render as _render_groq
from zerda.testing.wires.mistral import render as _render_mistral
from zerda.testing.wires.openai import render as _render_openai

PROVIDERS = ["openai", "groq", "mistral"]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
CALL_ID = {
    "openai": re.compile(r"call_[A-Za-z0-9]{24}"),
    "groq": re.compile(r"call_[A-Za-z0-9]{24}"),
    "mistral": re.compile(r"[A-Za-z0-9]{9}"),
}
TWO_CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    {"id": "given0001", "name": "get_time", "arguments": {}},
]


# -- SDK adapters: each returns {"text", "calls", "finish", "usage"} ----------------------


def _client(server: MockLLMServer, provider: str, is_async: bool, **opts: Any) -> Any:
    kwargs = server.sdk_client_kwargs(provider)
    if provider == "mistral":
        from mistralai.client import Mistral

        timeout = opts.pop("timeout", None)
        if timeout is not None:
            kwargs["timeout_ms"] = int(timeout * 1000)
        return Mistral(**kwargs, **opts)
    module = __import__(provider)
    name = {"openai": "OpenAI", "groq": "Groq"}[provider]
    cls = getattr(module, f"Async{name}" if is_async else name)
    return cls(**kwargs, **{"max_retries": 0, **opts})


def _from_message(choice: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any]:
    message = choice["message"]
    calls = [
        {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in message.get("tool_calls") or []
    ]
    return {
        "text": message.get("content"),
        "calls": calls,
        "finish": choice["finish_reason"],
        "usage": _usage(usage),
    }


def _usage(usage: dict[str, Any] | None) -> tuple[int, int] | None:
    return None if not usage else (usage["prompt_tokens"], usage["completion_tokens"])


def _accumulate(chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Rebuild a completion from stream chunks, joining tool-call fragments by index; a
    call with a new id is a new call, whatever its index (Mistral streams calls whole and
    unnumbered, which its SDK reads as index 0 for every call)."""
    text, finish, usage = "", None, None
    calls: dict[Any, dict[str, Any]] = {}
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for tc in delta.get("tool_calls") or []:
                key: Any = tc.get("index") or 0
                if tc.get("id") and calls.get(key, {}).get("id") not in (None, tc["id"]):
                    key = ("id", tc["id"])
                slot = calls.setdefault(key, {"id": None, "name": None})
                slot.setdefault("arguments", "")
                slot["id"] = tc.get("id") or slot["id"]
                fn = tc.get("function") or {}
                slot["name"] = fn.get("name") or slot["name"]
                slot["arguments"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    ordered = list(calls.values())  # first-seen order: indexes arrive in order
    return {"text": text or None, "calls": ordered, "finish": finish, "usage": _usage(usage)}


def _dump(obj: Any) -> dict[str, Any]:
    return obj.model_dump(warnings=False)


def _request(provider: str, stream: bool) -> dict[str, Any]:
    req: dict[str, Any] = {"model": "model-x", "messages": MESSAGES}
    if stream and provider == "openai":
        req["stream_options"] = {"include_usage": True}
    return req


def call_sync(client: Any, provider: str, stream: bool) -> dict[str, Any]:
    req = _request(provider, stream)
    if provider == "mistral":
        if stream:
            return _accumulate(_dump(e.data) for e in client.chat.stream(**req))
        resp = _dump(client.chat.complete(**req))
    else:
        if stream:
            chunks = client.chat.completions.create(**req, stream=True)
            return _accumulate(_dump(c) for c in chunks)
        resp = _dump(client.chat.completions.create(**req))
    return _from_message(resp["choices"][0], resp["usage"])


async def call_async(client: Any, provider: str, stream: bool) -> dict[str, Any]:
    req = _request(provider, stream)
    if provider == "mistral":
        if stream:
            events = await client.chat.stream_async(**req)
            return _accumulate([_dump(e.data) async for e in events])
        resp = _dump(await client.chat.complete_async(**req))
    else:
        if stream:
            chunks = await client.chat.completions.create(**req, stream=True)
            return _accumulate([_dump(c) async for c in chunks])
        resp = _dump(await client.chat.completions.create(**req))
    return _from_message(resp["choices"][0], resp["usage"])


def _parsed(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["name"], json.loads(c["arguments"])) for c in result["calls"]]


# -- through the SDKs ---------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_sync_text_tool_calls_and_usage(
    mock_llm_server: MockLLMServer, provider: str, stream: bool
) -> None:
    s = mock_llm_server
    s.enqueue(
        provider,
        text="Let me check.",
        tool_calls=TWO_CALLS,
        usage={"input_tokens": 3, "output_tokens": 4},
        fragments=3,
    )
    result = call_sync(_client(s, provider, False), provider, stream)
    assert result["text"] == "Let me check."
    assert _parsed(result) == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_time", {}),
    ]
    assert CALL_ID[provider].fullmatch(result["calls"][0]["id"])
    assert result["calls"][1]["id"] == "given0001"
    assert (result["finish"], result["usage"]) == ("tool_calls", (3, 4))
    assert s.last_request(provider).body["model"] == "model-x"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_text_tool_calls_and_usage(
    mock_llm_server: MockLLMServer, provider: str, stream: bool
) -> None:
    s = mock_llm_server
    s.enqueue(provider, text="Hi", tool_calls=TWO_CALLS[:1], fragments=2)
    result = await call_async(_client(s, provider, True), provider, stream)
    assert result["text"] == "Hi"
    assert _parsed(result) == [("get_weather", {"city": "Paris", "unit": "celsius"})]
    assert (result["finish"], result["usage"]) == ("tool_calls", (10, 5))


@pytest.mark.parametrize(
    ("stop", "native"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("stop_sequence", "stop"),
        ("content_filter", "content_filter"),
        ("other", "other"),
    ],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_stop_reason(
    mock_llm_server: MockLLMServer, provider: str, stream: bool, stop: str, native: str
) -> None:
    mock_llm_server.enqueue(provider, text="done", stop_reason=stop)
    result = call_sync(_client(mock_llm_server, provider, False), provider, stream)
    assert (result["text"], result["calls"], result["finish"]) == ("done", [], native)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_native_stop_reason_is_sent_verbatim(mock_llm_server: MockLLMServer, provider: str) -> None:
    mock_llm_server.enqueue(provider, text="x", native_stop_reason="model_length")
    result = call_sync(_client(mock_llm_server, provider, False), provider, False)
    assert result["finish"] == "model_length"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_invalid_json_arguments_are_sent_verbatim(
    mock_llm_server: MockLLMServer, provider: str, stream: bool
) -> None:
    mock_llm_server.enqueue(provider, tool_calls=[{"name": "f", "arguments": '{"a": 1,'}])
    result = call_sync(_client(mock_llm_server, provider, False), provider, stream)
    assert [(c["name"], c["arguments"]) for c in result["calls"]] == [("f", '{"a": 1,')]
    # Mistral sends "content": "" beside tool calls; the others null.
    assert result["text"] == ("" if provider == "mistral" and not stream else None)


@pytest.mark.parametrize("provider", ["openai", "groq"])
def test_interleaved_fragments_reassemble_by_index(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    mock_llm_server.enqueue(provider, tool_calls=TWO_CALLS, fragments=4, interleave=True)
    result = call_sync(_client(mock_llm_server, provider, False), provider, True)
    assert _parsed(result) == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_time", {}),
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_model_is_echoed_unless_the_script_names_one(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    s = mock_llm_server
    s.enqueue(provider, text="a")
    s.enqueue(provider, text="b", model="pinned-model")
    client = _client(s, provider, False)
    req = _request(provider, False)
    create = client.chat.complete if provider == "mistral" else client.chat.completions.create
    assert [create(**req).model for _ in range(2)] == ["model-x", "pinned-model"]


# -- retries, errors and faults -----------------------------------------------------------


def _retrying_client(server: MockLLMServer, provider: str, is_async: bool) -> Any:
    if provider != "mistral":
        return _client(server, provider, is_async, max_retries=1)
    from mistralai.client.utils import BackoffStrategy, RetryConfig

    backoff = BackoffStrategy(10, 100, 1.5, 2000)
    return _client(server, provider, is_async, retry_config=RetryConfig("backoff", backoff, False))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sync_sdk_retries_429_after_retry_after(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    s = mock_llm_server
    s.enqueue_error(429, provider, message="slow down", retry_after=0.05)
    s.enqueue(provider, text="after retry")
    result = call_sync(_retrying_client(s, provider, False), provider, False)
    assert result["text"] == "after retry"
    assert len(s.requests_for(provider)) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_sdk_retries_429_after_retry_after(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    s = mock_llm_server
    s.enqueue_error(429, provider, message="slow down", retry_after=0.05)
    s.enqueue(provider, text="after retry")
    result = await call_async(_retrying_client(s, provider, True), provider, True)
    assert result["text"] == "after retry"
    assert len(s.requests_for(provider)) == 2


def _status_error(provider: str) -> type[Exception]:
    if provider == "mistral":
        from mistralai.client.errors import SDKError

        return SDKError
    return __import__(provider).BadRequestError  # type: ignore[no-any-return]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_error_status_raises_the_sdk_status_error(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    mock_llm_server.enqueue_error(400, provider, message="bad tool schema")
    with pytest.raises(_status_error(provider), match="bad tool schema"):
        call_sync(_client(mock_llm_server, provider, False), provider, False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_nothing_queued_raises_naming_provider_and_path(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    path = "/openai/v1/chat/completions" if provider == "groq" else "/v1/chat/completions"
    expected = f"MockLLMServer: nothing queued for {provider} POST {path}"
    with pytest.raises(_status_error(provider), match=re.escape(expected)):
        call_sync(_client(mock_llm_server, provider, False), provider, False)


def _connection_errors(provider: str) -> tuple[type[Exception], ...]:
    if provider == "mistral":
        import httpx2

        return (httpx2.TransportError,)
    return (__import__(provider).APIConnectionError,)


def _timeout_errors(provider: str) -> tuple[type[Exception], ...]:
    if provider == "mistral":
        import httpx2

        return (httpx2.TimeoutException,)
    return (__import__(provider).APITimeoutError,)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_dropped_connection_is_a_connection_error(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    mock_llm_server.enqueue_fault("drop", provider)
    with pytest.raises(_connection_errors(provider)):
        call_sync(_client(mock_llm_server, provider, False), provider, False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_with_short_client_timeout_is_a_timeout_error(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    mock_llm_server.enqueue_fault("hang", provider, delay=3)
    client = _client(mock_llm_server, provider, False, timeout=0.2)
    with pytest.raises(_timeout_errors(provider)):
        call_sync(client, provider, False)


@pytest.mark.parametrize("provider", ["openai", "groq"])
def test_stream_error_event_raises_api_error(mock_llm_server: MockLLMServer, provider: str) -> None:
    error = {"status": 503, "message": "overloaded right now"}
    mock_llm_server.enqueue(provider, text="partial", fragments=2, stream_error=error)
    with pytest.raises(__import__(provider).APIError, match="overloaded right now"):
        call_sync(_client(mock_llm_server, provider, False), provider, True)


def _cut_stream_errors(provider: str) -> tuple[type[Exception], ...]:
    if provider == "groq":
        import httpx

        # Groq's Stream does not wrap transport errors raised while iterating.
        return (httpx.TransportError,)
    return _connection_errors(provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_cut_off_is_a_connection_error(
    mock_llm_server: MockLLMServer, provider: str
) -> None:
    mock_llm_server.enqueue(provider, text="abcdef", fragments=3, cut_after=2)
    with pytest.raises(_cut_stream_errors(provider)):
        call_sync(_client(mock_llm_server, provider, False), provider, True)


# -- renderers' whole outputs -------------------------------------------------------------


def _req(body: dict[str, Any], provider: str = "openai") -> RecordedRequest:
    return RecordedRequest(provider, "POST", "/v1/chat/completions", {}, {}, body)


def _json(reply_body: bytes | None) -> dict[str, Any]:
    body = json.loads(reply_body or b"")
    del body["created"], body["id"]
    return body  # type: ignore[no-any-return]


def _events(chunks: list[bytes] | None) -> list[Any]:
    out: list[Any] = []
    for chunk in chunks or []:
        data = chunk.decode().removeprefix("data: ").strip()
        if data == "[DONE]":
            out.append(data)
            continue
        event = json.loads(data)
        del event["created"], event["id"]
        out.append(event)
    return out


SCRIPT = Script(
    text="Hi",
    tool_calls=[ScriptedCall("f", {"a": 1}, id="call_1")],
    usage={"input_tokens": 3, "output_tokens": 4},
)


def test_openai_json_body() -> None:
    reply = _render_openai.render(SCRIPT, _req({"model": "gpt-x"}))
    assert (reply.status, reply.headers) == (200, {"content-type": "application/json"})
    assert _json(reply.body) == {
        "object": "chat.completion",
        "model": "gpt-x",
        "service_tier": "default",
        "system_fingerprint": "fp_mock",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hi",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        }
                    ],
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 3,
            "completion_tokens": 4,
            "total_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    }


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "model": "gpt-x",
        "service_tier": "default",
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def test_openai_stream_chunks_with_usage_when_asked() -> None:
    body = {"model": "gpt-x", "stream": True, "stream_options": {"include_usage": True}}
    reply = _render_openai.render(SCRIPT, _req(body))
    assert reply.headers == {"content-type": "text/event-stream; charset=utf-8"}
    assert reply.closing_chunks == 3
    events = _events(reply.chunks)
    usage_chunk = {k: v for k, v in _chunk({}).items() if k != "choices"}
    assert events == [
        _chunk({"role": "assistant", "content": "", "refusal": None}),
        _chunk({"content": "Hi"}),
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    }
                ]
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]}),
        _chunk({}, "tool_calls"),
        {**usage_chunk, "choices": [], "usage": json.loads(json.dumps(_usage_body(3, 4)))},
        "[DONE]",
    ]


def _usage_body(prompt: int, completion: int) -> dict[str, Any]:
    return _render_openai.OpenAIRenderer().usage(
        Script(usage={"input_tokens": prompt, "output_tokens": completion})
    )


def test_openai_stream_without_include_usage_has_no_usage_chunk() -> None:
    reply = _render_openai.render(Script(text="x"), _req({"model": "m", "stream": True}))
    events = _events(reply.chunks)
    assert events[-2:] == [{**_chunk({}, "stop"), "model": "m"}, "[DONE]"]


def test_openai_interleaved_fragments_alternate_by_index() -> None:
    script = Script(
        tool_calls=[ScriptedCall("f", {"a": 1}, "c1"), ScriptedCall("g", {"b": 2}, "c2")],
        fragments=2,
        interleave=True,
    )
    reply = _render_openai.render(script, _req({"model": "m", "stream": True}))
    deltas = [e["choices"][0]["delta"] for e in _events(reply.chunks)[1:-2]]
    assert [(d["tool_calls"][0]["index"], d["tool_calls"][0]["function"]) for d in deltas] == [
        (0, {"name": "f", "arguments": ""}),
        (1, {"name": "g", "arguments": ""}),
        (0, {"arguments": '{"a"'}),
        (1, {"arguments": '{"b"'}),
        (0, {"arguments": ": 1}"}),
        (1, {"arguments": ": 2}"}),
    ]


def test_openai_error_bodies() -> None:
    reply = _render_openai.render_error(ErrorReply(429, "slow"))
    assert (reply.status, json.loads(reply.body or b"")) == (
        429,
        {
            "error": {
                "message": "slow",
                "type": "rate_limit_error",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    )
    assert _render_openai.render_stream_error(ErrorReply(500, "boom")) == (
        b'data: {"error": {"message": "boom", "type": "server_error", "param": null, '
        b'"code": null}}\n\n'
    )


def test_groq_json_body() -> None:
    reply = _render_groq.render(SCRIPT, _req({"model": "llama"}, "groq"))
    body = _json(reply.body)
    assert body["x_groq"]["id"].startswith("req_")
    del body["x_groq"]
    assert body == {
        "object": "chat.completion",
        "model": "llama",
        "service_tier": "on_demand",
        "system_fingerprint": "fp_mock",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hi",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "queue_time": 0.001,
            "prompt_tokens": 3,
            "prompt_time": 0.002,
            "completion_tokens": 4,
            "completion_time": 0.003,
            "total_tokens": 7,
            "total_time": 0.005,
        },
        "usage_breakdown": None,
    }


def test_groq_stream_puts_usage_on_the_finish_chunk_and_errors_as_events() -> None:
    reply = _render_groq.render(Script(text="x"), _req({"model": "m", "stream": True}, "groq"))
    *_, finish, done = _events(reply.chunks)
    assert done == "[DONE]"
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert finish["usage"] == finish["x_groq"]["usage"]
    assert finish["usage"]["prompt_tokens"] == 10
    assert _render_groq.render_stream_error(ErrorReply(400, "bad")) == (
        b'event: error\ndata: {"error": {"message": "bad", "type": "invalid_request_error", '
        b'"code": null, "status_code": 400}}\n\n'
    )
    assert json.loads(_render_groq.render_error(ErrorReply(400, "bad")).body or b"") == {
        "error": {"message": "bad", "type": "invalid_request_error", "code": None}
    }


def test_mistral_json_body() -> None:
    reply = _render_mistral.render(SCRIPT, _req({"model": "mistral-small"}, "mistral"))
    assert _json(reply.body) == {
        "object": "chat.completion",
        "model": "mistral-small",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hi",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                            "index": 0,
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }


def test_mistral_stream_sends_each_call_whole_and_usage_on_finish() -> None:
    script = Script(text="Hi", tool_calls=[ScriptedCall("f", {"a": 1}, "abcdefghi")], fragments=5)
    reply = _render_mistral.render(script, _req({"model": "m", "stream": True}, "mistral"))
    events = _events(reply.chunks)
    deltas = [e["choices"][0]["delta"] for e in events[:-1]]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"content": "H"},
        {"content": "i"},
        {
            "tool_calls": [
                {"id": "abcdefghi", "function": {"name": "f", "arguments": '{"a": 1}'}},
            ]
        },
        {"content": ""},
    ]
    assert events[-2]["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert json.loads(_render_mistral.render_error(ErrorReply(422, "bad")).body or b"") == {
        "object": "error",
        "message": "bad",
        "type": "invalid_request_error",
        "param": None,
        "code": "422",
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_generated_ids_follow_the_provider_style(provider: str) -> None:
    renderer = {"openai": _render_openai, "groq": _render_groq, "mistral": _render_mistral}[
        provider
    ]
    script = Script(tool_calls=[ScriptedCall("f", {}), ScriptedCall("g", {})])
    reply = renderer.render(script, _req({"model": "m"}, provider))
    ids = [c["id"] for c in json.loads(reply.body or b"")["choices"][0]["message"]["tool_calls"]]
    assert all(CALL_ID[provider].fullmatch(i) for i in ids)
    assert ids[0] != ids[1]
