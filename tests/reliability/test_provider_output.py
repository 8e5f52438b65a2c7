"""Whatever a provider sends on a 200, Zerda reports honestly (issue 18, items 2, 3, 4, 7):
a stream that ends before its final event, a body or stream that is not the provider's
shape, a non-string text or error message, a tool call without a name. Each is an error
result (the partial text kept), never a success and never an exception escaping with
``raise_errors=False``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.llm import ServerError
from zerda.testing import MockLLMServer, RecordedRequest, Script
from zerda.testing._script import ScriptedCall
from zerda.testing._server import load_renderer

TEXT = "alpha beta gamma delta"

# Where each provider's stream is served (the renderers read the path or the body).
_STREAM_PATHS = {
    "gemini": "/v1beta/models/m:streamGenerateContent",
    "bedrock": "/model/m/converse-stream",
    "ollama": "/api/chat",
}


def _rendered_stream(provider: str, script: Script) -> tuple[dict[str, str], list[bytes], int]:
    """The mock's own stream for ``script``: headers, chunks and how many close it."""
    path = _STREAM_PATHS.get(provider, "/v1/chat/completions")
    query = {"alt": "sse"} if provider == "gemini" else {}  # as google-genai asks
    req = RecordedRequest(provider, "POST", path, query, {}, {"stream": True, "model": "m"})
    reply = load_renderer(provider).render(script, req)
    assert reply.chunks is not None
    return reply.headers, reply.chunks, reply.closing_chunks


def enqueue_without_final_event(server: MockLLMServer, provider: str, script: Script) -> None:
    """The stream, cleanly ended (no dropped connection) but without its closing chunks:
    no finish_reason / [DONE], message_stop, finishReason chunk, done line, messageStop."""
    headers, chunks, closing = _rendered_stream(provider, script)
    server.enqueue_raw(200, b"".join(chunks[:-closing]), headers, provider, chunk_size=64)


def stream_result(llm: Any) -> tuple[str, dict[str, Any]]:
    events = list(llm.stream("hi"))
    assert [e["type"] for e in events].count("done") == 1 and events[-1]["type"] == "done"
    return "".join(e["text"] for e in events if e["type"] == "text"), events[-1]["result"]


