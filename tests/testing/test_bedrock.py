"""MockLLMServer speaks Bedrock Converse: boto3's bedrock-runtime client (converse and
converse_stream; boto3 has no async client) parses what it renders, and the AWS
event-stream encoder produces frames botocore decodes."""

from __future__ import annotations

import base64
import json
import re
import struct
from pathlib import Path
from typing import Any

import boto3
import botocore.retries.standard
import pytest
import urllib3
from botocore.config import Config
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EventStreamError,
    ReadTimeoutError,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from zerda.testing import MockLLMServer
from zerda.testing._eventstream import encode_event, encode_exception, encode_message

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "hi"}]}]
TOOL_ID = re.compile(r"tooluse_[A-Za-z0-9]{22}")
RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"


@pytest.fixture
def server(mock_llm_server: MockLLMServer) -> MockLLMServer:
    return mock_llm_server


def _client(server: MockLLMServer, max_attempts: int = 1) -> Any:
    config = Config(retries={"mode": "standard", "total_max_attempts": max_attempts})
    return boto3.client(**server.sdk_client_kwargs("bedrock"), config=config)


def _converse(server: MockLLMServer) -> dict[str, Any]:
    return dict(_client(server).converse(modelId=MODEL, messages=MESSAGES))


def _stream_events(server: MockLLMServer) -> list[dict[str, Any]]:
    response = _client(server).converse_stream(modelId=MODEL, messages=MESSAGES)
    return list(response["stream"])


def _enqueue_full(server: MockLLMServer, **extra: Any) -> None:
    server.enqueue(
        "bedrock",
        text="Checking.",
        tool_calls=[
            {"id": "tooluse_A", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"id": "tooluse_B", "name": "get_time", "arguments": {}},
        ],
        usage={"input_tokens": 21, "output_tokens": 8},
        **extra,
    )


def test_converse_returns_text_tool_uses_stop_reason_and_usage(server: MockLLMServer) -> None:
    _enqueue_full(server)

    response = _converse(server)

    assert response["output"] == {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Checking."},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_A",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    }
                },
                {"toolUse": {"toolUseId": "tooluse_B", "name": "get_time", "input": {}}},
            ],
        }
    }
    assert response["stopReason"] == "tool_use"
    assert response["usage"] == {"inputTokens": 21, "outputTokens": 8, "totalTokens": 29}
    request = server.last_request("bedrock")
    assert (request.method, request.path) == (
        "POST",
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
    )
    assert request.body["messages"] == MESSAGES


def test_converse_stream_sends_bedrock_events_in_order(server: MockLLMServer) -> None:
    _enqueue_full(server, fragments=2)

    events = _stream_events(server)

    assert events == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Check"}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "ing."}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {"toolUse": {"toolUseId": "tooluse_A", "name": "get_weather"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolUse": {"input": '{"city": '}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolUse": {"input": '"Paris"}'}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 2,
                "start": {"toolUse": {"toolUseId": "tooluse_B", "name": "get_time"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "}"}}}},
        {"contentBlockStop": {"contentBlockIndex": 2}},
        {"messageStop": {"stopReason": "tool_use"}},
        {
            "metadata": {
                "usage": {"inputTokens": 21, "outputTokens": 8, "totalTokens": 29},
                "metrics": {"latencyMs": 120},
            }
        },
    ]
    assert server.last_request("bedrock").path.endswith("%3A0/converse-stream")


def test_generated_tool_ids_are_in_bedrock_style(server: MockLLMServer) -> None:
    server.enqueue("bedrock", tool_calls=[{"name": "f", "arguments": {}}] * 2)

    content = _converse(server)["output"]["message"]["content"]

    ids = [block["toolUse"]["toolUseId"] for block in content]
    assert len(set(ids)) == 2 and all(TOOL_ID.fullmatch(i) for i in ids)


def test_string_arguments_are_streamed_verbatim(server: MockLLMServer) -> None:
    server.enqueue("bedrock", tool_calls=[{"name": "f", "arguments": '{"a": 1'}], fragments=2)

    events = _stream_events(server)

    pieces = [
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "contentBlockDelta" in e
    ]
    assert pieces == ['{"a"', ": 1"]


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize(
    ("stop_reason", "native"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("content_filter", "content_filtered"),
        ("other", "malformed_model_output"),
    ],
)
def test_each_stop_reason_maps_to_the_native_value(
    server: MockLLMServer, stop_reason: str, native: str, streaming: bool
) -> None:
    server.enqueue("bedrock", text="x", stop_reason=stop_reason)

    if streaming:
        stops = [e["messageStop"] for e in _stream_events(server) if "messageStop" in e]
        assert stops == [{"stopReason": native}]
    else:
        assert _converse(server)["stopReason"] == native


def test_native_stop_reason_and_default_usage(server: MockLLMServer) -> None:
    server.enqueue("bedrock", text="x", native_stop_reason="guardrail_intervened")

    response = _converse(server)

    assert response["stopReason"] == "guardrail_intervened"
    assert response["usage"] == {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}


