"""MockLLMServer speaks the Gemini API: google-genai (sync and async, generate_content and
generate_content_stream) parses what it renders."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pydantic
import pytest
from google import genai
from google.genai import errors, types

from zerda.testing import ErrorReply, MockLLMServer
from zerda.testing.wires.gemini.render import render_error

MODEL = "gemini-2.5-flash"
SIGNATURE = "c2lnbmF0dXJl"  # base64 of b"signature"


@pytest.fixture
def server(mock_llm_server: MockLLMServer) -> MockLLMServer:
    return mock_llm_server


def _client(server: MockLLMServer, **http_options: Any) -> genai.Client:
    kwargs = server.sdk_client_kwargs("gemini")
    kwargs["http_options"] = {**kwargs["http_options"], **http_options}
    return genai.Client(**kwargs)


# The client is kept in a variable: a genai.Client closes its HTTP client when collected.
def _generate(server: MockLLMServer) -> types.GenerateContentResponse:
    client = _client(server)
    return client.models.generate_content(model=MODEL, contents="hi")


def _stream(server: MockLLMServer) -> list[types.GenerateContentResponse]:
    client = _client(server)
    return list(client.models.generate_content_stream(model=MODEL, contents="hi"))


def _parts(response: types.GenerateContentResponse) -> list[dict[str, Any]]:
    content = response.candidates[0].content  # type: ignore[index]
    return [part.model_dump(exclude_none=True) for part in content.parts]  # type: ignore[union-attr]


def _enqueue_full(server: MockLLMServer, **extra: Any) -> None:
    server.enqueue(
        "gemini",
        text="Checking the weather.",
        tool_calls=[
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_time", "arguments": {}},
        ],
        provider_data={"gemini": {"thought_signatures": [SIGNATURE, None]}},
        usage={"input_tokens": 21, "output_tokens": 8},
        **extra,
    )


FULL_PARTS = [
    {"text": "Checking the weather."},
    {
        "function_call": {"name": "get_weather", "args": {"city": "Paris"}},
        "thought_signature": b"signature",
    },
    {"function_call": {"name": "get_time", "args": {}}},
]


def _usage(response: types.GenerateContentResponse) -> tuple[Any, Any, Any]:
    usage = response.usage_metadata
    assert usage is not None
    return usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count


def test_generate_content_parses_text_calls_signatures_and_usage(server: MockLLMServer) -> None:
    _enqueue_full(server)

    response = _generate(server)

    assert _parts(response) == FULL_PARTS
    assert response.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert _usage(response) == (21, 8, 29)
    assert response.model_version == MODEL
    request = server.last_request("gemini")
    assert request.method == "POST"
    assert request.path.endswith(f"/models/{MODEL}:generateContent")
    assert request.body["contents"] == [{"parts": [{"text": "hi"}], "role": "user"}]


def test_stream_splits_text_and_sends_calls_whole_in_the_last_chunk(
    server: MockLLMServer,
) -> None:
    _enqueue_full(server, fragments=3)

    chunks = _stream(server)

    assert [_parts(c) for c in chunks] == [
        [{"text": "Checkin"}],
        [{"text": "g the w"}],
        [{"text": "eather."}],
        FULL_PARTS[1:],
    ]
    finish = [c.candidates[0].finish_reason for c in chunks]  # type: ignore[index]
    assert finish == [None, None, None, types.FinishReason.STOP]
    assert _usage(chunks[-1]) == (21, 8, 29)
    request = server.last_request("gemini")
    assert request.path.endswith(f"/models/{MODEL}:streamGenerateContent")
    assert request.query == {"alt": "sse"}


def test_text_only_stream_ends_on_the_last_text_chunk(server: MockLLMServer) -> None:
    server.enqueue("gemini", text="Hello", fragments=2)

    chunks = _stream(server)

    assert [c.text for c in chunks] == ["Hel", "lo"]
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]


async def test_async_generate_and_stream(server: MockLLMServer) -> None:
    client = _client(server)
    _enqueue_full(server)
    _enqueue_full(server, fragments=2)

    response = await client.aio.models.generate_content(model=MODEL, contents="hi")
    chunks = [
        c async for c in await client.aio.models.generate_content_stream(model=MODEL, contents="hi")
    ]

    assert _parts(response) == FULL_PARTS
    assert [p for c in chunks for p in _parts(c)][-2:] == FULL_PARTS[1:]
    assert "".join(c.text or "" for c in chunks[:-1]) == "Checking the weather."


def test_calls_have_no_id_unless_the_script_gives_one(server: MockLLMServer) -> None:
    server.enqueue(
        "gemini",
        tool_calls=[
            {"name": "f", "arguments": {"a": 1}},
            {"id": "call-7", "name": "g", "arguments": {}},
        ],
    )

    calls = _generate(server).function_calls

    assert [(c.id, c.name, c.args) for c in calls or []] == [
        (None, "f", {"a": 1}),
        ("call-7", "g", {}),
    ]


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize(
    ("stop_reason", "native"),
    [
        ("end_turn", "STOP"),
        ("tool_use", "STOP"),
        ("max_tokens", "MAX_TOKENS"),
        ("stop_sequence", "STOP"),
        ("content_filter", "SAFETY"),
        ("other", "OTHER"),
    ],
)
def test_each_stop_reason_maps_to_the_native_value(
    server: MockLLMServer, stop_reason: str, native: str, streaming: bool
) -> None:
    server.enqueue("gemini", text="x", stop_reason=stop_reason)

    response = _stream(server)[-1] if streaming else _generate(server)

    assert response.candidates[0].finish_reason == types.FinishReason(native)  # type: ignore[index]


def test_native_stop_reason_and_default_usage(server: MockLLMServer) -> None:
    server.enqueue("gemini", native_stop_reason="MALFORMED_FUNCTION_CALL")

    response = _generate(server)

    assert response.candidates[0].finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL  # type: ignore[index]
    assert _usage(response) == (10, 5, 15)


def test_429_is_retried_by_the_sdk_then_succeeds(server: MockLLMServer) -> None:
    server.enqueue_error(429, "gemini", message="Resource exhausted", retry_after=0.05)
    server.enqueue("gemini", text="done")
    retry = {"attempts": 2, "initial_delay": 0.05, "max_delay": 0.05, "jitter": 0}

    client = _client(server, retry_options=retry)
    response = client.models.generate_content(model=MODEL, contents="hi")

    assert response.text == "done"
    assert len(server.requests_for("gemini")) == 2


@pytest.mark.parametrize(
    ("status", "error_class", "status_name"),
    [
        (400, errors.ClientError, "INVALID_ARGUMENT"),
        (403, errors.ClientError, "PERMISSION_DENIED"),
        (404, errors.ClientError, "NOT_FOUND"),
        (429, errors.ClientError, "RESOURCE_EXHAUSTED"),
        (500, errors.ServerError, "INTERNAL"),
        (503, errors.ServerError, "UNAVAILABLE"),
    ],
)
def test_error_statuses_have_google_error_bodies(
    server: MockLLMServer, status: int, error_class: type[errors.APIError], status_name: str
) -> None:
    server.enqueue_error(status, "gemini", message="nope")

    with pytest.raises(error_class) as info:
        _generate(server)

    assert (info.value.code, info.value.status, info.value.message) == (status, status_name, "nope")


def test_stream_error_chunk_raises_an_api_error(server: MockLLMServer) -> None:
    server.enqueue(
        "gemini",
        text="partial answer",
        fragments=2,
        cut_after=1,
        stream_error={"status": 503, "message": "The model is overloaded."},
    )
    client = _client(server)
    received: list[types.GenerateContentResponse] = []

    with pytest.raises(errors.ServerError) as info:
        received.extend(client.models.generate_content_stream(model=MODEL, contents="hi"))

    assert [c.text for c in received] == ["partial"]
    assert (info.value.code, info.value.status) == (503, "UNAVAILABLE")


def test_render_error_body_shape() -> None:
    reply = render_error(ErrorReply(429, "slow", error_type="QUOTA"))

    assert json.loads(reply.body or b"") == {
        "error": {"code": 429, "message": "slow", "status": "QUOTA"}
    }


def test_dropped_connection_is_a_transport_error(server: MockLLMServer) -> None:
    server.enqueue_fault("drop", "gemini")

    with pytest.raises(httpx2.RemoteProtocolError):
        _generate(server)


def test_hanging_server_times_out_in_the_sdk(server: MockLLMServer) -> None:
    server.enqueue_fault("hang", "gemini", delay=0.3)
    client = _client(server, timeout=100)  # milliseconds

    with pytest.raises(httpx2.ReadTimeout):
        client.models.generate_content(model=MODEL, contents="hi")


def test_stream_cut_mid_way_fails_while_reading(server: MockLLMServer) -> None:
    server.enqueue("gemini", text="hello world", fragments=3, cut_after=2)

    with pytest.raises(httpx2.RemoteProtocolError):
        _stream(server)


def test_string_arguments_are_sent_as_is_and_rejected_by_the_sdk(server: MockLLMServer) -> None:
    # Gemini's args is an object: a script's invalid-JSON string cannot reach Zerda through
    # google-genai, which validates the response.
    server.enqueue("gemini", tool_calls=[{"name": "f", "arguments": '{"a": 1'}])

    with pytest.raises(pydantic.ValidationError, match="args"):
        _generate(server)
