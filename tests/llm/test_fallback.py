"""Fallbacks across interfaces (zerda.llm.fallback), against MockLLMServer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import ConnectionError as ZerdaConnectionError
from zerda.llm import InvalidRequestError, ServerError, create_interface
from zerda.llm.fallback import FallbackInterface
from zerda.testing import MockLLMServer

HISTORY = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "get_weather",
        "content": {"temp": 18},
        "is_error": False,
    },
]
# HISTORY as each SDK sent it.
OPENAI_MESSAGES = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 18}'},
]
ANTHROPIC_MESSAGES = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": '{"temp": 18}'}],
    },
]


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temp": 18}


@pytest.fixture
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def fallback(server: MockLLMServer, **options: Any) -> FallbackInterface:
    """openai first, then anthropic, each without retries unless ``options`` say."""
    return create_interface(
        ["openai:m2", "anthropic:m1"],
        options={
            "openai": {"max_retries": 0, **server.client_options("openai")},
            "anthropic": {"max_retries": 0, **server.client_options("anthropic")},
        },
        **options,
    )


def bodies(server: MockLLMServer, provider: str) -> list[Any]:
    return [r.body for r in server.requests_for(provider)]


# --- generate ------------------------------------------------------------------------------


def test_a_503_on_the_first_yields_the_seconds_answer_with_the_same_history(
    mock: MockLLMServer,
) -> None:
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", text="Sunny.", usage={"input_tokens": 3, "output_tokens": 2})
    result = fallback(mock).generate(HISTORY)
    assert result == {
        "content": "Sunny.",
        "tool_calls": [],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 3,
            "output_tokens": 2,
            "cache_read_tokens": 0,  # the mock's Anthropic usage has zero cache counts
            "cache_write_tokens": 0,
            "reasoning_tokens": None,
        },
        "reasoning": None,
        "message": {"role": "assistant", "content": "Sunny.", "tool_calls": []},
        "cost": None,  # m1 has no price
        "provider": "anthropic",
    }
    assert bodies(mock, "openai") == [{"model": "m2", "messages": OPENAI_MESSAGES}]
    assert bodies(mock, "anthropic") == [
        {"max_tokens": 4096, "messages": ANTHROPIC_MESSAGES, "model": "m1"}
    ]


def test_ready_interfaces(mock: MockLLMServer) -> None:
    a = create_interface("anthropic:m1", max_retries=0, **mock.client_options("anthropic"))
    b = create_interface("openai:m2", max_retries=0, **mock.client_options("openai"))
    mock.enqueue_error(529, "anthropic", error_type="overloaded_error")
    mock.enqueue("openai", text="Hi.")
    result = create_interface([a, b]).generate(HISTORY)
    assert (result["content"], result["provider"]) == ("Hi.", "openai")
    assert bodies(mock, "anthropic")[0]["messages"] == ANTHROPIC_MESSAGES
    assert bodies(mock, "openai")[0]["messages"] == OPENAI_MESSAGES


def test_the_first_answer_wins(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hi.")
    assert fallback(mock).generate("Hello")["provider"] == "openai"
    assert mock.requests_for("anthropic") == []


def test_a_400_does_not_fall_back(mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "openai", message="bad request")
    result = fallback(mock).generate("Hello")
    assert result["error"]["type"] == "invalid_request"
    assert result["provider"] == "openai"
    assert mock.requests_for("anthropic") == []


def test_a_request_refused_before_sending_does_not_fall_back(mock: MockLLMServer) -> None:
    result = fallback(mock).generate("Hello", tool_choice="missing_tool")
    assert result["error"]["type"] == "invalid_request"
    assert mock.requests == []


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retryable_statuses_fall_back(mock: MockLLMServer, status: int) -> None:
    mock.enqueue_error(status, "openai")
    mock.enqueue("anthropic", text="Hi.")
    assert fallback(mock).generate("Hello")["provider"] == "anthropic"


def test_a_dropped_connection_falls_back(mock: MockLLMServer) -> None:
    mock.enqueue_fault("drop", "openai")
    mock.enqueue("anthropic", text="Hi.")
    assert fallback(mock).generate("Hello")["provider"] == "anthropic"


def test_the_interfaces_own_retries_come_first(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai", retry_after=0.01)
    mock.enqueue_error(503, "openai", retry_after=0.01)
    mock.enqueue("anthropic", text="Hi.")
    llm = create_interface(
        ["openai:m2", "anthropic:m1"],
        options={
            "openai": {"max_retries": 1, **mock.client_options("openai")},
            "anthropic": {"max_retries": 0, **mock.client_options("anthropic")},
        },
    )
    assert llm.generate("Hello")["provider"] == "anthropic"
    assert len(mock.requests_for("openai")) == 2


def test_when_every_interface_fails_the_last_error_is_the_answer(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")
    mock.enqueue_error(503, "anthropic", message="down too")
    result = fallback(mock).generate("Hello")
    assert result["error"]["type"] == "server"
    assert result["error"]["provider"] == result["provider"] == "anthropic"


def test_raise_errors(mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "openai")
    with pytest.raises(InvalidRequestError):
        fallback(mock, raise_errors=True).generate("Hello")
    mock.enqueue_error(503, "openai")
    mock.enqueue_error(503, "anthropic")
    with pytest.raises(ServerError) as caught:
        fallback(mock).generate("Hello", raise_errors=True)
    assert caught.value.provider == "anthropic"
    assert caught.value.__cause__ is not None  # still chained to the SDK's exception


def test_generate_async(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", text="Sunny.")
    result = asyncio.run(fallback(mock).generate_async(HISTORY))
    assert (result["content"], result["provider"]) == ("Sunny.", "anthropic")
    assert bodies(mock, "openai")[0]["messages"] == OPENAI_MESSAGES
    assert bodies(mock, "anthropic")[0]["messages"] == ANTHROPIC_MESSAGES


def test_generate_async_400_does_not_fall_back(mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "openai")
    result = asyncio.run(fallback(mock).generate_async("Hello"))
    assert (result["error"]["type"], result["provider"]) == ("invalid_request", "openai")
    assert mock.requests_for("anthropic") == []


# --- streams -------------------------------------------------------------------------------


def test_a_stream_falls_back_before_its_first_event(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", text="Sunny there", fragments=2)
    events = list(fallback(mock).stream(HISTORY))
    assert [e["type"] for e in events] == ["text", "text", "done"]
    assert "".join(e["text"] for e in events[:-1]) == "Sunny there"
    assert events[-1]["result"]["content"] == "Sunny there"
    assert events[-1]["result"]["provider"] == "anthropic"
    assert bodies(mock, "openai")[0]["messages"] == OPENAI_MESSAGES
    assert bodies(mock, "anthropic")[0]["messages"] == ANTHROPIC_MESSAGES


def test_a_stream_does_not_fall_back_after_its_first_event(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hello there", fragments=4, cut_after=2)
    events = list(fallback(mock).stream("Hi"))
    done = events[-1]["result"]
    assert [e["type"] for e in events] == ["text", "done"]
    assert (done["stop_reason"], done["error"]["type"]) == ("error", "connection")
    assert done["content"] == events[0]["text"]  # the text received so far is kept
    assert done["provider"] == "openai"
    assert mock.requests_for("anthropic") == []


def test_a_stream_400_does_not_fall_back(mock: MockLLMServer) -> None:
    mock.enqueue_error(400, "openai")
    events = list(fallback(mock).stream("Hi"))
    assert [e["type"] for e in events] == ["done"]
    assert events[0]["result"]["error"]["type"] == "invalid_request"
    assert mock.requests_for("anthropic") == []


def test_a_stream_with_raise_errors_raises_after_its_first_event(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hello there", fragments=4, cut_after=2)
    stream = fallback(mock, raise_errors=True).stream("Hi")
    assert next(stream)["type"] == "text"
    with pytest.raises(ZerdaConnectionError):
        next(stream)


async def collect(events: Any) -> list[dict[str, Any]]:
    return [e async for e in events]


def test_stream_async_falls_back_before_its_first_event(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", text="Sunny.")
    events = asyncio.run(collect(fallback(mock).stream_async(HISTORY)))
    assert events[-1]["result"]["content"] == "Sunny."
    assert events[-1]["result"]["provider"] == "anthropic"
    assert bodies(mock, "anthropic")[0]["messages"] == ANTHROPIC_MESSAGES


def test_stream_async_does_not_fall_back_after_its_first_event(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hello there", fragments=4, cut_after=2)
    events = asyncio.run(collect(fallback(mock).stream_async("Hi")))
    assert events[-1]["result"]["error"]["type"] == "connection"
    assert events[-1]["result"]["provider"] == "openai"
    assert mock.requests_for("anthropic") == []


# --- the tool loop -------------------------------------------------------------------------


def test_run_falls_back_per_turn_and_continues_the_history(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")  # turn 1: openai is down, anthropic asks for the tool
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    mock.enqueue("anthropic", tool_calls=[call])
    mock.enqueue("openai", text="Sunny, 18.")  # turn 2: openai is back
    result = fallback(mock).run("Weather in Paris?", tools=[get_weather])
    assert (result["content"], result["provider"], result["turns"]) == ("Sunny, 18.", "openai", 2)
    second = bodies(mock, "openai")[1]["messages"]
    assert second[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"city": "Paris", "temp": 18}'},
    ]


def test_run_async_falls_back(mock: MockLLMServer) -> None:
    mock.enqueue_error(503, "openai")
    mock.enqueue("anthropic", text="Hi.")
    result = asyncio.run(fallback(mock).run_async("Hello", tools=[get_weather]))
    assert (result["content"], result["provider"]) == ("Hi.", "anthropic")


def test_an_empty_list_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty list"):
        create_interface([])
