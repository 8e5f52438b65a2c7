"""openai-responses: the Responses API through the openai SDK against MockLLMServer and the
recorded real exchanges (ZERDA_FIXTURES, else ../shared/fixtures beside the checkout)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import create_interface, registry, tool_result
from zerda.llm.errors import error_class_for_status
from zerda.llm.tools import _parse_json_arguments
from zerda.testing import MockLLMServer

NAME = "openai-responses"
FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
RECORDED = Path(os.environ.get("ZERDA_FIXTURES") or FIXTURES) / "recorded" / NAME
FILES = sorted(RECORDED.glob("*.json")) if RECORDED.is_dir() else []
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
REASONING = {"reasoning": [{"summary": ["Look it up."], "encrypted_content": "gAAAAsecret"}]}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def llm(server: MockLLMServer) -> Any:
    server.reset()
    return make(server)


@pytest.fixture(scope="module")
def replayer(server: MockLLMServer) -> Iterator[Any]:
    """One interface for every recording: an interface serves many calls, and building its
    SDK client for each of them would cost more than the replay."""
    llm = make(server)
    yield llm
    llm.close()


def make(server: MockLLMServer, name: str = NAME, model: str = "gpt-5-mini") -> Any:
    return create_interface(name, model=model, max_retries=0, **server.client_options(name))


def body(server: MockLLMServer, name: str = NAME) -> Any:
    return server.last_request(name).body


# --- recorded exchanges --------------------------------------------------------------------

# status as the recordings' derived finish_reason writes it -> Zerda's stop reason.
_STOPS = {"completed": "end_turn", "queued": "other", "incomplete:max_output_tokens": "max_tokens"}


def _params() -> list[Any]:
    if not FILES:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [pytest.param(f, id=f.stem) for f in FILES]


def expected(fixture: dict[str, Any]) -> dict[str, Any]:
    derived = fixture["derived"]
    calls = [
        {"id": c["id"], "name": c["name"], "arguments": _parse_json_arguments(c["arguments"])}
        for c in derived["tool_calls"]
    ]
    usage = derived["usage_norm"]
    return {
        "content": derived["text"] or None,
        "tool_calls": calls,
        "stop_reason": "tool_use" if calls else _STOPS[derived["finish_reason"]],
        "reasoning": derived["reasoning_text"] or None,
        # A queued (background) response has no usage at all: None, not five Nones.
        "usage": usage if any(v is not None for v in usage.values()) else None,
    }


async def _replay(llm: Any, fixture: dict[str, Any], mode: str) -> dict[str, Any]:
    if not fixture["streaming"]:
        return llm.generate("recorded") if mode == "sync" else await llm.generate_async("x")
    if mode == "sync":
        events = list(llm.stream("recorded"))
    else:
        events = [e async for e in llm.stream_async("recorded")]
    result: dict[str, Any] = events[-1]["result"]
    assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == result["tool_calls"]
    shown = "".join(e["text"] for e in events if e["type"] == "reasoning")
    assert (shown or None) == result.get("reasoning")
    assert ("".join(e["text"] for e in events if e["type"] == "text") or None) == result["content"]
    return result


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("path", _params())
async def test_recorded_exchange_replays_to_its_derived_values(
    server: MockLLMServer, replayer: Any, path: Path, mode: str
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    server.reset()
    server.enqueue_recorded(fixture, provider=NAME)
    result = await _replay(replayer, fixture, mode)
    status = fixture["response"]["status"]
    if status >= 400:
        assert result["stop_reason"] == "error"
        assert result["error"]["type"] == error_class_for_status(status).type
        assert result["error"]["status_code"] == status
        assert result["error"]["message"] == fixture["derived"]["error"]["message"]
        return
    assert {
        k: result[k] for k in ("content", "tool_calls", "stop_reason", "reasoning", "usage")
    } == (expected(fixture))


def test_every_recorded_exchange_is_served_under_its_own_prefix() -> None:
    if not FILES:
        pytest.skip(f"{RECORDED} is absent")
    paths = {json.loads(f.read_text(encoding="utf-8"))["request"]["path"] for f in FILES}
    assert paths == {"/v1/responses"}
    assert len(FILES) == 227


# --- requests ----------------------------------------------------------------------------


def test_a_tool_round_trip_sends_exactly_these_bodies(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(
        NAME,
        tool_calls=[{"id": "call_abc", "name": "get_weather", "arguments": {"city": "Paris"}}],
        provider_data={NAME: REASONING},
    )
    server.enqueue(NAME, text="18°C in Paris.")
    first = llm.generate(
        "Weather in Paris?", system="Be terse.", tools=[WEATHER], tool_choice="auto", max_tokens=300
    )
    assert body(server) == {
        "model": "gpt-5-mini",
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "instructions": "Be terse.",
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "parameters": WEATHER["parameters"],
                "strict": False,
                "description": "Current weather for a city.",
            }
        ],
        "tool_choice": "auto",
        "max_output_tokens": 300,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    items = first["message"]["provider_data"][NAME]["items"]
    reasoning_id, call_item_id = items[0]["id"], items[1]["id"]
    assert items == [
        {
            "id": reasoning_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Look it up."}],
            "encrypted_content": "gAAAAsecret",
        },
        {"type": "function_call", "id": call_item_id, "call_id": "call_abc"},
    ]
    assert first["reasoning"] == "Look it up."
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        first["message"],
        tool_result(first["tool_calls"][0], {"temp_c": 18}),
    ]
    second = llm.generate(history, system="Be terse.", tools=[WEATHER])
    assert second["content"] == "18°C in Paris."
    sent = body(server)
    assert sent["input"] == [
        {"role": "user", "content": "Weather in Paris?"},
        items[0],
        {
            "type": "function_call",
            "call_id": "call_abc",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "id": call_item_id,
        },
        {"type": "function_call_output", "call_id": "call_abc", "output": '{"temp_c": 18}'},
    ]
    assert (sent["store"], sent["include"]) == (False, ["reasoning.encrypted_content"])


def test_named_tool_choice_and_parallel_calls_off(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, text="ok")
    llm.generate("hi", tools=[WEATHER], tool_choice="get_weather", parallel_tool_calls=False)
    sent = body(server)
    assert sent["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert sent["parallel_tool_calls"] is False


def test_models_that_do_not_reason_are_not_asked_for_encrypted_reasoning(
    server: MockLLMServer,
) -> None:
    server.reset()
    for model in ("gpt-4o-mini", "gpt-4.1", "gpt-5-chat-latest"):
        server.enqueue(NAME, text="ok")
        make(server, model=model).generate("hi")
        assert body(server) == {
            "model": model,
            "input": [{"role": "user", "content": "hi"}],
            "store": False,
        }


def test_native_options_override_the_defaults(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, text="ok")
    llm.generate("hi", store=True, include=[], truncation="auto")
    sent = body(server)
    assert (sent["store"], sent["include"], sent["truncation"]) == (True, [], "auto")


def test_stop_sequences_are_refused_before_sending(server: MockLLMServer, llm: Any) -> None:
    result = llm.generate("hi", stop=["END"])
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"] == (
        "stop: openai-responses has no stop sequences, so they cannot be honoured"
    )
    assert server.requests_for(NAME) == []


def test_an_assistant_turn_from_elsewhere_is_sent_as_plain_items(
    server: MockLLMServer, llm: Any
) -> None:
    server.enqueue(NAME, text="ok")
    history = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [{"id": None, "name": "get_weather", "arguments": {}}],
            "provider_data": {"anthropic": {"thinking": [{"type": "thinking", "thinking": "x"}]}},
        },
        {"role": "tool", "tool_call_id": None, "content": "sunny"},
    ]
    llm.generate(history, tools=[WEATHER])
    assert body(server)["input"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "call_1_0", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1_0", "output": "sunny"},
    ]


def test_messages_keep_their_item_ids_after_reasoning(server: MockLLMServer, llm: Any) -> None:
    # "Item 'rs_…' of type 'reasoning' was provided without its required following item"
    # (a recorded 400): the message after a reasoning item goes back with its own id.
    server.enqueue(NAME, text="42.", provider_data={NAME: REASONING})
    server.enqueue(NAME, text="ok")
    first = llm.generate("Meaning of life?")
    message_id = first["message"]["provider_data"][NAME]["items"][1]["id"]
    history = [
        {"role": "user", "content": "Meaning of life?"},
        first["message"],
        {"role": "user", "content": "More?"},
    ]
    llm.generate(history)
    assert body(server)["input"][2] == {
        "type": "message",
        "id": message_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "42.", "annotations": []}],
    }


# --- responses and streams --------------------------------------------------------------


def test_generate_and_stream_give_the_same_result(server: MockLLMServer, llm: Any) -> None:
    script = {
        "text": "Let me check.",
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}],
        "provider_data": {NAME: REASONING},
        "usage": {"input_tokens": 12, "output_tokens": 7},
        "fragments": 3,
    }
    server.enqueue(NAME, **script)
    server.enqueue(NAME, **script)
    generated = llm.generate("hi", tools=[WEATHER])
    events = list(llm.stream("hi", tools=[WEATHER]))
    streamed = events[-1]["result"]

    def without_item_ids(result: dict[str, Any]) -> dict[str, Any]:
        items = result["message"]["provider_data"][NAME]["items"]
        return {**result, "message": None, "provider_data": [i.get("type") for i in items]}

    assert without_item_ids(streamed) == without_item_ids(generated)
    assert generated["usage"] == {
        "input_tokens": 12,
        "output_tokens": 7,
        "cache_read_tokens": 0,
        "cache_write_tokens": None,
        "reasoning_tokens": 0,
    }
    kinds = [e["type"] for e in events if e["type"] != "tool_call_delta"]
    # fragments=3 splits the reasoning summary as well as the text.
    assert kinds == ["reasoning"] * 3 + ["text"] * 3 + ["tool_call", "done"]
    fragments = [e["arguments"] for e in events if e["type"] == "tool_call_delta"]
    assert json.loads("".join(fragments)) == {"city": "Oslo"}


def test_max_output_tokens_is_max_tokens_in_both(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, text="Once upon", stop_reason="max_tokens")
    server.enqueue(NAME, text="Once upon", stop_reason="max_tokens")
    assert llm.generate("story")["stop_reason"] == "max_tokens"
    done = list(llm.stream("story"))[-1]["result"]
    assert (done["stop_reason"], done["content"]) == ("max_tokens", "Once upon")


def test_an_error_event_ends_the_stream_keeping_the_text(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(
        NAME, text="Partial answer", stream_error={"status": 429, "message": "slow down"}
    )
    done = list(llm.stream("hi"))[-1]["result"]
    assert done["stop_reason"] == "error"
    assert done["content"] == "Partial answer"
    assert done["error"]["type"] == "rate_limit"
    assert "slow down" in done["error"]["message"]


def test_a_failed_response_is_an_error_not_a_success(server: MockLLMServer, llm: Any) -> None:
    failed = {
        "id": "resp_1",
        "object": "response",
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "The model crashed."},
    }
    server.enqueue_raw(200, failed, {"content-type": "application/json"}, provider=NAME)
    result = llm.generate("hi")
    assert result["error"]["type"] == "server"
    assert result["error"]["message"] == "response failed: The model crashed."
    stream = (
        'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", '
        '"delta": "Half", "item_id": "m", "output_index": 0, "content_index": 0, '
        '"sequence_number": 0, "logprobs": []}\n\n'
        'event: response.failed\ndata: {"type": "response.failed", "sequence_number": 1, '
        f'"response": {json.dumps(failed)}}}\n\n'
    )
    server.enqueue_raw(200, stream, {"content-type": "text/event-stream"}, provider=NAME)
    done = list(llm.stream("hi"))[-1]["result"]
    assert (done["stop_reason"], done["content"], done["error"]["type"]) == (
        "error",
        "Half",
        "server",
    )


def test_a_cut_stream_is_an_error_keeping_the_text(server: MockLLMServer, llm: Any) -> None:
    # created, in_progress, item added, part added, then two of the three text deltas.
    server.enqueue(NAME, text="abcdef", fragments=3, cut_after=6)
    done = list(llm.stream("hi"))[-1]["result"]
    assert done["stop_reason"] == "error"
    assert done["content"] == "abcd"


def test_http_errors_are_mapped(server: MockLLMServer, llm: Any) -> None:
    server.enqueue_error(401, NAME, message="bad key")
    result = llm.generate("hi")
    assert (result["error"]["type"], result["error"]["status_code"]) == ("authentication", 401)


async def test_async_generate_and_stream(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, text="a", provider_data={NAME: REASONING})
    server.enqueue(NAME, text="b")
    assert (await llm.generate_async("hi"))["reasoning"] == "Look it up."
    events = [e async for e in llm.stream_async("hi")]
    assert events[-1]["result"]["content"] == "b"


# --- one conversation across providers ----------------------------------------------------

OTHERS = [n for n in registry.NAMES if n != NAME]


@pytest.mark.parametrize("other", OTHERS)
def test_a_conversation_begun_here_continues_elsewhere_and_back(
    server: MockLLMServer, other: str
) -> None:
    server.reset()
    here, there = make(server), make(server, other, model=registry.get(other).demo_model)
    server.enqueue(
        NAME,
        tool_calls=[{"id": "call_w1", "name": "get_weather", "arguments": {"city": "Paris"}}],
        provider_data={NAME: REASONING},
    )
    first = here.generate("Weather in Paris?", tools=[WEATHER])
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        first["message"],
        tool_result(first["tool_calls"][0], {"temp_c": 18}),
    ]
    server.enqueue(other, text="18°C.")
    answer = there.generate(history, tools=[WEATHER])
    assert answer["content"] == "18°C.", answer.get("error")
    raw = server.last_request(other).raw_body
    assert b"gAAAAsecret" not in raw and b"rs_" not in raw  # reasoning stays with its writer
    history += [answer["message"], {"role": "user", "content": "And tomorrow?"}]
    server.enqueue(NAME, text="Rain.")
    back = here.generate(history, tools=[WEATHER])
    assert back["content"] == "Rain.", back.get("error")
    items = body(server)["input"]
    assert [i.get("type") or i["role"] for i in items] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
        "assistant",
        "user",
    ]
    assert items[1]["encrypted_content"] == "gAAAAsecret"
    assert items[4] == {"role": "assistant", "content": "18°C."}


# --- the mock refuses what the Responses API refuses ------------------------------------


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (
            [{"type": "function_call_output", "call_id": "call_x", "output": "1"}],
            "No tool call found for function call output with call_id call_x.",
        ),
        (
            [{"type": "function_call", "call_id": "call_y", "name": "f", "arguments": "{}"}],
            "No tool output found for function call call_y.",
        ),
        (
            [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"role": "assistant", "content": "42"},
            ],
            "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
        ),
    ],
)
def test_the_mock_refuses_broken_histories(
    server: MockLLMServer, llm: Any, items: list[dict[str, Any]], message: str
) -> None:
    server.enqueue(NAME, text="never served")
    # store=True: a stateless request's reasoning items name no stored item to pair with,
    # and the API takes them (the mock's reasoning_followed rule)
    result = llm.generate("hi", input=[{"role": "user", "content": "hi"}, *items], store=True)
    assert result["error"]["status_code"] == 400
    assert result["error"]["message"] == message
    assert server.pending(NAME) == 1


# --- content parts ------------------------------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_parts_go_in_user_messages_and_in_function_call_output(
    server: MockLLMServer, llm: Any
) -> None:
    # The shapes of the recorded multimodal tool returns (pydantic-ai's
    # test_multimodal_tool_returns): input_image with detail, input_file with file_data.
    server.enqueue(NAME, text="A dot and a report.")
    image = {"type": "image", "data": PNG, "media_type": "image/png"}
    pdf = {"type": "document", "data": "JVBERi0xLjQK", "media_type": "application/pdf"}
    history = [
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, image]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "name": "get_report", "arguments": {}}],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": [{"type": "text", "text": "Here."}, pdf],
        },
    ]
    llm.generate(history, tools=[{"name": "get_report"}])
    data_png = f"data:image/png;base64,{PNG}"
    assert body(server)["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Look:"},
                {"type": "input_image", "image_url": data_png, "detail": "auto"},
            ],
        },
        {"type": "function_call", "call_id": "call_1", "name": "get_report", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "Here."},
                {
                    "type": "input_file",
                    "filename": "document.pdf",
                    "file_data": "data:application/pdf;base64,JVBERi0xLjQK",
                },
            ],
        },
    ]


def test_audio_is_refused_before_sending(server: MockLLMServer, llm: Any) -> None:
    audio = {"type": "audio", "data": "UklGRg==", "media_type": "audio/wav"}
    result = llm.generate([{"role": "user", "content": [audio]}])
    assert result["error"]["type"] == "invalid_request"
    assert server.requests_for(NAME) == []
