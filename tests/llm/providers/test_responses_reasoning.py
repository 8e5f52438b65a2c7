"""reasoning= on the Responses API (openai-responses and azure-responses): the whole native
body for each value, refusals before sending from the model family's row, and the summary
text back as result["reasoning"] and reasoning events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

ROWS = ["openai-responses", "azure-responses"]
USER = [{"role": "user", "content": "Is 1001 prime?"}]
ENCRYPTED = ["reasoning.encrypted_content"]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def make(server: MockLLMServer, name: str, model: str) -> Any:
    server.reset()
    return create_interface(name, model=model, max_retries=0, **server.client_options(name))


def sent(server: MockLLMServer, name: str, model: str, **kwargs: Any) -> Any:
    llm = make(server, name, model)
    server.enqueue(name, text="No: 7 x 11 x 13.")
    result = llm.generate("Is 1001 prime?", **kwargs)
    assert result["content"] == "No: 7 x 11 x 13.", result.get("error")
    return server.last_request(name).body


@pytest.mark.parametrize("name", ROWS)
def test_high_is_the_reasoning_object_with_a_summary(server: MockLLMServer, name: str) -> None:
    assert sent(server, name, "gpt-5-mini", reasoning="high") == {
        "model": "gpt-5-mini",
        "input": USER,
        "store": False,
        "include": ENCRYPTED,
        "reasoning": {"effort": "high", "summary": "auto"},
    }


@pytest.mark.parametrize("name", ROWS)
def test_false_is_effort_none_where_the_family_can_turn_it_off(
    server: MockLLMServer, name: str
) -> None:
    assert sent(server, name, "gpt-5.1", reasoning=False) == {
        "model": "gpt-5.1",
        "input": USER,
        "store": False,
        "include": ENCRYPTED,
        "reasoning": {"effort": "none"},
    }


@pytest.mark.parametrize("name", ROWS)
def test_none_sends_no_reasoning_field(server: MockLLMServer, name: str) -> None:
    assert "reasoning" not in sent(server, name, "gpt-5-mini")


def test_summary_false_asks_for_no_summary(server: MockLLMServer) -> None:
    body = sent(
        server, "openai-responses", "o4-mini", reasoning={"effort": "low", "summary": False}
    )
    assert body["reasoning"] == {"effort": "low"}


def test_minimal_on_gpt_5(server: MockLLMServer) -> None:
    body = sent(server, "openai-responses", "gpt-5", reasoning="minimal")
    assert body["reasoning"] == {"effort": "minimal", "summary": "auto"}


@pytest.mark.parametrize(
    ("model", "reasoning", "message"),
    [
        ("gpt-5", False, "reasoning=False: openai gpt-5 (gpt-5) cannot turn reasoning off"),
        ("o3", "minimal", "reasoning effort 'minimal': openai o3 (o-series) does not have it"),
        ("gpt-4.1", "high", "reasoning='high': openai gpt-4.1 (gpt-4 / gpt-3.5 / chat models)"),
        ("gpt-5-mini", {"budget_tokens": 1000}, "takes no thinking budget"),
    ],
)
def test_refused_before_sending(
    server: MockLLMServer, model: str, reasoning: Any, message: str
) -> None:
    llm = make(server, "openai-responses", model)
    result = llm.generate("hi", reasoning=reasoning)
    assert result["error"]["type"] == "invalid_request"
    assert message in result["error"]["message"], result["error"]["message"]
    assert server.requests == []


@pytest.mark.parametrize("name", ROWS)
def test_the_summary_comes_back_as_reasoning_in_generate_and_stream(
    server: MockLLMServer, name: str
) -> None:
    llm = make(server, name, "gpt-5-mini")
    script = {
        "text": "No.",
        "provider_data": {
            "openai-responses": {
                "reasoning": [{"summary": ["1001 = 7 x 143."], "encrypted_content": "gAAAA"}]
            }
        },
        "usage": {"input_tokens": 9, "output_tokens": 30, "reasoning_tokens": 24},
    }
    server.enqueue(name, **script)
    server.enqueue(name, **script, fragments=2)
    generated = llm.generate("Is 1001 prime?", reasoning="low")
    events = list(llm.stream("Is 1001 prime?", reasoning="low"))
    assert generated["reasoning"] == "1001 = 7 x 143."
    assert "".join(e["text"] for e in events if e["type"] == "reasoning") == "1001 = 7 x 143."
    done = events[-1]["result"]
    assert (done["reasoning"], done["content"], done["usage"]) == (
        generated["reasoning"],
        generated["content"],
        generated["usage"],
    )
    assert generated["usage"] == {
        "input_tokens": 9,
        "output_tokens": 30,
        "cache_read_tokens": 0,
        "cache_write_tokens": None,
        "reasoning_tokens": 24,
    }
