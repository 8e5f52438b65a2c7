"""google-genai 3.x's automatic continuation survives the fast path: an answer that stops with
``CONTINUATION`` and a ``continuationToken`` is asked for again with the token, as
``generate_content`` / ``generate_content_stream`` do, and Zerda reports what it reported
through the SDK's own calls (the same hop bodies, the same merged result)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm._stream import StreamAccumulator
from zerda.testing import MockLLMServer

genai = pytest.importorskip("google.genai")

MODEL = "gemini-2.5-flash"
TOKEN = "dG9rZW4tMQ=="  # b"token-1"
FIRST = {
    "candidates": [
        {
            "content": {"role": "model", "parts": [{"text": "Hel"}]},
            "finishReason": "CONTINUATION",
            "continuationToken": TOKEN,
        }
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
}
LAST = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5},
}


# generate_content's call for Zerda's generate("hi") (a config: its generationConfig is sent).
SDK_CALL: dict[str, Any] = {
    "model": MODEL,
    "contents": "hi",
    "config": {"automatic_function_calling": {"disable": True}},
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


def _enqueue(server: MockLLMServer, stream: bool) -> None:
    for answer in (FIRST, LAST):
        if stream:
            server.enqueue_raw(
                200,
                f"data: {json.dumps(answer)}\r\n\r\n",
                {"content-type": "text/event-stream"},
                provider="gemini",
            )
        else:
            server.enqueue_raw(200, answer, {"content-type": "application/json"}, provider="gemini")


def _bodies(server: MockLLMServer) -> list[Any]:
    return [r.body for r in server.requests_for("gemini")]


@pytest.mark.parametrize("stream", [False, True])
def test_a_continued_answer_is_asked_for_again_and_merged_as_the_sdk_does(
    server: MockLLMServer, stream: bool, request: pytest.FixtureRequest
) -> None:
    llm = create_interface("gemini", model=MODEL, max_retries=0, **server.client_options("gemini"))
    request.addfinalizer(llm.close)
    server.reset()
    _enqueue(server, stream)
    if stream:
        chunks = list(llm.client.models.generate_content_stream(**SDK_CALL))
        acc = StreamAccumulator()  # the SDK's chunks, fed as Zerda feeds its own
        for chunk in chunks:
            llm._feed(acc, chunk)
        acc.end_all_calls()
        sdk_result = acc.result(llm._make_result)
    else:
        sdk_result = llm._map_response(llm.client.models.generate_content(**SDK_CALL))
    sdk_bodies = _bodies(server)
    assert len(sdk_bodies) == 2 and sdk_bodies[1]["continuationToken"] == TOKEN

    server.reset()
    _enqueue(server, stream)
    result = list(llm.stream("hi"))[-1]["result"] if stream else llm.generate("hi")
    assert _bodies(server) == sdk_bodies
    assert result == sdk_result
    assert result["content"] == "Hello"

    async def async_result() -> dict[str, Any]:
        if stream:
            return [e async for e in llm.stream_async("hi")][-1]["result"]
        return await llm.generate_async("hi")

    server.reset()
    _enqueue(server, stream)
    assert asyncio.run(async_result()) == sdk_result
    assert _bodies(server) == sdk_bodies


def test_automatic_continuation_off_stops_at_the_first_answer(server: MockLLMServer) -> None:
    llm = create_interface("gemini", model=MODEL, max_retries=0, **server.client_options("gemini"))
    server.reset()
    _enqueue(server, stream=False)
    with llm:
        result = llm.generate("hi", automatic_continuation=False)
    assert len(_bodies(server)) == 1
    assert result["content"] == "Hel"
    assert result["stop_reason"] == "other"
    server.reset()
