"""The OpenAI-shaped mapping shared by OpenAI, Groq and Mistral, called directly: converters
on whole dicts, response mapping, and stream assembly from hand-written chunks (the shapes
real providers send, including the awkward ones no mock renderer produces)."""

from __future__ import annotations

from typing import Any

import pytest

from zerda.llm._ids import mistral as mistral_id
from zerda.llm._stream import StreamAccumulator
from zerda.llm.base import Request
from zerda.llm.usage import make_usage
from zerda.llm.wires.groq.interface import GroqInterface
from zerda.llm.wires.mistral.interface import MistralInterface
from zerda.llm.wires.openai.compat import (
    _body_message,
    _map_message,
    _map_options,
    _map_stop_reason,
    _map_tool_choice,
    _map_tools,
    _map_usage,
    _text_of,
)
from zerda.llm.wires.openai.interface import OpenAIInterface


def request(**fields: Any) -> Request:
    base: dict[str, Any] = {"system": None, "messages": [], "tools": None, "tool_choice": None}
    return Request(**{**base, **fields})


# --- converters ------------------------------------------------------------------------


def test_map_message_assistant_with_calls() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "name": "f", "arguments": {"q": "é", "n": [1, 2]}}],
    }
    assert _map_message(message) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "f", "arguments": '{"q": "é", "n": [1, 2]}'},
            }
        ],
    }


@pytest.mark.parametrize(
    ("output", "sent"),
    [("14:05", "14:05"), ({"temp": 18}, '{"temp": 18}'), ([1, "a"], '[1, "a"]'), (3, "3")],
)
def test_map_message_tool_result(output: Any, sent: str) -> None:
    message = {
        "role": "tool",
        "tool_call_id": "c1",
        "name": "f",
        "content": output,
        "is_error": False,
    }
    assert _map_message(message) == {"role": "tool", "tool_call_id": "c1", "content": sent}


def test_map_message_plain_turns() -> None:
    assert _map_message({"role": "user", "content": "hi"}) == {"role": "user", "content": "hi"}
    empty = {"role": "assistant", "content": None, "tool_calls": []}
    assert _map_message(empty) == {"role": "assistant", "content": ""}


def test_map_message_does_not_mutate() -> None:
    message = {
        "role": "assistant",
        "content": "x",
        "tool_calls": [{"id": "c", "name": "f", "arguments": {}}],
    }
    snapshot = repr(message)
    _map_message(message)
    assert repr(message) == snapshot


def test_map_tools() -> None:
    tools = [{"name": "f", "description": "F.", "parameters": {"type": "object"}}]
    assert _map_tools(tools) == [
        {
            "type": "function",
            "function": {"name": "f", "description": "F.", "parameters": {"type": "object"}},
        }
    ]
    assert _map_tools(None) is None


@pytest.mark.parametrize(
    ("choice", "required", "native"),
    [
        (None, "required", None),
        ("auto", "required", "auto"),
        ("none", "required", "none"),
        ("required", "required", "required"),
        ("required", "any", "any"),
        ({"name": "f"}, "any", {"type": "function", "function": {"name": "f"}}),
    ],
)
def test_map_tool_choice(choice: Any, required: str, native: Any) -> None:
    assert _map_tool_choice(choice, required) == native


def test_map_options() -> None:
    req = request(max_tokens=5, temperature=0.0, top_p=0.5, stop=["END"])
    assert _map_options(req, "max_completion_tokens") == {
        "max_completion_tokens": 5,
        "temperature": 0.0,
        "top_p": 0.5,
        "stop": ["END"],
    }
    assert _map_options(request(), "max_tokens") == {}


