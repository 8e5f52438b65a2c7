"""Scripts that need no provider's own data (issue 33): ``enqueue(..., reasoning=...)`` in
every wire's native shape, JSON and streams, read back as ``result["reasoning"]`` on every
registry row (through the real SDKs, fast path on and off), and sent back by the next turn
where the provider needs it; ``enqueue_recorded(provider, fixture)`` in ``enqueue``'s order
(keywords, and the older order, too)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import registry
from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer

REASONING = "The user asks for the time; the tool knows it."
TOOLS = [{"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}]


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


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
@pytest.mark.parametrize("provider", registry.NAMES)
def test_scripted_reasoning_comes_back_from_generate_and_stream(
    server: MockLLMServer, provider: str, fast: bool
) -> None:
    client = llm(server, provider, fast)
    server.enqueue(provider, reasoning=REASONING, text="Noon.")
    generated = client.generate("Time?")
    server.enqueue(provider, reasoning=REASONING, text="Noon.", fragments=3)
    events = list(client.stream("Time?"))
    done = events[-1]["result"]
    assert (generated["reasoning"], generated["content"]) == (REASONING, "Noon.")
    assert (done["reasoning"], done["content"]) == (REASONING, "Noon.")
    pieces = [e["text"] for e in events if e["type"] == "reasoning"]
    assert ("".join(pieces), len(pieces)) == (REASONING, 3)
    # The reasoning comes first, as every provider sends it.
    kinds = [e["type"] for e in events if e["type"] in ("reasoning", "text")]
    assert kinds == ["reasoning"] * 3 + ["text"] * 3


@pytest.mark.parametrize("provider", registry.NAMES)
def test_a_tool_turn_with_reasoning_continues_on_the_strict_mock(
    server: MockLLMServer, provider: str
) -> None:
    """The turn's reasoning (signed thinking, reasoning items, reasoningContent...) goes back
    as the provider needs it, and the strict mock takes the request."""
    client = llm(server, provider)
    server.enqueue(
        provider, reasoning=REASONING, tool_calls=[{"name": "get_time", "arguments": {}}]
    )
    server.enqueue(provider, text="Noon.")
    first = client.generate("Time?", tools=TOOLS)
    assert (first["reasoning"], first["stop_reason"]) == (REASONING, "tool_use")
    call = first["tool_calls"][0]
    history = [
        {"role": "user", "content": "Time?"},
        first["message"],
        {"role": "tool", "tool_call_id": call["id"], "content": "12:00"},
    ]
    second = client.generate(history, tools=TOOLS)
    assert (second["content"], server.last_request(provider).rejected_by) == ("Noon.", None)


def test_provider_data_wins_over_the_reasoning_field(server: MockLLMServer) -> None:
    block = {"type": "thinking", "thinking": "From provider_data.", "signature": "c2ln"}
    server.enqueue(
        "anthropic",
        reasoning="ignored",
        text="Hi",
        provider_data={"anthropic": {"thinking": [block]}},
    )
    result = llm(server, "anthropic").generate("hi")
    assert result["reasoning"] == "From provider_data."
    assert result["provider_data"] == {"anthropic": {"thinking": [block]}}


# --- enqueue_recorded's order ---------------------------------------------------------------

RECORDING = {
    "response": {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "body": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": "Recorded."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2},
        },
        "body_encoding": "json",
    }
}


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("anthropic", RECORDING), {}),  # enqueue's order
        ((), {"provider": "anthropic", "fixture": RECORDING}),
        ((), {"fixture": RECORDING, "provider": "anthropic"}),
        (("anthropic",), {"fixture": RECORDING}),
        ((RECORDING, "anthropic"), {}),  # the older order
        ((RECORDING,), {"provider": "anthropic"}),
    ],
    ids=[
        "provider-first",
        "keywords",
        "keywords-reversed",
        "provider-then-keyword",
        "old",
        "old-keyword",
    ],
)
def test_enqueue_recorded_takes_the_provider_first_and_the_old_order(
    server: MockLLMServer, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    raw = server.enqueue_recorded(*args, **kwargs)
    assert (server.pending("anthropic"), server.pending()) == (1, 0)
    assert raw.status == 200
    assert llm(server, "anthropic").generate("hi")["content"] == "Recorded."


def test_enqueue_recorded_without_a_provider_uses_the_shared_queue(server: MockLLMServer) -> None:
    server.enqueue_recorded(None, RECORDING, chunk_size=None)
    server.enqueue_recorded(RECORDING)
    assert (server.pending(), server.pending("anthropic")) == (2, 0)


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        (("anthropic",), {}, "give exactly one fixture dict"),
        ((RECORDING, RECORDING), {}, "give exactly one fixture dict"),
        (("anthropic", "openai"), {"fixture": RECORDING}, "give at most one provider"),
        (("anthropic", RECORDING, 512), {}, "got 3 positional arguments"),
        (("anthropic", RECORDING), {"provider": "openai"}, "give at most one provider"),
        ((RECORDING, 512), {}, "give at most one provider, as a name"),
    ],
)
def test_enqueue_recorded_refuses_what_it_cannot_tell_apart(
    server: MockLLMServer, args: tuple[Any, ...], kwargs: dict[str, Any], says: str
) -> None:
    with pytest.raises(TypeError, match=says):
        server.enqueue_recorded(*args, **kwargs)
    assert server.pending() == 0


def test_enqueue_recorded_names_an_unknown_provider(server: MockLLMServer) -> None:
    with pytest.raises(ValueError, match="unknown provider 'antropic'"):
        server.enqueue_recorded("antropic", RECORDING)
