"""Budgets, stop_on and final_answer (docs/loop.md, "Budgets and stops"): a budget reached
ends the loop with ``stop_reason: "budget"`` and nothing lost, ``stop_on`` ends it after those
tools ran, and ``final_answer=True`` makes one last turn with tools disabled, so the caller
gets an answer and the history has no call without a result."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.loop_support import (
    ID_A,
    ID_B,
    ID_C,
    ROWS,
    WEATHER_PARIS,
    answered,
    call,
    get_weather,
    llm_for,
    unanswered_calls,
)
from zerda.testing import MockLLMServer


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def mock(server: MockLLMServer) -> Iterator[MockLLMServer]:
    server.reset()
    yield server
    server.reset()


def submit(answer: str) -> str:
    """Hands in the final answer."""
    return f"received {answer}"


def paris(call_id: str) -> dict[str, Any]:
    return call("get_weather", call_id, city="Paris")


def spy(llm: Any, cost: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Records the keyword arguments of each turn's generate (and sets each turn's cost)."""
    seen: list[dict[str, Any]] = []
    generate = llm.generate

    def recorded(messages: Any, **kwargs: Any) -> dict[str, Any]:
        seen.append(kwargs)
        result: dict[str, Any] = generate(messages, **kwargs)
        return result if cost is None else {**result, "cost": cost}

    llm.generate = recorded
    return seen


# --- budgets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ROWS)
def test_the_tool_call_budget_skips_the_calls_past_it_and_ends_the_loop(
    mock: MockLLMServer, provider: str
) -> None:
    mock.enqueue(provider, tool_calls=[paris(ID_A), paris(ID_B)])
    mock.enqueue(provider, tool_calls=[paris(ID_C), call("get_weather", "stuVWX012", city="Oslo")])
    result = llm_for(mock, provider).run("Go", tools=[get_weather], budget={"tool_calls": 3})
    skipped = "Not run: this run's budget of 3 tool calls is used up."
    assert answered(result) == [(WEATHER_PARIS, False)] * 3 + [(skipped, True)]
    assert (result["stop_reason"], result["turns"]) == ("budget", 2)
    assert unanswered_calls(result["messages"]) == []  # nothing lost: ready to continue
    assert len(mock.requests_for(provider)) == 2


@pytest.mark.parametrize(
    ("budget", "turns"),
    [
        ({"input_tokens": 20}, 2),
        ({"output_tokens": 3}, 1),
        ({"output_tokens": 4}, 2),
        ({"total_tokens": 26}, 2),
        ({"total_tokens": 27}, 3),
        ({"tool_calls": 1, "input_tokens": 1000}, 1),
    ],
)
def test_a_token_budget_ends_the_loop_once_reached(
    mock: MockLLMServer, budget: dict[str, int], turns: int
) -> None:
    for _ in range(3):
        mock.enqueue(
            "anthropic", tool_calls=[paris(ID_A)], usage={"input_tokens": 10, "output_tokens": 3}
        )
    mock.enqueue("anthropic", text="Done.", usage={"input_tokens": 10, "output_tokens": 3})
    result = llm_for(mock, "anthropic").run("Go", tools=[get_weather], budget=budget)
    assert (result["stop_reason"], result["turns"]) == ("budget", turns)
    assert len(answered(result)) == turns and unanswered_calls(result["messages"]) == []


def test_an_answer_within_the_budget_is_not_a_budget_stop(mock: MockLLMServer) -> None:
    mock.enqueue("openai", text="Hello.", usage={"input_tokens": 50, "output_tokens": 50})
    result = llm_for(mock, "openai").run("Hi", tools=[get_weather], budget={"total_tokens": 10})
    assert (result["stop_reason"], result["content"]) == ("end_turn", "Hello.")


def test_cost_is_summed_and_the_cost_budget_uses_the_sum(mock: MockLLMServer) -> None:
    llm = llm_for(mock, "openai")
    spy(llm, cost={"input": 0.25, "output": 0.5, "total": 0.75, "currency": "USD"})
    for _ in range(3):
        mock.enqueue("openai", tool_calls=[paris(ID_A)])
    result = llm.run("Go", tools=[get_weather], budget={"cost": 1.5})
    assert (result["stop_reason"], result["turns"]) == ("budget", 2)
    assert result["cost"] == {"input": 0.5, "output": 1.0, "total": 1.5, "currency": "USD"}


