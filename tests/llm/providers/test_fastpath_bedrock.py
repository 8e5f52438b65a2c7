"""Bedrock's fast path: on the clients Zerda builds, the history and system blocks are
JSON-encoded once and spliced at the head of the body botocore serialized from the rest of
the request. The body on the wire is byte for byte the one botocore's own serializer
writes for the same arguments (blobs as base64 included), sync, async and streamed."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface, document, image, tool_result
from zerda.llm.providers import aws
from zerda.testing import MockLLMServer

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n%%EOF\n"
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
CALL = {"id": "tooluse_1", "name": "get_weather", "arguments": {"city": "Paris é"}}
HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "What is this? ☂"}, image(PNG)]},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [CALL],
        "provider_data": {
            "bedrock": {
                "reasoning": [
                    {"reasoningText": {"text": "think", "signature": "sig"}},
                    {"redactedContent": "cmVkYWN0ZWQ="},
                ]
            }
        },
    },
    tool_result(CALL, {"temperature": 18.5, "conditions": "rain \u2028 and wind"}),
    {"role": "user", "content": [document(PDF, name="report.pdf"), {"type": "text", "text": "ok"}]},
]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def botocore_body(llm: Any, operation: str, messages: Any, kwargs: dict[str, Any]) -> bytes:
    """What botocore's own rest-json serializer writes for Zerda's arguments."""
    from botocore.serialize import create_serializer

    native = {k: v for k, v in llm._native_request(messages, kwargs).items() if k != "timeout"}
    model = llm.client.meta.service_model.operation_model(operation)
    body: bytes = create_serializer("rest-json").serialize_to_request(native, model)["body"]
    return body


def make(server: MockLLMServer, **options: Any) -> Any:
    return create_interface("bedrock", model=MODEL, **server.client_options("bedrock"), **options)


CASES = {
    "history": (HISTORY, {"tools": TOOLS, "max_tokens": 64, "temperature": 0.5}),
    "cached": (HISTORY, {"tools": TOOLS, "cache": True}),
    "no other field": ([{"role": "user", "content": "hi"}], {}),
    "native fields": (
        [{"role": "user", "content": "hi"}],
        {
            "system": "s",
            "additionalModelRequestFields": {"top_k": 5},
            "requestMetadata": {"a": "b"},
        },
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_body_is_botocores_byte_for_byte(server: MockLLMServer, case: str) -> None:
    messages, kwargs = CASES[case]
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        result = llm.generate(messages, raise_errors=True, **kwargs)
        assert result["content"] == "fine"
        sent = server.last_request("bedrock").raw_body
        assert sent == botocore_body(llm, "Converse", messages, kwargs)
        # ...sent through the fast path, not botocore's own walk of the history.
        assert aws._PREBUILT in llm._prebuilt(llm._native_request(messages, kwargs))


def test_async_and_stream_send_the_same_body(server: MockLLMServer) -> None:
    messages, kwargs = CASES["history"]
    server.set_default("bedrock", text="fine")
    with make(server) as llm:
        expected = botocore_body(llm, "ConverseStream", messages, kwargs)
        asyncio.run(llm.generate_async(messages, raise_errors=True, **kwargs))
        assert server.last_request("bedrock").raw_body == expected
        events = list(llm.stream(messages, raise_errors=True, **kwargs))
        assert events[-1]["type"] == "done"
        assert server.last_request("bedrock").raw_body == expected


def test_a_callers_own_client_is_left_alone(server: MockLLMServer) -> None:
    import boto3

    client = boto3.client(**server.sdk_client_kwargs("bedrock"))
    server.set_default("bedrock", text="fine")
    with create_interface("bedrock", model=MODEL, client=client) as llm:
        assert llm._prebuilt({"modelId": MODEL, "messages": []}) == {
            "modelId": MODEL,
            "messages": [],
        }
        llm.generate(HISTORY, raise_errors=True, tools=TOOLS)
        assert server.last_request("bedrock").raw_body == botocore_body(
            llm, "Converse", HISTORY, {"tools": TOOLS}
        )


def test_split_prebuilt() -> None:
    messages = [{"role": "user", "content": [{"image": {"source": {"bytes": b"\x00\xff"}}}]}]
    split = aws._split_prebuilt({"modelId": "m", "messages": messages, "system": [{"text": "s"}]})
    assert split == {
        "modelId": "m",
        aws._PREBUILT: '{"messages": [{"role": "user", "content": [{"image": {"source": '
        '{"bytes": "AP8="}}}]}], "system": [{"text": "s"}]}',
    }
    # Zerda's fields that do not lead the body, and values that are not JSON, are botocore's.
    late = {"modelId": "m", "inferenceConfig": {}, "messages": []}
    assert aws._split_prebuilt(late) is late
    odd = {"modelId": "m", "messages": [{"x": object()}]}
    assert aws._split_prebuilt(odd) is odd


def test_splice_prebuilt() -> None:
    context = {aws._PREBUILT: '{"messages": []}'}
    params = {"body": b'{"inferenceConfig": {"maxTokens": 5}}'}
    aws._splice_prebuilt(params, context)
    assert params["body"] == b'{"messages": [], "inferenceConfig": {"maxTokens": 5}}'
    assert context == {}
    params = {"body": b"{}"}
    aws._splice_prebuilt(params, {aws._PREBUILT: '{"messages": []}'})
    assert params["body"] == b'{"messages": []}'
    untouched = {"body": b"{}"}
    aws._splice_prebuilt(untouched, {})
    assert untouched == {"body": b"{}"}
