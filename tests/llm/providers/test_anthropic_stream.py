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
from zerda.llm import errors
from zerda.llm.providers.anthropic import AnthropicInterface
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


def test_text_only(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic",
        text="Hello there, friend.",
        fragments=4,
        usage={"input_tokens": 6, "output_tokens": 9},
    )
    events = list(llm.stream("Hi"))
    assert "".join(texts(events)) == "Hello there, friend."
    assert len(texts(events)) == 4
    assert done(events) == {
        "content": "Hello there, friend.",
        "tool_calls": [],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 6, "output_tokens": 9, **NO_DETAILS},
        "reasoning": None,
        "message": {"role": "assistant", "content": "Hello there, friend.", "tool_calls": []},
    }
    assert mock.last_request("anthropic").body == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
    }


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
    }


def test_parallel_calls_stay_apart(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    calls = [
        call("toolu_01", "get_weather", {"city": "Paris"}),
        call("toolu_02", "get_weather", {"city": "Rome"}),
        call("toolu_03", "get_time", {"city": "Oslo"}),
    ]
    mock.enqueue(
        "anthropic", text="Checking three.", tool_calls=calls, fragments=3, interleave=True
    )
    events = list(llm.stream("Go", tools=TOOLS))
    assert tool_call_events(events) == calls
    assert done(events)["tool_calls"] == calls
    assert done(events)["content"] == "Checking three."


def test_no_argument_call_is_empty_dict(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    # Anthropic streams partial_json "" for a tool without parameters.
    mock.enqueue("anthropic", tool_calls=[call("toolu_01", "get_time", {})])
    events = list(llm.stream("Time?", tools=TOOLS))
    assert tool_call_events(events) == [call("toolu_01", "get_time", {})]


def test_invalid_argument_json_is_kept_raw(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic", tool_calls=[call("toolu_01", "get_weather", '{"city": "Par')], fragments=3
    )
    events = list(llm.stream("Weather?", tools=TOOLS))
    assert tool_call_events(events) == [call("toolu_01", "get_weather", {"_raw": '{"city": "Par'})]
    assert done(events)["stop_reason"] == "tool_use"


def test_max_tokens_cut(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="Once upon a", stop_reason="max_tokens", fragments=2)
    result = done(list(llm.stream("Story", max_tokens=3)))
    assert (result["content"], result["stop_reason"]) == ("Once upon a", "max_tokens")
    assert mock.last_request("anthropic").body["max_tokens"] == 3


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

SCRIPTS = {
    "text": {"text": "Plain answer.", "fragments": 3},
    "fragments": {
        "tool_calls": [call("toolu_1", "get_weather", {"city": "Lyon", "n": [1, 2]})],
        "fragments": 5,
    },
    "parallel": {
        "text": "Two.",
        "tool_calls": [
            call("toolu_1", "get_weather", {"city": "Lyon"}),
            call("toolu_2", "get_time", {}),
        ],
        "fragments": 2,
    },
    "no_args": {"tool_calls": [call("toolu_1", "get_time", {})]},
    "invalid_json": {"tool_calls": [call("toolu_1", "get_time", "{not json")]},
    "max_tokens": {"text": "Cut off", "stop_reason": "max_tokens"},
    "stop_sequence": {"text": "Until", "stop_reason": "stop_sequence"},
    "refusal": {"text": "No.", "stop_reason": "content_filter"},
    "pause_turn": {"text": "Paused", "native_stop_reason": "pause_turn"},
    "thinking": {
        "provider_data": {"anthropic": {"thinking": THINKING}},
        "tool_calls": [call("toolu_1", "get_weather", {"city": "Nice"})],
        "fragments": 4,
    },
    "usage": {"text": "Counted.", "usage": {"input_tokens": 123, "output_tokens": 45}},
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


def test_dropped_connection_keeps_partial_text(
    llm: AnthropicInterface, mock: MockLLMServer
) -> None:
    # message_start, content_block_start, ping, 2 deltas... then the connection drops.
    mock.enqueue("anthropic", text="abcdefgh", fragments=4, cut_after=5)
    events = list(llm.stream("Hi"))
    result = done(events)
    assert result["content"] == "".join(texts(events)) == "abcd"
    assert (result["stop_reason"], result["tool_calls"], result["message"]) == ("error", [], None)
    assert result["error"]["type"] == "connection"
    assert result["error"]["retryable"] is True


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


def test_http_error_before_the_stream(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue_error(429, "anthropic", message="slow down")
    events = list(llm.stream("Hi"))
    assert events == [
        {
            "type": "done",
            "result": {
                "content": None,
                "tool_calls": [],
                "stop_reason": "error",
                "usage": None,
                "reasoning": None,
                "message": None,
                "error": {
                    "type": "rate_limit",
                    "message": "slow down",
                    "status_code": 429,
                    "provider": "anthropic",
                    "retryable": True,
                },
            },
        }
    ]


def test_bad_input_streams_only_done(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    events = list(llm.stream("Hi", tools=TOOLS, tool_choice="get_stock"))
    assert len(events) == 1
    assert done(events)["error"]["type"] == "invalid_request"
    assert mock.requests == []


def test_raise_errors_raises_after_yielding_what_arrived(
    llm: AnthropicInterface, mock: MockLLMServer
) -> None:
    mock.enqueue(
        "anthropic",
        text="abcdefgh",
        fragments=4,
        cut_after=5,
        stream_error={"status": 529, "message": "Overloaded"},
    )
    seen: list[dict[str, Any]] = []
    with pytest.raises(errors.ServerError) as info:
        for event in llm.stream("Hi", raise_errors=True):
            seen.append(event)
    assert seen == [{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}]
    assert info.value.provider == "anthropic"


async def test_async_fault_keeps_partial_text(
    fresh_llm: AnthropicInterface, mock: MockLLMServer
) -> None:
    mock.enqueue(
        "anthropic",
        text="abcdefgh",
        fragments=4,
        cut_after=5,
        stream_error={"status": 529, "message": "Overloaded"},
    )
    result = done(await collect_async(fresh_llm, "Hi"))
    assert (result["content"], result["error"]["type"]) == ("abcd", "server")
    mock.enqueue("anthropic", text="abcdefgh", fragments=4, cut_after=5)
    result = done(await collect_async(fresh_llm, "Hi"))
    assert (result["content"], result["error"]["type"]) == ("abcd", "connection")


async def test_async_raise_errors(fresh_llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic",
        text="abcd",
        fragments=2,
        cut_after=4,
        stream_error={"status": 529, "message": "Overloaded"},
    )
    seen: list[dict[str, Any]] = []
    with pytest.raises(errors.ServerError):
        async for event in fresh_llm.stream_async("Hi", raise_errors=True):
            seen.append(event)
    assert seen == [{"type": "text", "text": "ab"}]


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
    original_create = client.messages.create

    async def create(**kwargs: Any) -> Any:
        stream = await original_create(**kwargs)
        responses.append(stream.response)
        return stream

    monkeypatch.setattr(client.messages, "create", create)
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
    with raw.messages.stream(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "replay"}]
    ) as stream:
        final = stream.get_final_message()
    assert result == llm._map_response(final)
