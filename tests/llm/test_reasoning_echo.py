"""Reasoning sent back where the API needs it (issue 33): DeepSeek's thinking mode needs the
``reasoning_content`` of a turn that called tools in every later request
(https://api-docs.deepseek.com/guides/thinking_mode#tool-calls). The row's
``reasoning_echo`` trait names the field: the text is kept in ``provider_data[<row>]`` and
sent back on that row's assistant turns only; other rows keep nothing and send nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import registry
from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer

REASONING = "The user wants the time: call get_time."
TOOLS = [{"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}]
CALL = {"id": "call_1", "name": "get_time", "arguments": {}}
ECHO_ROWS = [p for p in registry.NAMES if registry.get(p).traits.reasoning_echo]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def llm(server: MockLLMServer, provider: str, fast: bool = True) -> Any:
    model = registry.get(provider).demo_model
    options = server.client_options(provider)
    return create_interface(provider, model, **options, max_retries=0, fast_path=fast)


def first_turn(client: Any, stream: bool) -> dict[str, Any]:
    if stream:
        result: dict[str, Any] = list(client.stream("Time?", tools=TOOLS))[-1]["result"]
        return result
    return dict(client.generate("Time?", tools=TOOLS))


def continue_with(server: MockLLMServer, client: Any, first: dict[str, Any]) -> dict[str, Any]:
    """The next request after the tool ran: its assistant message as sent."""
    server.enqueue(client.provider, text="Noon.")
    history = [
        {"role": "user", "content": "Time?"},
        first["message"],
        {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
    ]
    assert client.generate(history, tools=TOOLS)["content"] == "Noon."
    sent: dict[str, Any] = server.last_request(client.provider).body["messages"][1]
    return sent


def test_deepseek_is_the_row_that_needs_its_reasoning_back() -> None:
    assert ECHO_ROWS == ["deepseek"]
    assert registry.get("deepseek").traits.reasoning_echo == "reasoning_content"


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
@pytest.mark.parametrize("provider", ECHO_ROWS)
def test_the_reasoning_goes_back_on_the_turn_that_called_tools(
    server: MockLLMServer, provider: str, fast: bool, stream: bool
) -> None:
    client = llm(server, provider, fast)
    server.enqueue(provider, reasoning=REASONING, tool_calls=[CALL], fragments=3)
    first = first_turn(client, stream)
    kept = {provider: {"reasoning_content": REASONING}}
    assert (first["reasoning"], first["provider_data"]) == (REASONING, kept)
    assert first["message"]["provider_data"] == kept
    assert continue_with(server, client, first) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_time", "arguments": "{}"},
            }
        ],
        "reasoning_content": REASONING,
    }


@pytest.mark.parametrize("provider", ["openai", "xai", "vllm"])
def test_other_rows_keep_and_send_nothing(server: MockLLMServer, provider: str) -> None:
    client = llm(server, provider)
    server.enqueue(provider, reasoning=REASONING, tool_calls=[CALL])
    first = first_turn(client, stream=False)
    assert (first["reasoning"], "provider_data" in first) == (REASONING, False)
    assert "reasoning_content" not in continue_with(server, client, first)


def test_another_rows_reasoning_is_never_sent(server: MockLLMServer) -> None:
    client = llm(server, "deepseek")
    foreign = {
        "role": "assistant",
        "content": None,
        "tool_calls": [CALL],
        "provider_data": {"xai": {"reasoning_content": "not DeepSeek's"}},
    }
    assert "reasoning_content" not in continue_with(server, client, {"message": foreign})