def error_shape(result: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    assert {k: v for k, v in result.items() if k != "error"} == {
        "content": content,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": None,
        "message": None,
        "cost": None,
    }
    error: dict[str, Any] = result["error"]
    assert set(error) == {"type", "message", "status_code", "provider", "retryable"}
    return error


# --- item 2: a stream that ends before its final event -----------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_without_its_final_event_is_a_server_error_keeping_the_text(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=2)
    enqueue_without_final_event(server, provider, Script(text=TEXT, fragments=4))

    streamed, result = stream_result(llm)

    assert streamed and TEXT.startswith(streamed)
    error = error_shape(result, streamed)
    assert (error["type"], error["provider"], error["retryable"]) == ("server", provider, False)
    assert "final" in error["message"]
    assert len(server.requests_for(provider)) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_async_stream_without_its_final_event_is_an_error(
    server: MockLLMServer, fresh: Any, provider: str
) -> None:
    llm = fresh(server).get(provider, max_retries=2)
    enqueue_without_final_event(server, provider, Script(text=TEXT, fragments=4))

    events = [e async for e in llm.stream_async("hi")]

    streamed = "".join(e["text"] for e in events if e["type"] == "text")
    assert streamed and TEXT.startswith(streamed)
    error = error_shape(events[-1]["result"], streamed)
    assert (error["type"], error["retryable"]) == ("server", False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_cut_inside_a_tool_call_is_an_error(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=0)
    script = Script(text="Checking.", tool_calls=[ScriptedCall("f", {"a": 1})])
    enqueue_without_final_event(server, provider, script)

    _, result = stream_result(llm)

    assert error_shape(result, "Checking.")["type"] == "server"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_complete_stream_still_succeeds(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=0)
    headers, chunks, _ = _rendered_stream(provider, Script(text=TEXT, fragments=4))
    server.enqueue_raw(200, b"".join(chunks), headers, provider, chunk_size=64)

    streamed, result = stream_result(llm)

    assert (streamed, result["content"], result["stop_reason"]) == (TEXT, TEXT, "end_turn")


# --- item 4: broken 200 bodies and streams -----------------------------------------------

BROKEN_BODIES = {
    "{}": b"{}",
    "[]": b"[]",
    "null": b"null",
    "html": b"<html><body><h1>502 Bad Gateway</h1></body></html>",
}


@pytest.mark.parametrize("body", list(BROKEN_BODIES))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_broken_200_body_is_a_server_error_not_retried(
    server: MockLLMServer, llms: Interfaces, provider: str, body: str
) -> None:
    llm = llms.get(provider, max_retries=2)
    content_type = "text/html" if body == "html" else "application/json"
    for _ in range(2):
        server.enqueue_raw(200, BROKEN_BODIES[body], {"content-type": content_type}, provider)

    error = error_shape(llm.generate("hi"))

    assert (error["type"], error["provider"], error["retryable"]) == ("server", provider, False)
    assert len(server.requests_for(provider)) == 1
    with pytest.raises(ServerError):
        llm.generate("hi", raise_errors=True)


@pytest.mark.parametrize("kind", ["malformed", "empty"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_broken_200_stream_is_a_server_error_not_retried(
    server: MockLLMServer, llms: Interfaces, provider: str, kind: Any
) -> None:
    llm = llms.get(provider, max_retries=2)
    for _ in range(3):
        server.enqueue_fault(kind, provider)

    _, result = stream_result(llm)

    error = error_shape(result)
    assert (error["type"], error["provider"], error["retryable"]) == ("server", provider, False)
    assert len(server.requests_for(provider)) == 1


# --- item 3: what a provider sends never escapes as an exception --------------------------


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def _non_string_text_stream(provider: str) -> tuple[bytes, dict[str, str]]:
    """A stream whose first text delta is a number, then a normal end."""
    sse = {"content-type": "text/event-stream"}
    if provider == "ollama":
        lines = [
            {"model": "m", "message": {"role": "assistant", "content": "ok "}, "done": False},
            {"model": "m", "message": {"role": "assistant", "content": 123}, "done": False},
            {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True},
        ]
        body = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return body, {"content-type": "application/x-ndjson"}
    if provider == "anthropic":
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 1, "output_tokens": 0},
        }
        block = {"type": "text", "text": ""}
        return _sse(
            [
                ("message_start", {"type": "message_start", "message": message}),
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": block},
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": "ok "},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": 123},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": 2},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        ), sse
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def delta(content: Any, finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": {"content": content}, "finish_reason": finish}
        return {**chunk, "choices": [choice]}

    body = _sse([(None, delta("ok ")), (None, delta(123)), (None, delta(None, "stop"))])
    return body + b"data: [DONE]\n\n", sse


@pytest.mark.parametrize("provider", ["openai", "groq", "mistral", "ollama", "anthropic"])
def test_a_non_string_text_delta_is_a_server_error(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=0)
    body, headers = _non_string_text_stream(provider)
    server.enqueue_raw(200, body, headers, provider, chunk_size=40)

    _, result = stream_result(llm)

    error = error_shape(result, "ok ")
    assert (error["type"], error["retryable"]) == ("server", False)
    assert "text" in error["message"]


def test_a_non_string_bedrock_text_delta_is_a_server_error(
    server: MockLLMServer, llms: Interfaces
) -> None:
    """Bedrock's event stream is binary: built with the mock's own event encoder."""
    from zerda.testing._eventstream import encode_event

    llm = llms.get("bedrock", max_retries=0)
    events = [
        encode_event("messageStart", {"role": "assistant"}),
        encode_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok "}}),
        encode_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": 123}}),
        encode_event("contentBlockStop", {"contentBlockIndex": 0}),
        encode_event("messageStop", {"stopReason": "end_turn"}),
    ]
    headers = {"content-type": "application/vnd.amazon.eventstream"}
    server.enqueue_raw(200, b"".join(events), headers, "bedrock")

    _, result = stream_result(llm)

    assert error_shape(result, "ok ")["type"] == "server"


def _error_body(provider: str, message: Any) -> bytes:
    if provider == "anthropic":
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
    elif provider == "gemini":
        body = {"error": {"code": 400, "message": message}}  # no "status" to prefix it
    elif provider == "bedrock":
        body = {"message": message}
    elif provider == "ollama":
        body = {"error": message}
    else:
        body = {"error": {"message": message, "type": "server_error"}}
    return json.dumps(body).encode()


@pytest.mark.parametrize("message", [123, None, ["a", 1], {"nested": True}])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_non_string_error_message_gives_an_error_result(
    server: MockLLMServer, llms: Interfaces, provider: str, message: Any
) -> None:
    llm = llms.get(provider, max_retries=0)
    body = _error_body(provider, message)
    headers = {"content-type": "application/json"}
    if provider == "bedrock":
        headers["x-amzn-ErrorType"] = "ValidationException"
    server.enqueue_raw(400, body, headers, provider)

    error = error_shape(llm.generate("hi"))

    assert (error["type"], error["status_code"]) == ("invalid_request", 400)
    assert isinstance(error["message"], str) and error["message"]


@pytest.mark.parametrize("key", [12345, b"sk-bytes-key"])
@pytest.mark.parametrize("provider", ["openai", "groq", "mistral", "ollama", "anthropic", "gemini"])
def test_an_api_key_that_is_not_a_string_is_refused_at_construction(
    provider: str, key: Any
) -> None:
    from zerda.llm import create_interface

    with pytest.raises(TypeError, match="api_key must be a string"):
        create_interface(provider, model="m", api_key=key)


# --- item 7: a tool call with no name ----------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", ["generate", "stream"])
def test_a_tool_call_without_a_name_is_a_server_error_naming_the_part(
    server: MockLLMServer, llms: Interfaces, provider: str, mode: str
) -> None:
    llm = llms.get(provider, max_retries=0)
    server.enqueue(
        provider,
        text="Calling.",
        tool_calls=[ScriptedCall("", {"city": "Paris"}, id="call_abc123")],
    )

    if mode == "generate":
        result = llm.generate("hi")
        content = None
    else:
        _, result = stream_result(llm)
        content = "Calling."

    error = error_shape(result, content)
    assert (error["type"], error["retryable"]) == ("server", False)
    assert "tool_calls[0]" in error["message"] and "name" in error["message"]
    assert "Paris" in error["message"]  # the raw part is kept
