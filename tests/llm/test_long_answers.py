"""Long answers on Claude (issue 33): ``max_tokens`` past what the anthropic SDK answers
without streaming ("Streaming is required for operations that may take longer than 10
minutes") is streamed inside generate / run, sync and async, and assembled into the very
result ``stream`` ends with, on every row that speaks through the anthropic SDK (Anthropic,
Claude on Bedrock, Claude on Vertex AI), with the fast path on and off. The rule is the
SDK's own (``_calculate_nonstreaming_timeout``), checked against it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import base, registry
from zerda.llm.providers import create_interface
from zerda.llm.wires.anthropic import long_answers
from zerda.testing import MockLLMServer
from zerda.testing._server import load_renderer

ROWS = [p for p in registry.NAMES if registry.get(p).sdk_module == "anthropic"]
# claude-sonnet-4-6 as each row names it (Bedrock: anthropic.claude-sonnet-4-6).
MODELS = {p: registry.get(p).demo_model for p in ROWS}
LONG = 64_000  # what claude-sonnet-4-6 writes at most; reasoning="high" needs room
TOOLS = [{"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}]
SCRIPT: dict[str, Any] = {
    "reasoning": "The user wants a long essay.",
    "text": "A long answer.",
    "tool_calls": [{"id": "toolu_01", "name": "get_time", "arguments": {"zone": "UTC"}}],
    "usage": {"input_tokens": 12, "output_tokens": 34, "cache_read_tokens": 2},
    "fragments": 3,
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def llm(server: MockLLMServer, provider: str, fast: bool, model: str | None = None) -> Any:
    options = server.client_options(provider)
    return create_interface(
        provider, model or MODELS[provider], **options, max_retries=0, fast_path=fast
    )


def streamed(server: MockLLMServer, provider: str) -> list[bool]:
    """For each request received: whether it asked for a stream (as the wire tells it)."""
    renderer = load_renderer(registry.get(provider).wire)
    return [bool(renderer.wants_stream(r)) for r in server.requests]


def test_the_rows_through_the_anthropic_sdk() -> None:
    assert ROWS == ["anthropic", "anthropic-bedrock", "anthropic-vertex"]
    assert {MODELS[p].rpartition(".")[2] for p in ROWS} == {"claude-sonnet-4-6"}


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
@pytest.mark.parametrize("provider", ROWS)
def test_a_long_answer_comes_back_from_generate(
    server: MockLLMServer, provider: str, fast: bool, way: str
) -> None:
    client = llm(server, provider, fast)
    kwargs: dict[str, Any] = {"max_tokens": LONG, "reasoning": "high", "tools": TOOLS}
    server.enqueue(provider, **SCRIPT)
    if way == "sync":
        result = client.generate("Write at length.", **kwargs)
    else:
        result = asyncio.run(client.generate_async("Write at length.", **kwargs))
    server.enqueue(provider, **SCRIPT)
    done = list(client.stream("Write at length.", **kwargs))[-1]["result"]
    assert result == done  # the one accumulator: generate's result is the stream's
    assert result["content"] == "A long answer."
    assert result["reasoning"] == "The user wants a long essay."
    assert result["tool_calls"] == [
        {"id": "toolu_01", "name": "get_time", "arguments": {"zone": "UTC"}}
    ]
    assert (result["stop_reason"], result["usage"]["output_tokens"]) == ("tool_use", 34)
    assert streamed(server, provider) == [True, True]  # one attempt each, both streamed


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
@pytest.mark.parametrize("provider", ROWS)
def test_a_short_answer_is_not_streamed(server: MockLLMServer, provider: str, fast: bool) -> None:
    server.enqueue(provider, text="Short.")
    result = llm(server, provider, fast).generate("hi", max_tokens=4096)
    assert (result["content"], streamed(server, provider)) == ("Short.", [False])


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
def test_a_tool_loop_with_long_answers(server: MockLLMServer, fast: bool, way: str) -> None:
    def get_time(zone: str) -> str:
        """The time.

        Args:
            zone: A time zone.
        """
        return f"12:00 {zone}"

    client = llm(server, "anthropic", fast)
    server.enqueue("anthropic", **SCRIPT)
    server.enqueue("anthropic", text="It is noon.")
    kwargs: dict[str, Any] = {"tools": [get_time], "max_tokens": LONG}
    if way == "sync":
        result = client.run("Time?", **kwargs)
    else:
        result = asyncio.run(client.run_async("Time?", **kwargs))
    assert result["content"] == "It is noon."
    assert streamed(server, "anthropic") == [True, True]
    sent = server.requests[1].body["messages"][-1]["content"][0]
    assert (sent["type"], sent["tool_use_id"]) == ("tool_result", "toolu_01")


@pytest.mark.parametrize(
    ("model", "max_tokens", "expected"),
    [
        ("claude-sonnet-4-6", 21_333, False),  # 3600 s * 21333 / 128000 = 599.99 s
        ("claude-sonnet-4-6", 21_334, True),  # 600.02 s: over the 10 minutes
        ("claude-opus-4-0", 8_192, False),  # MODEL_NONSTREAMING_TOKENS' limit
        ("claude-opus-4-0", 8_193, True),
        ("anthropic.claude-opus-4-1-20250805-v1:0", 8_193, True),
        ("claude-haiku-4-5", 16_000, False),
    ],
)
def test_the_rule_is_the_sdks(
    server: MockLLMServer, model: str, max_tokens: int, expected: bool
) -> None:
    """needs_stream says True exactly where messages.create() refuses to answer without
    streaming (the SDK's own check, called here), and generate streams exactly then."""
    client = llm(server, "anthropic", True, model)
    sdk: Any = client.sdk
    limit = sdk._constants.MODEL_NONSTREAMING_TOKENS.get(model)
    try:
        client.client._calculate_nonstreaming_timeout(max_tokens, limit)
        refused = False
    except ValueError as exc:
        refused = "Streaming is required" in str(exc)
    body = {"model": model, "max_tokens": max_tokens, "messages": []}
    assert long_answers.needs_stream(sdk, body) is refused is expected
    server.enqueue("anthropic", text="ok")
    assert client.generate("hi", max_tokens=max_tokens)["content"] == "ok"
    assert streamed(server, "anthropic") == [expected]


def test_a_stream_cut_short_is_an_error_never_a_success(server: MockLLMServer) -> None:
    """A long answer whose stream ends before message_stop is an error (the truncation
    rule), as a non-streaming answer cut short is."""
    server.enqueue("anthropic", text="A long answer.", fragments=3, cut_after=4)
    result = llm(server, "anthropic", True).generate("hi", max_tokens=LONG)
    assert (result["stop_reason"], result["content"]) == ("error", None)
    assert streamed(server, "anthropic") == [True]


def test_a_long_answer_is_retried_whole(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retryable failure of the stream (here a 529 overloaded) sends the call again,
    streamed again, as generate retries any call."""
    waits: list[float] = []
    monkeypatch.setattr(base, "_sleep", waits.append)
    server.enqueue_error(529, "anthropic", message="Overloaded")
    server.enqueue("anthropic", text="A long answer.")
    client = create_interface(
        "anthropic", MODELS["anthropic"], **server.client_options("anthropic"), max_retries=1
    )
    result = client.generate("hi", max_tokens=LONG)
    assert result["content"] == "A long answer."
    assert streamed(server, "anthropic") == [True, True]
    assert len(waits) == 1
