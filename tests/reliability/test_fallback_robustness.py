"""Fallbacks (issue 34): an invalid structured answer is the interface's own result, never
an error (item 8), so ``run``'s ``output_retries`` work over a fallback; and a refusal
before sending of what one row cannot take (a capability refusal) moves on to the next
interface, while bad input still stops at once (risk 2)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from zerda.llm import InvalidRequestError, OutputValidationError, create_interface
from zerda.llm.fallback import FallbackInterface
from zerda.testing import MockLLMServer


class City(BaseModel):
    name: str


BAD = '{"name": 7}'
GOOD = '{"name": "Paris"}'
USAGE = {"input_tokens": 11, "output_tokens": 5}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
IMAGE_URL = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is it?"},
            {"type": "image", "url": "https://example.com/cat.png", "media_type": "image/png"},
        ],
    }
]


@pytest.fixture(scope="module")
def module_mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def mock(module_mock: MockLLMServer) -> MockLLMServer:
    module_mock.reset()
    return module_mock


def chain(server: MockLLMServer, *providers: str, **options: Any) -> FallbackInterface:
    """A fallback over ``providers`` (model "m"), each without retries."""
    return create_interface(
        [f"{p}:m" for p in providers],
        options={p: {"max_retries": 0, **server.client_options(p)} for p in providers},
        **options,
    )


def sent(server: MockLLMServer, provider: str) -> int:
    return len(server.requests_for(provider))


# --- item 8: an invalid structured answer through a fallback -----------------------------


def _own_result(server: MockLLMServer) -> dict[str, Any]:
    """What the openai interface alone returns for the invalid answer."""
    server.enqueue("openai", text=BAD, usage=USAGE)
    llm = create_interface("openai:m", max_retries=0, **server.client_options("openai"))
    return llm.generate("q", response_format=City)


def test_generate_gives_the_interfaces_own_result(mock: MockLLMServer) -> None:
    own = _own_result(mock)
    assert own["parse_error"].startswith("the answer does not match City")
    mock.enqueue("openai", text=BAD, usage=USAGE)
    result = chain(mock, "openai", "anthropic").generate("q", response_format=City)
    assert result == {**own, "provider": "openai"}
    assert result["content"] == BAD and result["usage"]["input_tokens"] == 11
    assert sent(mock, "anthropic") == 0


def test_raise_errors_raises_the_interfaces_error_with_its_result(mock: MockLLMServer) -> None:
    own = _own_result(mock)
    mock.enqueue("openai", text=BAD, usage=USAGE)
    with pytest.raises(OutputValidationError) as info:
        chain(mock, "openai", "anthropic", raise_errors=True).generate("q", response_format=City)
    assert info.value.result == {**own, "provider": "openai"}
    assert sent(mock, "anthropic") == 0


def test_generate_async(mock: MockLLMServer) -> None:
    own = _own_result(mock)
    mock.enqueue("openai", text=BAD, usage=USAGE)
    fallback = chain(mock, "openai", "anthropic")
    result = asyncio.run(fallback.generate_async("q", response_format=City))
    assert result == {**own, "provider": "openai"}


def test_stream_ends_with_the_interfaces_own_result(mock: MockLLMServer) -> None:
    own = _own_result(mock)
    mock.enqueue("openai", text=BAD, usage=USAGE)
    events = list(chain(mock, "openai", "anthropic").stream("q", response_format=City))
    assert "".join(e["text"] for e in events if e["type"] == "text") == BAD
    assert events[-1] == {"type": "done", "result": {**own, "provider": "openai"}}
    mock.enqueue("openai", text=BAD, usage=USAGE)
    fallback = chain(mock, "openai", "anthropic", raise_errors=True)
    with pytest.raises(OutputValidationError) as info:
        list(fallback.stream("q", response_format=City))
    assert info.value.result == {**own, "provider": "openai"}


def test_stream_async(mock: MockLLMServer) -> None:
    own = _own_result(mock)
    mock.enqueue("openai", text=BAD, usage=USAGE)
    fallback = chain(mock, "openai", "anthropic")

    async def events() -> list[dict[str, Any]]:
        return [e async for e in fallback.stream_async("q", response_format=City)]

    assert asyncio.run(events())[-1]["result"] == {**own, "provider": "openai"}


@pytest.mark.parametrize("raise_errors", [False, True])
def test_run_output_retries_over_a_fallback(mock: MockLLMServer, raise_errors: bool) -> None:
    mock.enqueue("openai", text=BAD, usage=USAGE)
    mock.enqueue("openai", text=GOOD, usage=USAGE)
    fallback = chain(mock, "openai", "anthropic", raise_errors=raise_errors)
    result = fallback.run("q", response_format=City, output_retries=1)
    assert result["parsed"] == City(name="Paris") and result["turns"] == 2
    assert result["usage"]["input_tokens"] == 22 and result["provider"] == "openai"
    feedback = mock.last_request("openai").body["messages"]
    assert feedback[1] == {"role": "assistant", "content": BAD}
    assert feedback[2]["content"].startswith("Your answer is not valid: the answer does not")
    assert sent(mock, "anthropic") == 0


def test_run_async_output_retries_over_a_fallback(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text=BAD)
    mock.enqueue("openai", text=GOOD)
    fallback = chain(mock, "openai", "anthropic")
    result = asyncio.run(fallback.run_async("q", response_format=City, output_retries=1))
    assert result["parsed"] == City(name="Paris") and result["turns"] == 2


def test_run_without_retries_left_keeps_the_invalid_answer(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text=BAD, usage=USAGE)
    result = chain(mock, "openai", "anthropic").run("q", response_format=City)
    assert result["parsed"] is None and result["content"] == BAD
    assert result["parse_error"].startswith("the answer does not match City")
    assert result["usage"]["input_tokens"] == 11 and "error" not in result


# --- risk 2: capability refusals move on ---------------------------------------------------

CAPABILITY_CASES = [
    # (first row, the call's arguments it cannot take)
    pytest.param("bedrock", {"messages": IMAGE_URL}, id="image-url"),
    pytest.param("ollama", {"tools": [{"name": "f"}], "tool_choice": "required"}, id="choice"),
    pytest.param("ollama", {"parallel_tool_calls": False}, id="parallel"),
    pytest.param("openai-responses", {"stop": ["END"]}, id="stop"),
    pytest.param("deepseek", {"response_format": City, "structured_output": "native"}, id="mode"),
    pytest.param("ollama", {"logit_bias": {"1": 1}}, id="native-option"),
    pytest.param(
        "openai",
        {
            "response_format": {
                "name": "m",
                "schema": {"type": "object", "additionalProperties": {"type": "integer"}},
            }
        },
        id="not-strict",
    ),
]


def _generate(fallback: FallbackInterface, kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs = dict(kwargs)
    return fallback.generate(kwargs.pop("messages", "q"), **kwargs)


@pytest.mark.parametrize(("first", "kwargs"), CAPABILITY_CASES)
def test_a_capability_refusal_moves_on(
    mock: MockLLMServer, first: str, kwargs: dict[str, Any]
) -> None:
    second = "openai" if first != "openai" else "ollama"
    mock.enqueue(second, text='{"a": 1}')
    result = _generate(chain(mock, first, second), kwargs)
    assert "error" not in result, result.get("error")
    assert (result["content"], result["provider"]) == ('{"a": 1}', second)
    assert sent(mock, first) == 0 and sent(mock, second) == 1
    # Last, the row's refusal is the answer: marked as a capability refusal.
    mock.enqueue_error(503, second)
    with pytest.raises(InvalidRequestError) as info:
        _generate(chain(mock, second, first, raise_errors=True), kwargs)
    assert info.value.capability is True and info.value.provider == first


def test_a_reasoning_setting_the_family_lacks_moves_on(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Thought it through.")
    options = {"openai": {"max_retries": 0, **mock.client_options("openai")}}
    fallback = create_interface(["openai:gpt-4o", "openai:o3"], options=options)
    result = fallback.generate("q", reasoning="high")
    assert result["content"] == "Thought it through."
    assert [r.body["model"] for r in mock.requests] == ["o3"]


def test_the_last_interfaces_capability_refusal_is_the_answer(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")
    result = chain(mock, "openai", "bedrock").generate(IMAGE_URL)
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"].startswith("messages[0].content[1].url: bedrock does not")
    assert result["provider"] == "bedrock"


def test_a_stream_moves_on_after_a_capability_refusal(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="A cat.")
    events = list(chain(mock, "bedrock", "openai").stream(IMAGE_URL))
    assert events[-1]["result"]["content"] == "A cat."
    assert events[-1]["result"]["provider"] == "openai" and sent(mock, "bedrock") == 0

    async def streamed() -> list[dict[str, Any]]:
        fallback = chain(mock, "bedrock", "openai")
        return [e async for e in fallback.stream_async(IMAGE_URL)]

    mock.enqueue("openai", text="A cat.")
    assert asyncio.run(streamed())[-1]["result"]["provider"] == "openai"


def test_generate_async_moves_on_after_a_capability_refusal(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="A cat.")
    result = asyncio.run(chain(mock, "bedrock", "openai").generate_async(IMAGE_URL))
    assert result["provider"] == "openai" and result["content"] == "A cat."


BAD_INPUT = [
    pytest.param(
        {"messages": [{"role": "tool", "tool_call_id": "x", "name": "f", "content": "1"}]},
        id="orphan-tool-result",
    ),
    pytest.param({"messages": [{"role": "wizard", "content": "hi"}]}, id="bad-role"),
    pytest.param({"tools": [{"name": "f", "parameters": {"type": "objet"}}]}, id="bad-schema"),
    pytest.param(
        {
            "response_format": {
                "name": "m",
                "schema": {
                    "type": "object",
                    "properties": {"a": {"type": "string", "pattern": "("}},
                },
            }
        },
        id="bad-pattern",
    ),
    pytest.param({"temperature": "hot"}, id="bad-option"),
    pytest.param({"tool_choice": "missing_tool"}, id="unknown-tool"),
]


@pytest.mark.parametrize("kwargs", BAD_INPUT)
def test_bad_input_still_stops_at_once(mock: MockLLMServer, kwargs: dict[str, Any]) -> None:
    result = _generate(chain(mock, "bedrock", "openai"), kwargs)
    assert result["error"]["type"] == "invalid_request"
    assert result["provider"] == "bedrock"
    assert mock.requests == []
    with pytest.raises(InvalidRequestError) as info:
        _generate(chain(mock, "bedrock", "openai", raise_errors=True), kwargs)
    assert info.value.capability is False


def test_a_400_from_the_provider_is_no_capability_refusal(mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "openai", message="bad request")
    result = chain(mock, "openai", "anthropic").generate("q")
    assert result["error"]["type"] == "invalid_request" and sent(mock, "anthropic") == 0


def test_png_bytes_are_taken_where_urls_are_not(mock: MockLLMServer) -> None:
    # The same image as bytes: bedrock takes it, so it answers itself.
    mock.enqueue("bedrock", text="A dot.")
    messages = [
        {"role": "user", "content": [{"type": "image", "data": PNG, "media_type": "image/png"}]}
    ]
    result = chain(mock, "bedrock", "openai").generate(messages)
    assert result["provider"] == "bedrock" and json.dumps(result["content"]) == '"A dot."'
