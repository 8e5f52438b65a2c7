"""AnthropicInterface.stream / stream_async (DESIGN.md §7, issue 6) against MockLLMServer's
SSE and the real anthropic SDK: assembly per content block, thinking, faults mid-stream,
closing, and the invariant that the done result equals generate's result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.llm.providers.histories import TOOLS
from tests.llm.providers.test_anthropic import THINKING, assert_matches_recording, call
from zerda.llm.wires.anthropic.interface import AnthropicInterface
from zerda.testing import MockLLMServer

MODEL = "claude-test"
FIXTURES = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded" / "anthropic"
)

# The mock reports no cache use (Anthropic's zero cache counts) and no thinking count.
NO_DETAILS = {"cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": None}


@pytest.fixture(scope="module")
def server() -> Any:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def mock(server: MockLLMServer) -> MockLLMServer:
    server.reset()
    return server


@pytest.fixture(scope="module")
def shared_llm(server: MockLLMServer) -> AnthropicInterface:
    return AnthropicInterface(MODEL, max_retries=0, **server.client_options("anthropic"))


@pytest.fixture
def llm(mock: MockLLMServer, shared_llm: AnthropicInterface) -> AnthropicInterface:
    return shared_llm


@pytest.fixture
def fresh_llm(mock: MockLLMServer) -> AnthropicInterface:
    """A new interface: an async SDK client is bound to the event loop of its first call."""
    return AnthropicInterface(MODEL, max_retries=0, **mock.client_options("anthropic"))


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["type"] == "text"]


def tool_call_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["tool_call"] for e in events if e["type"] == "tool_call"]


def done(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "done"
    assert [e["type"] for e in events].count("done") == 1
    result: dict[str, Any] = events[-1]["result"]
    return result


async def collect_async(llm: AnthropicInterface, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    return [e async for e in llm.stream_async(*args, **kwargs)]


# --- assembly -----------------------------------------------------------------------------


def test_one_call_in_many_fragments(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    arguments = {"city": "Paris", "units": "metric", "days": [1, 2, 3]}
    mock.enqueue("anthropic", tool_calls=[call("toolu_01", "get_weather", arguments)], fragments=7)
    events = list(llm.stream("Weather?", tools=TOOLS))
    assert [e["type"] for e in events] == ["tool_call_delta"] * 7 + ["tool_call", "done"]
    assert tool_call_events(events) == [call("toolu_01", "get_weather", arguments)]
    assert done(events) == {
        "content": None,
        "tool_calls": [call("toolu_01", "get_weather", arguments)],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 5, **NO_DETAILS},
        "reasoning": None,
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("toolu_01", "get_weather", arguments)],
        },
        "cost": None,  # claude-test has no price
    }


def test_invalid_argument_json_is_kept_raw(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic", tool_calls=[call("toolu_01", "get_weather", '{"city": "Par')], fragments=3
    )
    events = list(llm.stream("Weather?", tools=TOOLS))
    assert tool_call_events(events) == [call("toolu_01", "get_weather", {"_raw": '{"city": "Par'})]
    assert done(events)["stop_reason"] == "tool_use"


def test_thinking_goes_to_provider_data(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic",
        text="Checking.",
        tool_calls=[call("toolu_01", "get_weather", {"city": "Paris"})],
        provider_data={"anthropic": {"thinking": THINKING}},
        fragments=3,
    )
    events = list(llm.stream("Weather?", tools=TOOLS))
    assert texts(events) == ["Che", "cki", "ng."]
    result = done(events)
    assert result["provider_data"] == {"anthropic": {"thinking": THINKING}}
    assert result["message"]["provider_data"] == {"anthropic": {"thinking": THINKING}}
    assert result["content"] == "Checking."


# --- the invariant: done == generate ------------------------------------------------------

# The scripts every provider shares are the contract's (contract.py); Anthropic's own: nested
# arguments in many partial_json pieces, broken JSON, its stop reasons, thinking.
SCRIPTS = {
    "fragments": {
        "tool_calls": [call("toolu_1", "get_weather", {"city": "Lyon", "n": [1, 2]})],
        "fragments": 5,
    },
    "invalid_json": {"tool_calls": [call("toolu_1", "get_time", "{not json")]},
    "stop_sequence": {"text": "Until", "stop_reason": "stop_sequence"},
    "refusal": {"text": "No.", "stop_reason": "content_filter"},
    "pause_turn": {"text": "Paused", "native_stop_reason": "pause_turn"},
    "thinking": {
        "provider_data": {"anthropic": {"thinking": THINKING}},
        "tool_calls": [call("toolu_1", "get_weather", {"city": "Nice"})],
        "fragments": 4,
    },
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_done_equals_generate(llm: AnthropicInterface, mock: MockLLMServer, name: str) -> None:
    mock.enqueue("anthropic", **SCRIPTS[name])
    mock.enqueue("anthropic", **SCRIPTS[name])
    generated = llm.generate("Go", tools=TOOLS, stop=["END"])
    events = list(llm.stream("Go", tools=TOOLS, stop=["END"]))
    assert done(events) == generated
    assert tool_call_events(events) == generated["tool_calls"]
    assert "".join(texts(events)) == (generated["content"] or "")


@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_done_equals_generate_async(
    fresh_llm: AnthropicInterface, mock: MockLLMServer, name: str
) -> None:
    mock.enqueue("anthropic", **SCRIPTS[name])
    mock.enqueue("anthropic", **SCRIPTS[name])
    generated = await fresh_llm.generate_async("Go", tools=TOOLS, stop=["END"])
    events = await collect_async(fresh_llm, "Go", tools=TOOLS, stop=["END"])
    assert done(events) == generated
    assert tool_call_events(events) == generated["tool_calls"]


# --- faults -------------------------------------------------------------------------------


def test_overloaded_error_event_keeps_partial_text(
    llm: AnthropicInterface, mock: MockLLMServer
) -> None:
    mock.enqueue(
        "anthropic",
        text="abcdefgh",
        fragments=4,
        cut_after=5,
        stream_error={"status": 529, "message": "Overloaded"},
    )
    events = list(llm.stream("Hi"))
    assert done(events) == {
        "content": "abcd",
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": None,
        "message": None,
        "cost": None,
        "error": {
            "type": "server",
            "message": "overloaded_error: Overloaded",
            "status_code": None,
            "provider": "anthropic",
            "retryable": True,
        },
    }


def test_cut_inside_a_tool_call_emits_no_call(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic",
        text="ab",
        tool_calls=[call("toolu_1", "get_weather", {"city": "Paris"})],
        fragments=2,
        cut_after=7,
    )
    events = list(llm.stream("Hi", tools=TOOLS))
    assert tool_call_events(events) == []
    assert done(events)["content"] == "ab"
    assert done(events)["stop_reason"] == "error"


# --- closing ------------------------------------------------------------------------------


def test_breaking_out_closes_the_response(
    llm: AnthropicInterface, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    streams: list[Any] = []
    original = llm._open_stream
    monkeypatch.setattr(
        llm, "_open_stream", lambda kwargs: streams.append(original(kwargs)) or streams[-1]
    )
    mock.enqueue("anthropic", text="one two three four five six", fragments=6, chunk_delay=0.02)
    events = llm.stream("Hi")
    assert next(events) == {"type": "text", "text": "one t"}
    assert streams[0].response.is_closed is False
    events.close()
    assert streams[0].response.is_closed is True


async def test_breaking_out_closes_the_async_response(
    fresh_llm: AnthropicInterface, mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    responses: list[Any] = []
    client = fresh_llm.async_client
    original_post = client.post

    async def post(*args: Any, **kwargs: Any) -> Any:
        stream = await original_post(*args, **kwargs)
        responses.append(stream.response)
        return stream

    monkeypatch.setattr(client, "post", post)
    mock.enqueue("anthropic", text="one two three four five six", fragments=6, chunk_delay=0.02)
    events = fresh_llm.stream_async("Hi")
    async for event in events:
        assert event == {"type": "text", "text": "one t"}
        break
    assert responses[0].is_closed is False
    await events.aclose()
    assert responses[0].is_closed is True


# --- recorded streams ---------------------------------------------------------------------


def _recorded_streams() -> list[Any]:
    if not FIXTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared/fixtures is absent"))]
    files = sorted(FIXTURES.glob("*.json"))
    return [pytest.param(f, id=f.stem) for f in files if json.loads(f.read_text())["streaming"]]


@pytest.mark.parametrize("path", _recorded_streams())
def test_recorded_stream(llm: AnthropicInterface, mock: MockLLMServer, path: Path) -> None:
    import anthropic

    fixture = json.loads(path.read_text())
    mock.enqueue_recorded(fixture, "anthropic")
    events = list(llm.stream("replay"))
    result = done(events)
    assert_matches_recording(result, fixture)
    assert tool_call_events(events) == result["tool_calls"]  # one event per call
    assert "".join(texts(events)) == (result["content"] or "")
    # The same response as the SDK itself assembles it, mapped as generate maps a message.
    mock.enqueue_recorded(fixture, "anthropic")
    raw = anthropic.Anthropic(**mock.sdk_client_kwargs("anthropic"), max_retries=0)
    # An MCP connector's mcp_tool_use is a beta block: only the beta accumulator assembles
    # its input (lib/streaming/_beta_messages.py's TRACKS_TOOL_INPUT).
    messages = raw.beta.messages if "mcp_tool_use" in fixture["response"]["body"] else raw.messages
    with messages.stream(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "replay"}]
    ) as stream:
        final = stream.get_final_message()
    assert result == llm._map_response(final)