@pytest.mark.parametrize(
    ("cls", "fields", "body"),
    [
        (OpenAIInterface, {"tool_choice": "required"}, {"tool_choice": "required"}),
        (GroqInterface, {"parallel_tool_calls": False}, {"parallel_tool_calls": False}),
        (MistralInterface, {"tool_choice": "required"}, {"tool_choice": "any"}),
    ],
)
def test_build_request_per_provider(cls: Any, fields: dict[str, Any], body: dict[str, Any]) -> None:
    tools = [{"name": "f", "description": "", "parameters": {"type": "object"}}]
    req = request(
        system="Be brief.",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        max_tokens=9,
        **fields,
    )
    built = cls("m", api_key="k")._build_request(req)
    max_field = "max_tokens" if cls is MistralInterface else "max_completion_tokens"
    assert built == {
        "model": "m",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "tools": _map_tools(tools),
        max_field: 9,
        **body,
    }


def test_tool_choice_and_parallel_need_tools() -> None:
    # The APIs refuse tool_choice / parallel_tool_calls without tools.
    req = request(
        messages=[{"role": "user", "content": "hi"}], tool_choice="none", parallel_tool_calls=False
    )
    assert OpenAIInterface("m", api_key="k")._build_request(req) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_native_arguments_pass_through_last() -> None:
    req = request(
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=3,
        native={"seed": 7, "max_completion_tokens": 4},
    )
    built = OpenAIInterface("m", api_key="k")._build_request(req)
    assert built["seed"] == 7 and built["max_completion_tokens"] == 4


# --- response pieces -------------------------------------------------------------------


def test_text_of() -> None:
    assert _text_of("hi") == "hi"
    assert _text_of(None) is None
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
        {"type": "text", "text": "Yes."},
    ]
    assert _text_of(parts) == "Yes."


def test_map_usage() -> None:
    assert _map_usage({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}) == (
        make_usage(3, 4)
    )
    details = {
        "prompt_tokens_details": {"cached_tokens": 2, "cache_write_tokens": 1},
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    usage = {"prompt_tokens": 5, "completion_tokens": 4, **details}
    assert _map_usage(usage) == make_usage(5, 4, cache_read=2, cache_write=1, reasoning=3)
    assert _map_usage(None) is None


@pytest.mark.parametrize(
    ("native", "unified"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("function_call", "tool_use"),
        ("length", "max_tokens"),
        ("model_length", "max_tokens"),
        ("content_filter", "content_filter"),
        ("error", "other"),
        (None, "other"),
    ],
)
def test_map_stop_reason(native: Any, unified: str) -> None:
    assert _map_stop_reason(native) == unified


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": {"message": "bad key"}}, "bad key"),
        ({"message": "plain"}, "plain"),
        ('{"object": "error", "message": "mistral"}', "mistral"),
        ({"detail": [{"msg": "x"}]}, '[{"msg": "x"}]'),
        ("not json", "not json"),
        (None, None),
    ],
)
def test_body_message(body: Any, message: str | None) -> None:
    assert _body_message(body) == message


def test_map_response_legacy_function_call() -> None:
    raw = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "f", "arguments": '{"a": 1}'},
                },
                "finish_reason": "function_call",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2},
    }
    result = OpenAIInterface("m", api_key="k")._map_response(raw)
    assert result["tool_calls"] == [{"id": None, "name": "f", "arguments": {"a": 1}}]
    assert result["stop_reason"] == "tool_use"