def test_the_cost_is_none_only_when_every_turns_cost_is(mock: MockLLMServer) -> None:
    llm = llm_for(mock, "openai")
    costs = iter([None, {"input": 0.1, "output": 0.2, "total": 0.3, "currency": "USD"}])
    generate = llm.generate
    llm.generate = lambda m, **k: {**generate(m, **k), "cost": next(costs)}
    mock.enqueue("openai", tool_calls=[paris(ID_A)])
    mock.enqueue("openai", text="Done.")
    result = llm.run("Go", tools=[get_weather])
    assert result["cost"] == {"input": 0.1, "output": 0.2, "total": 0.3, "currency": "USD"}
    generate_only = llm_for(mock, "openai")
    generate_plain = generate_only.generate
    generate_only.generate = lambda m, **k: {
        key: v for key, v in generate_plain(m, **k).items() if key != "cost"
    }
    mock.enqueue("openai", text="Hi.")
    assert generate_only.run("Hi")["cost"] is None  # a missing cost counts as unknown


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (
            {"tokens": 5},
            r"budget: unknown key 'tokens' \(keys: tool_calls, input_tokens, output_tokens, "
            r"total_tokens, cost\)",
        ),
        ({"cost": -1}, r"budget\['cost'\] must be a number of at least 0"),
        ({"tool_calls": "3"}, r"budget\['tool_calls'\] must be a number of at least 0"),
        (5, "budget must be a dict"),
    ],
)
def test_a_bad_budget_is_refused_before_anything_is_sent(
    mock: MockLLMServer, budget: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        llm_for(mock, "openai").run("Go", tools=[get_weather], budget=budget)
    assert mock.requests_for("openai") == []


# --- stop_on ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ROWS)
def test_stop_on_ends_the_loop_after_those_tools_ran(mock: MockLLMServer, provider: str) -> None:
    mock.enqueue(provider, tool_calls=[paris(ID_A), call("submit", ID_B, answer="42")])
    result = llm_for(mock, provider).run("Go", tools=[get_weather, submit], stop_on=["submit"])
    assert answered(result) == [(WEATHER_PARIS, False), ("received 42", False)]
    assert (result["stop_reason"], result["turns"]) == ("tool_use", 1)
    assert result["tool_calls"][1]["arguments"] == {"answer": "42"}
    assert len(mock.requests_for(provider)) == 1


def test_a_stop_on_tool_that_failed_does_not_stop_the_loop(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("submit", ID_A, wrong="x")])
    mock.enqueue("openai", tool_calls=[call("submit", ID_B, answer="42")])
    result = llm_for(mock, "openai").run("Go", tools=[submit], stop_on=["submit"])
    assert [is_error for _, is_error in answered(result)] == [True, False]
    assert result["turns"] == 2


@pytest.mark.parametrize(
    ("stop_on", "message"),
    [
        (["sumbit"], r"stop_on: 'sumbit' is not one of the tools \(get_weather, submit\)"),
        ("submit", "stop_on must be a list of tool names"),
    ],
)
def test_a_bad_stop_on_is_refused(mock: MockLLMServer, stop_on: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        llm_for(mock, "openai").run("Go", tools=[get_weather, submit], stop_on=stop_on)
    assert mock.requests_for("openai") == []


# --- final_answer -----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ROWS)
def test_final_answer_at_max_turns_asks_once_more_with_tools_disabled(
    mock: MockLLMServer, provider: str
) -> None:
    llm = llm_for(mock, provider)
    seen = spy(llm)
    mock.enqueue(provider, tool_calls=[paris(ID_A)])
    mock.enqueue(provider, text="Sunny, 18.")
    result = llm.run("Weather?", tools=[get_weather], max_turns=1, final_answer=True)
    assert (result["content"], result["stop_reason"], result["turns"]) == (
        "Sunny, 18.",
        "end_turn",
        2,
    )
    assert [k.get("tool_choice") for k in seen] == [None, "none"]
    assert [m["role"] for m in result["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert unanswered_calls(result["messages"]) == []


@pytest.mark.parametrize("provider", ROWS)
def test_final_answer_after_a_budget_keeps_the_budget_stop(
    mock: MockLLMServer, provider: str
) -> None:
    mock.enqueue(provider, tool_calls=[paris(ID_A)])
    mock.enqueue(provider, text="Sunny.")
    result = llm_for(mock, provider).run(
        "Weather?", tools=[get_weather], budget={"tool_calls": 1}, final_answer=True
    )
    assert (result["content"], result["stop_reason"], result["turns"]) == ("Sunny.", "budget", 2)


def test_a_call_the_row_lets_through_anyway_is_answered_and_the_model_asked_again(
    mock: MockLLMServer,
) -> None:
    # A row that cannot enforce tool_choice "none" (Bedrock with tool calls in the history,
    # a compatible server that ignores it) may still call a tool in the final turn.
    llm = llm_for(mock, "bedrock")
    seen = spy(llm)
    mock.enqueue("bedrock", tool_calls=[paris(ID_A)])
    mock.enqueue("bedrock", tool_calls=[paris(ID_B)])
    mock.enqueue("bedrock", text="Sunny.")
    result = llm.run("Weather?", tools=[get_weather], max_turns=1, final_answer=True)
    assert (result["content"], result["turns"]) == ("Sunny.", 3)
    assert [k.get("tool_choice") for k in seen] == [None, "none", "none"]
    assert answered(result) == [
        (WEATHER_PARIS, False),
        ("Not run: this run takes no more tool calls. Answer with what you have now.", True),
    ]
    assert unanswered_calls(result["messages"]) == []


def test_without_final_answer_max_turns_returns_the_last_tool_use_as_before(
    mock: MockLLMServer,
) -> None:
    mock.enqueue("openai", tool_calls=[paris(ID_A)])
    result = llm_for(mock, "openai").run("Weather?", tools=[get_weather], max_turns=1)
    assert (result["stop_reason"], result["content"], result["turns"]) == ("tool_use", None, 1)
    assert answered(result) == [(WEATHER_PARIS, False)]