def test_throttling_with_retry_after_is_retried_by_botocore(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Keep botocore's random jitter tiny so the wait is the server's x-amz-retry-after.
    monkeypatch.setattr(
        botocore.retries.standard.ExponentialBackoff, "_get_base_scale", lambda self, ctx: 0.01
    )
    server.enqueue_error(429, "bedrock", message="Too many requests", retry_after=0.05)
    server.enqueue("bedrock", text="done")

    response = _client(server, max_attempts=2).converse(modelId=MODEL, messages=MESSAGES)

    assert response["output"]["message"]["content"] == [{"text": "done"}]
    assert response["ResponseMetadata"]["RetryAttempts"] == 1
    assert len(server.requests_for("bedrock")) == 2


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "ValidationException"),
        (403, "AccessDeniedException"),
        (404, "ResourceNotFoundException"),
        (429, "ThrottlingException"),
        (500, "InternalServerException"),
        (503, "ServiceUnavailableException"),
    ],
)
def test_error_statuses_raise_client_error_with_the_bedrock_code(
    server: MockLLMServer, status: int, code: str
) -> None:
    server.enqueue_error(status, "bedrock", message="nope")

    with pytest.raises(ClientError) as info:
        _converse(server)

    error = info.value.response
    assert error["Error"] == {"Code": code, "Message": "nope"}
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status


def test_error_type_overrides_the_code(server: MockLLMServer) -> None:
    server.enqueue_error(400, "bedrock", message="bad model", error_type="ModelErrorException")

    with pytest.raises(ClientError) as info:
        _stream_events(server)

    assert info.value.response["Error"]["Code"] == "ModelErrorException"


def test_stream_error_is_an_event_stream_exception(server: MockLLMServer) -> None:
    server.enqueue(
        "bedrock",
        text="partial",
        cut_after=2,
        stream_error={"status": 429, "message": "Too many tokens"},
    )
    response = _client(server).converse_stream(modelId=MODEL, messages=MESSAGES)
    received: list[dict[str, Any]] = []

    with pytest.raises(EventStreamError) as info:
        received.extend(response["stream"])

    assert received == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "partial"}}},
    ]
    assert info.value.response["Error"] == {
        "Code": "throttlingException",
        "Message": "Too many tokens",
    }


# -- the event-stream encoder ----------------------------------------------------------------


def _decode(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(message.headers, message.payload) for message in buffer]


def test_encoded_messages_decode_with_botocore() -> None:
    data = encode_event("contentBlockDelta", {"delta": {"text": "héllo ✓"}}) + encode_exception(
        "validationException", "bad"
    )

    assert _decode(data) == [
        (
            {
                ":event-type": "contentBlockDelta",
                ":content-type": "application/json",
                ":message-type": "event",
            },
            json.dumps(
                {"delta": {"text": "héllo ✓"}}, separators=(",", ":"), ensure_ascii=False
            ).encode(),
        ),
        (
            {
                ":exception-type": "validationException",
                ":content-type": "application/json",
                ":message-type": "exception",
            },
            b'{"message":"bad"}',
        ),
    ]


@settings(max_examples=50, deadline=None)
@given(
    headers=st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=40), max_size=4),
    payload=st.binary(max_size=200),
)
def test_any_string_headers_and_payload_round_trip_through_botocore(
    headers: dict[str, str], payload: bytes
) -> None:
    assert _decode(encode_message(headers, payload)) == [(headers, payload)]


def test_encoded_message_layout_and_checksums() -> None:
    message = encode_message({":a": "b"}, b"xyz")

    total, headers_length = struct.unpack(">II", message[:8])
    assert (total, headers_length) == (len(message), len(b"\x02:a\x07\x00\x01b"))
    assert message[12 : 12 + headers_length] == b"\x02:a\x07\x00\x01b"
    assert message[12 + headers_length : -4] == b"xyz"
    corrupted = message[:-1] + bytes([message[-1] ^ 1])
    with pytest.raises(ChecksumMismatch):
        _decode(corrupted)


def test_encoder_reproduces_a_recorded_bedrock_stream_byte_for_byte() -> None:
    path = (
        RECORDED
        / "bedrock"
        / "pydantic-ai__bedrock.test_native_output.test_bedrock_native_output_stream__i00.json"
    )
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    fixture = json.loads(path.read_text(encoding="utf-8"))

    encoded = b"".join(
        encode_event(e["event_type"], e["payload"]) for e in fixture["derived"]["events"]
    )

    assert encoded == base64.b64decode(fixture["response"]["body"])


def test_dropped_connection_is_a_connection_error(server: MockLLMServer) -> None:
    server.enqueue_fault("drop", "bedrock")

    with pytest.raises(ConnectionClosedError):
        _converse(server)


def test_hanging_server_times_out_in_botocore(server: MockLLMServer) -> None:
    server.enqueue_fault("hang", "bedrock", delay=0.3)
    config = Config(read_timeout=0.1, retries={"mode": "standard", "total_max_attempts": 1})
    client = boto3.client(**server.sdk_client_kwargs("bedrock"), config=config)

    with pytest.raises(ReadTimeoutError):
        client.converse(modelId=MODEL, messages=MESSAGES)


def test_stream_cut_mid_way_fails_while_reading(server: MockLLMServer) -> None:
    server.enqueue("bedrock", text="hello world", fragments=3, cut_after=2)

    with pytest.raises(urllib3.exceptions.ProtocolError):
        _stream_events(server)
