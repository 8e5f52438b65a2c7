"""MockLLMServer speaks Anthropic's Messages API: the official anthropic SDK (sync and async,
JSON and SSE) parses what it renders."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import anthropic
import httpx2
import pytest

from zerda.testing import ErrorReply, MockLLMServer
from zerda.testing.wires.anthropic.render import render_error

MESSAGES = [{"role": "user", "content": "hi"}]
THINKING = [
    {"type": "thinking", "thinking": "Let me think.", "signature": "c2lnbmF0dXJl"},
    {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
]
TOOL_ID = re.compile(r"toolu_01[A-Za-z0-9]{22}")


@pytest.fixture
def server(mock_llm_server: MockLLMServer) -> MockLLMServer:
    return mock_llm_server


def _client(server: MockLLMServer, max_retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(**server.sdk_client_kwargs("anthropic"), max_retries=max_retries)


def _async_client(server: MockLLMServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(**server.sdk_client_kwargs("anthropic"), max_retries=0)


def _create(server: MockLLMServer, **kwargs: Any) -> anthropic.types.Message:
    return _client(server).messages.create(
        model="claude-test", max_tokens=64, messages=MESSAGES, **kwargs
    )


def _stream(server: MockLLMServer, **kwargs: Any) -> anthropic.types.Message:
    params = {"model": "claude-test", "max_tokens": 64, "messages": MESSAGES, **kwargs}
    with _client(server).messages.stream(**params) as stream:
        return stream.get_final_message()


def _raw_events(server: MockLLMServer) -> list[dict[str, Any]]:
    events = _client(server).messages.create(
        model="claude-test", max_tokens=64, messages=MESSAGES, stream=True
    )
    return [event.to_dict() for event in events]


def _blocks(message: anthropic.types.Message) -> list[dict[str, Any]]:
    return [block.to_dict(exclude_none=True) for block in message.content]


def _enqueue_full(server: MockLLMServer, **extra: Any) -> None:
    server.enqueue(
        "anthropic",
        text="Checking the weather.",
        tool_calls=[
            {"id": "toolu_01A", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"id": "toolu_01B", "name": "get_time", "arguments": {}},
        ],
        provider_data={"anthropic": {"thinking": THINKING}},
        usage={"input_tokens": 21, "output_tokens": 8},
        **extra,
    )


FULL_BLOCKS = [
    *THINKING,
    {"type": "text", "text": "Checking the weather."},
    {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}},
]


def test_json_message_has_thinking_text_and_tool_calls_in_order(server: MockLLMServer) -> None:
    _enqueue_full(server)

    message = _create(server)

    assert _blocks(message) == FULL_BLOCKS
    assert (message.stop_reason, message.model, message.role) == (
        "tool_use",
        "claude-test",
        "assistant",
    )
    assert (message.usage.input_tokens, message.usage.output_tokens) == (21, 8)
    assert re.fullmatch(r"msg_01[A-Za-z0-9]{22}", message.id)
    request = server.last_request("anthropic")
    assert (request.method, request.path, request.body["model"]) == (
        "POST",
        "/v1/messages",
        "claude-test",
    )


def test_stream_accumulates_to_the_same_message(server: MockLLMServer) -> None:
    _enqueue_full(server, fragments=3)

    message = _stream(server)

    assert _blocks(message) == FULL_BLOCKS
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (21, 8)


async def test_async_json_and_stream(server: MockLLMServer) -> None:
    client = _async_client(server)
    _enqueue_full(server)
    _enqueue_full(server, fragments=2)

    message = await client.messages.create(model="claude-test", max_tokens=64, messages=MESSAGES)
    async with client.messages.stream(
        model="claude-test", max_tokens=64, messages=MESSAGES
    ) as stream:
        streamed = await stream.get_final_message()

    assert _blocks(message) == FULL_BLOCKS
    assert _blocks(streamed) == FULL_BLOCKS


def test_generated_tool_ids_are_in_anthropic_style(server: MockLLMServer) -> None:
    server.enqueue("anthropic", tool_calls=[{"name": "f", "arguments": {}}] * 2)

    ids = [block.id for block in _create(server).content if block.type == "tool_use"]

    assert len(ids) == 2 and ids[0] != ids[1]
    assert all(TOOL_ID.fullmatch(i) for i in ids)


def test_stream_events_follow_the_real_protocol(server: MockLLMServer) -> None:
    server.enqueue(
        "anthropic",
        text="Hello",
        tool_calls=[{"id": "toolu_01A", "name": "f", "arguments": {"a": 1}}],
        usage={"input_tokens": 7, "output_tokens": 3},
        fragments=2,
    )

    events = _raw_events(server)

    start = events[0]["message"]
    assert (start["content"], start["stop_reason"], start["usage"]["input_tokens"]) == ([], None, 7)
    assert [e["type"] for e in events[1:]] == [
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [e["delta"]["text"] for e in events[2:4]] == ["Hel", "lo"]
    assert events[5]["content_block"] == {
        "type": "tool_use",
        "id": "toolu_01A",
        "name": "f",
        "input": {},
    }
    assert "".join(e["delta"]["partial_json"] for e in events[6:8]) == '{"a": 1}'
    assert events[9]["delta"]["stop_reason"] == "tool_use"
    assert events[9]["usage"]["output_tokens"] == 3


def test_stream_sends_ping_after_the_first_block_start(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="Hi")
    body = json.dumps({"model": "m", "max_tokens": 8, "messages": MESSAGES, "stream": True})
    url = server.base_url("anthropic") + "/v1/messages"
    request = urllib.request.Request(
        url,
        data=body.encode(),
        method="POST",
        headers={"x-api-key": "test-key", "anthropic-version": "2023-06-01"},
    )

    with urllib.request.urlopen(request, timeout=5) as response:
        lines = response.read().decode().splitlines()

    assert [line.removeprefix("event: ") for line in lines if line.startswith("event: ")] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_tool_without_parameters_streams_an_empty_partial_json(server: MockLLMServer) -> None:
    server.enqueue("anthropic", tool_calls=[{"id": "toolu_01A", "name": "now", "arguments": {}}])

    deltas = [e["delta"] for e in _raw_events(server) if e["type"] == "content_block_delta"]

    assert deltas == [{"type": "input_json_delta", "partial_json": ""}]


def test_string_arguments_are_streamed_verbatim(server: MockLLMServer) -> None:
    server.enqueue("anthropic", tool_calls=[{"name": "f", "arguments": '{"a": 1'}], fragments=3)

    deltas = [
        e["delta"]["partial_json"]
        for e in _raw_events(server)
        if e["type"] == "content_block_delta"
    ]

    assert "".join(deltas) == '{"a": 1'
    assert len(deltas) == 3


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize(
    ("stop_reason", "native"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("content_filter", "refusal"),
        ("other", "pause_turn"),
    ],
)
def test_each_stop_reason_maps_to_the_native_value(
    server: MockLLMServer, stop_reason: str, native: str, streaming: bool
) -> None:
    server.enqueue("anthropic", text="x", stop_reason=stop_reason)

    message = _stream(server) if streaming else _create(server)

    assert message.stop_reason == native


def test_stop_sequence_echoes_the_requested_stop_string(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="x", stop_reason="stop_sequence")

    message = _create(server, stop_sequences=["END", "STOP"])

    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "END")


def test_native_stop_reason_is_sent_verbatim(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="x", native_stop_reason="model_context_window_exceeded")

    assert _create(server).stop_reason == "model_context_window_exceeded"


def test_auto_stop_reason_is_end_turn_without_calls(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="x")

    message = _create(server)

    assert (message.stop_reason, message.usage.input_tokens, message.usage.output_tokens) == (
        "end_turn",
        10,
        5,
    )


def test_model_override_is_echoed(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="x", model="claude-other")

    assert _create(server).model == "claude-other"


def test_429_with_retry_after_is_retried_by_the_sdk(server: MockLLMServer) -> None:
    server.enqueue_error(429, "anthropic", message="slow down", retry_after=0.05)
    server.enqueue("anthropic", text="done")

    message = _client(server, max_retries=1).messages.create(
        model="claude-test", max_tokens=64, messages=MESSAGES
    )

    assert _blocks(message) == [{"type": "text", "text": "done"}]
    assert len(server.requests_for("anthropic")) == 2


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
def test_error_statuses_have_anthropic_error_bodies(
    server: MockLLMServer, status: int, error_class: type[Exception], error_type: str
) -> None:
    server.enqueue_error(status, "anthropic", message="nope")

    with pytest.raises(error_class) as info:
        _create(server)

    body = info.value.body  # type: ignore[attr-defined]
    assert body["type"] == "error"
    assert body["error"] == {"type": error_type, "message": "nope"}
    assert body["request_id"].startswith("req_")


def test_stream_error_event_raises_in_the_sdk(server: MockLLMServer) -> None:
    server.enqueue(
        "anthropic",
        text="partial answer",
        fragments=2,
        cut_after=3,
        stream_error={"status": 529, "message": "Overloaded"},
    )

    with pytest.raises(anthropic.APIStatusError) as info:
        _stream(server)

    assert info.value.body == {  # type: ignore[attr-defined]
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_render_error_body_is_json_with_request_id_header() -> None:
    reply = render_error(ErrorReply(500, "boom", error_type="api_error"))

    body = json.loads(reply.body or b"")
    assert reply.status == 500
    assert body["error"] == {"type": "api_error", "message": "boom"}
    assert reply.headers["request-id"] == body["request_id"]


def test_dropped_connection_is_a_connection_error(server: MockLLMServer) -> None:
    server.enqueue_fault("drop", "anthropic")

    with pytest.raises(anthropic.APIConnectionError):
        _create(server)


def test_hanging_server_times_out_in_the_sdk(server: MockLLMServer) -> None:
    server.enqueue_fault("hang", "anthropic", delay=0.3)
    client = anthropic.Anthropic(
        **server.sdk_client_kwargs("anthropic"), max_retries=0, timeout=0.1
    )

    with pytest.raises(anthropic.APITimeoutError):
        client.messages.create(model="claude-test", max_tokens=64, messages=MESSAGES)


def test_stream_cut_mid_way_fails_while_reading(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="hello world", fragments=3, cut_after=3)

    # anthropic before 2.17 lets httpx's error through; 2.17 wraps it in APIConnectionError
    # (raised from it). Either way the cut is an error, never a short success.
    with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)) as info:
        _stream(server)
    cause = (
        info.value if isinstance(info.value, httpx2.RemoteProtocolError) else info.value.__cause__
    )
    assert isinstance(cause, httpx2.RemoteProtocolError)