def test_map_response_mistral_dict_arguments() -> None:
    raw = {
        "choices": [
            {
                "message": {
                    "content": "",
                    "tool_calls": [
                        {"id": "abcDEF123", "function": {"name": "f", "arguments": {"a": 1}}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    result = MistralInterface("m", api_key="k")._map_response(raw)
    assert result == {
        "content": None,
        "tool_calls": [{"id": "abcDEF123", "name": "f", "arguments": {"a": 1}}],
        "stop_reason": "tool_use",
        "usage": None,
        "reasoning": None,
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "abcDEF123", "name": "f", "arguments": {"a": 1}}],
        },
        "cost": None,  # no usage to price
    }


def test_map_response_without_choices() -> None:
    result = OpenAIInterface("m", api_key="k")._map_response({"choices": []})
    assert (result["content"], result["tool_calls"], result["stop_reason"]) == (None, [], "other")


# --- stream assembly -------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = (
        []
        if delta is None and finish is None
        else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    )
    return {"choices": choices, **extra}


def call_delta(
    index: int | None, id: str | None = None, name: str | None = None, args: Any = None
) -> dict[str, Any]:
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    body: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        body["id"] = id
    return {"tool_calls": [body]}


def feed(
    chunks: list[dict[str, Any]], cls: Any = OpenAIInterface
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    llm = cls("m", api_key="k")
    acc = StreamAccumulator()
    events: list[dict[str, Any]] = []
    for c in chunks:
        events += llm._feed(acc, c)
    events += acc.end_all_calls()
    return events, acc.result(llm._make_result)


def calls_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["tool_call"] for e in events if e["type"] == "tool_call"]


def test_stream_interleaved_fragments_by_index() -> None:
    events, result = feed(
        [
            chunk(call_delta(0, "a", "f", "")),
            chunk(call_delta(1, "b", "g", "")),
            chunk(call_delta(0, args='{"x"')),
            chunk(call_delta(1, args='{"y": 2}')),
            chunk(call_delta(0, args=": 1}")),
            chunk(finish="tool_calls"),
        ]
    )
    assert calls_of(events) == [
        {"id": "a", "name": "f", "arguments": {"x": 1}},
        {"id": "b", "name": "g", "arguments": {"y": 2}},
    ]
    assert result["tool_calls"] == calls_of(events)


def test_stream_index_zero_reused_with_new_ids() -> None:
    # Some providers send every parallel call on index 0: a new id starts a new call.
    events, _ = feed(
        [
            chunk(call_delta(0, "a", "f", '{"x":')),
            chunk(call_delta(0, args=" 1}")),
            chunk(call_delta(0, "b", "g", '{"y": 2}')),
            chunk(finish="tool_calls"),
        ]
    )
    assert calls_of(events) == [
        {"id": "a", "name": "f", "arguments": {"x": 1}},
        {"id": "b", "name": "g", "arguments": {"y": 2}},
    ]


def test_stream_whole_calls_without_ids_on_one_index() -> None:
    events, _ = feed(
        [
            chunk(call_delta(0, None, "f", '{"x": 1}')),
            chunk(call_delta(0, None, "g", "{}")),
            chunk(finish="stop"),
        ]
    )
    assert calls_of(events) == [
        {"id": None, "name": "f", "arguments": {"x": 1}},
        {"id": None, "name": "g", "arguments": {}},
    ]


def test_stream_repeated_id_continues_the_call() -> None:
    events, _ = feed(
        [
            chunk(call_delta(0, "a", "f", '{"x"')),
            chunk(call_delta(0, "a", None, ": 1}")),
            chunk(finish="tool_calls"),
        ]
    )
    assert calls_of(events) == [{"id": "a", "name": "f", "arguments": {"x": 1}}]


def test_stream_missing_index_and_dict_arguments() -> None:
    # Mistral sends each call whole, possibly without an index and with dict arguments.
    events, _ = feed(
        [
            chunk(call_delta(None, "abcDEF123", "f", {"x": 1})),
            chunk(call_delta(None, "ghiJKL456", "g", {})),
        ],
        MistralInterface,
    )
    assert calls_of(events) == [
        {"id": "abcDEF123", "name": "f", "arguments": {"x": 1}},
        {"id": "ghiJKL456", "name": "g", "arguments": {}},
    ]


def test_stream_calls_complete_at_finish_reason() -> None:
    llm = OpenAIInterface("m", api_key="k")
    acc = StreamAccumulator()
    assert llm._feed(acc, chunk(call_delta(0, "a", "f", "{}"))) == [
        {"type": "tool_call_delta", "index": 0, "id": "a", "name": "f", "arguments": "{}"}
    ]
    assert llm._feed(acc, chunk(finish="stop")) == [
        {"type": "tool_call", "tool_call": {"id": "a", "name": "f", "arguments": {}}}
    ]


def test_stream_legacy_function_call() -> None:
    events, result = feed(
        [
            chunk({"function_call": {"name": "f", "arguments": ""}}),
            chunk({"function_call": {"arguments": '{"a": 1}'}}),
            chunk(finish="function_call"),
        ]
    )
    assert calls_of(events) == [{"id": None, "name": "f", "arguments": {"a": 1}}]
    assert result["stop_reason"] == "tool_use"


def test_stream_usage_only_last_chunk() -> None:
    _, result = feed(
        [
            chunk({"content": "Hi"}),
            chunk(finish="stop"),
            chunk(None, usage={"prompt_tokens": 4, "completion_tokens": 1}),
        ]
    )
    assert result["usage"] == make_usage(4, 1)
    assert (result["content"], result["stop_reason"]) == ("Hi", "end_turn")


def test_stream_groq_usage_under_x_groq() -> None:
    last = chunk(
        finish="stop", x_groq={"id": "req", "usage": {"prompt_tokens": 2, "completion_tokens": 3}}
    )
    _, result = feed([chunk({"content": "Hi"}), last], GroqInterface)
    assert result["usage"] == make_usage(2, 3)


# --- Mistral ids -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "orig",
    ["toolu_01A09q90qw90lq917835lq9", "call_a1B2c3D4e5F6g7H8i9J0k1L2", "tooluse_kZJ", "x", None],
)
def test_mistral_id_is_valid_and_deterministic(orig: str | None) -> None:
    made = mistral_id(orig, 2, 1)
    assert len(made) == 9 and made.isalnum() and made.isascii()
    assert mistral_id(orig, 2, 1) == made


def test_mistral_id_keeps_mistral_ids_and_separates_others() -> None:
    assert mistral_id("Ab3dE6gH9", 0, 0) == "Ab3dE6gH9"
    assert mistral_id(None, 2, 0) != mistral_id(None, 2, 1)
    assert mistral_id("toolu_a", 0, 0) != mistral_id("toolu_b", 0, 0)


def test_stream_only_choice_zero_counts() -> None:
    other = {"choices": [{"index": 1, "delta": {"content": "B"}, "finish_reason": None}]}
    _, result = feed([chunk({"content": "A"}), other, chunk(finish="stop")])
    assert result["content"] == "A"


def test_stream_id_less_no_argument_calls_on_one_index() -> None:
    events, _ = feed(
        [
            chunk(call_delta(0, None, "f", "")),
            chunk(call_delta(0, None, "g", "")),
            chunk(finish="stop"),
        ]
    )
    assert calls_of(events) == [
        {"id": None, "name": "f", "arguments": {}},
        {"id": None, "name": "g", "arguments": {}},
    ]


def test_stream_name_repeated_on_fragments_continues_the_call() -> None:
    events, _ = feed(
        [
            chunk(call_delta(0, None, "f", "")),
            chunk(call_delta(0, None, "f", "")),
            chunk(call_delta(0, args='{"a": 1}')),
            chunk(finish="tool_calls"),
        ]
    )
    assert calls_of(events) == [{"id": None, "name": "f", "arguments": {"a": 1}}]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"message": "slow", "type": "rate_limit_error", "code": "rate_limit_exceeded"},
            ("rate_limit", 429),
        ),
        (
            {"message": "bad", "type": "invalid_request_error", "code": None},
            ("invalid_request", 400),
        ),
        ({"message": "x", "code": "503"}, ("server", 503)),
        ({"message": "boom", "type": "mystery"}, ("server", None)),
    ],
)
def test_in_stream_error_events_map_by_code_or_type(body: dict, expected: tuple) -> None:
    from zerda.llm.wires.openai.compat import _stream_error

    err = _stream_error(body, body["message"], "openai")
    assert (err.type, err.status_code) == expected
