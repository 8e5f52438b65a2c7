"""AnthropicInterface: converters, the exact wire body, result mapping, recorded exchanges,
faults and sync/async parity, against MockLLMServer and the real anthropic SDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.llm.providers.histories import PRODUCERS, TOOLS, history_from
from zerda.llm.base import Request
from zerda.llm.providers import anthropic as mod
from zerda.llm.wires.anthropic.interface import AnthropicInterface
from zerda.testing import MockLLMServer

MODEL = "claude-test"
FIXTURES = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded" / "anthropic"
)

WEATHER_SCHEMA = TOOLS[0]["parameters"]
TIME_SCHEMA = TOOLS[1]["parameters"]
NATIVE_TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": WEATHER_SCHEMA,
    },
    {"name": "get_time", "description": "Local time in a city.", "input_schema": TIME_SCHEMA},
]
THINKING = [
    {"type": "thinking", "thinking": "The user wants weather.", "signature": "c2lnbmF0dXJl"},
    {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
]

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
    # One interface (and SDK client) for the module: building clients is most of a test's CPU.
    return AnthropicInterface(MODEL, max_retries=0, **server.client_options("anthropic"))


@pytest.fixture
def llm(mock: MockLLMServer, shared_llm: AnthropicInterface) -> AnthropicInterface:
    return shared_llm


@pytest.fixture
def fresh_llm(mock: MockLLMServer) -> AnthropicInterface:
    """A new interface: an async SDK client is bound to the event loop of its first call."""
    return AnthropicInterface(MODEL, max_retries=0, **mock.client_options("anthropic"))


def body(mock: MockLLMServer) -> dict[str, Any]:
    request = mock.last_request("anthropic")
    assert request.path == "/v1/messages"
    return request.body


def call(id_: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


# --- converters -------------------------------------------------------------------------


def test_map_messages_merges_roles_and_groups_tool_results() -> None:
    messages = [
        {"role": "user", "content": "Hi."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [call("a", "get_weather", {"city": "Paris"}), call("b", "get_time", {})],
        },
        {
            "role": "tool",
            "tool_call_id": "a",
            "name": "get_weather",
            "content": {"temp_c": 18},
            "is_error": False,
        },
        {
            "role": "tool",
            "tool_call_id": "b",
            "name": "get_time",
            "content": "boom",
            "is_error": True,
        },
        {"role": "user", "content": "Also, hurry."},
    ]
    assert mod._map_messages(messages) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Hi."},
                {"type": "text", "text": "Weather and time in Paris?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "a", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "b", "name": "get_time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": '{"temp_c": 18}'},
                {"type": "tool_result", "tool_use_id": "b", "content": "boom", "is_error": True},
                {"type": "text", "text": "Also, hurry."},
            ],
        },
    ]


def test_map_messages_drops_empty_text_and_empty_messages() -> None:
    messages = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "user", "content": "  "},
        {"role": "user", "content": "Again"},
        {"role": "assistant", "content": None, "tool_calls": [call("x", "f", {})]},
        {"role": "tool", "tool_call_id": "x", "name": "f", "content": "", "is_error": False},
    ]
    assert mod._map_messages(messages) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "Again"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "x", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]},
    ]


@pytest.mark.parametrize(
    ("output", "text"),
    [
        ("plain", "plain"),
        ({"temp_c": 18, "sky": "clear"}, '{"temp_c": 18, "sky": "clear"}'),
        ([1, "two"], '[1, "two"]'),
        ({"city": "Zürich"}, '{"city": "Zürich"}'),
        (42, "42"),
        (True, "true"),
    ],
)
def test_tool_output_is_sent_as_text(output: Any, text: str) -> None:
    result = {
        "role": "tool",
        "tool_call_id": "t1",
        "name": "f",
        "content": output,
        "is_error": False,
    }
    assert mod._map_tool_result(result) == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": text,
    }


def test_thinking_is_sent_before_text_and_tool_use() -> None:
    message = {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [call("toolu_1", "get_weather", {"city": "Paris"})],
        "provider_data": {
            "anthropic": {"thinking": THINKING},
            "gemini": {"thought_signatures": ["x"]},
        },
    }
    assert mod._map_messages([message]) == [
        {
            "role": "assistant",
            "content": [
                *THINKING,
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        }
    ]


def test_merged_assistant_turns_keep_thinking_first() -> None:
    messages = [
        {"role": "assistant", "content": "First.", "tool_calls": []},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("t", "f", {})],
            "provider_data": {"anthropic": {"thinking": THINKING[:1]}},
        },
    ]
    assert mod._map_messages(messages) == [
        {
            "role": "assistant",
            "content": [
                THINKING[0],
                {"type": "text", "text": "First."},
                {"type": "tool_use", "id": "t", "name": "f", "input": {}},
            ],
        }
    ]


def result(call_id: str, content: str, **extra: Any) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "name": "f",
        "content": content,
        "is_error": False,
        **extra,
    }


def test_a_merged_user_turn_keeps_tool_results_first() -> None:
    """A merge is what can put a turn out of order: results merged after text move first,
    the other blocks keep their order."""
    messages = [
        {"role": "user", "content": "Before."},
        result("a", "1"),
        {"role": "user", "content": "After."},
        result("b", "2"),
    ]
    assert mod._map_messages(messages) == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "1"},
                {"type": "tool_result", "tool_use_id": "b", "content": "2"},
                {"type": "text", "text": "Before."},
                {"type": "text", "text": "After."},
            ],
        }
    ]


def test_results_merged_after_a_cache_point_stay_in_order() -> None:
    messages = [result("a", "1", cache_after=True), result("b", "2")]
    assert mod._map_messages(messages) == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "a",
                    "content": "1",
                    "cache_control": {"type": "ephemeral"},
                },
                {"type": "tool_result", "tool_use_id": "b", "content": "2"},
            ],
        }
    ]


def test_map_messages_does_not_mutate_input() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {
            "role": "assistant",
            "content": "c",
            "tool_calls": [],
            "provider_data": {"anthropic": {"thinking": THINKING}},
        },
    ]
    snapshot = json.loads(json.dumps(messages))
    mod._map_messages(messages)
    assert messages == snapshot


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (None, None, None),
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        ({"name": "get_weather"}, None, {"type": "tool", "name": "get_weather"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        (
            {"name": "get_time"},
            False,
            {"type": "tool", "name": "get_time", "disable_parallel_tool_use": True},
        ),
        ("none", False, {"type": "none"}),
        (None, True, None),
    ],
)
def test_map_tool_choice(choice: Any, parallel: bool | None, expected: Any) -> None:
    assert mod._map_tool_choice(choice, parallel, True) == expected


def test_map_tool_choice_without_tools_is_left_out() -> None:
    assert mod._map_tool_choice("auto", False, False) is None


def test_map_options() -> None:
    req = Request(
        None, [], None, None, max_tokens=50, temperature=0.2, top_p=0.9, stop=["END", "STOP"]
    )
    assert mod._map_options(req, 4096) == {
        "max_tokens": 50,
        "stop_sequences": ["END", "STOP"],
        "extra_body": {"temperature": 0.2, "top_p": 0.9},
    }
    assert mod._map_options(Request(None, [], None, None), 4096) == {"max_tokens": 4096}


def test_map_tools() -> None:
    assert mod._map_tools(TOOLS) == NATIVE_TOOLS
    assert mod._map_tools(None) is None


def test_tool_id_keeps_valid_ids_and_maps_foreign_ones(llm: AnthropicInterface) -> None:
    assert llm._tool_id("toolu_01A09q90qw90lq917835lq9", 2, 0) == "toolu_01A09q90qw90lq917835lq9"
    assert llm._tool_id("functions.get_weather:0", 2, 0) == "functions_get_weather_0"
    assert llm._tool_id(None, 2, 1) == "call_2_1"


# --- the wire -----------------------------------------------------------------------------


def test_plain_prompt_body(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="Hi!")
    llm.generate("Hello")
    assert body(mock) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hello"}],
    }


def test_system_prompt_body(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="Hi!")
    llm.generate(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
        system="Be kind.",
    )
    assert body(mock) == {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "Be kind.\n\nBe brief.",
        "messages": [{"role": "user", "content": "Hello"}],
    }


def test_tools_body(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="ok")
    llm.generate("Weather?", tools=TOOLS)
    assert body(mock) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": NATIVE_TOOLS,
    }


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        ("get_time", None, {"type": "tool", "name": "get_time"}),
        ({"name": "get_time"}, None, {"type": "tool", "name": "get_time"}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            None,
            {"type": "tool", "name": "get_weather"},
        ),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_body(
    llm: AnthropicInterface,
    mock: MockLLMServer,
    choice: Any,
    parallel: bool | None,
    expected: dict[str, Any],
) -> None:
    mock.enqueue("anthropic", text="ok")
    result = llm.generate("Weather?", tools=TOOLS, tool_choice=choice, parallel_tool_calls=parallel)
    assert result["stop_reason"] == "end_turn"
    assert body(mock) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": NATIVE_TOOLS,
        "tool_choice": expected,
    }


def test_options_body(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="ok")
    llm.generate(
        "Hi", max_tokens=64, temperature=0.3, top_p=0.8, stop="END", metadata={"user_id": "u1"}
    )
    assert body(mock) == {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Hi"}],
        "temperature": 0.3,
        "top_p": 0.8,
        "stop_sequences": ["END"],
        "metadata": {"user_id": "u1"},
    }


def test_native_extra_body_is_merged(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="ok")
    llm.generate("Hi", temperature=0.3, extra_body={"top_k": 5, "temperature": 0.9})
    assert body(mock) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hi"}],
        "temperature": 0.9,
        "top_k": 5,
    }


def test_default_max_tokens_option(mock: MockLLMServer) -> None:
    llm = AnthropicInterface(
        MODEL, max_retries=0, default_max_tokens=1000, **mock.client_options("anthropic")
    )
    mock.enqueue("anthropic", text="ok")
    llm.generate("Hi")
    assert body(mock)["max_tokens"] == 1000


def _history_body(first: str, second: str) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "You are terse.",
        "tools": NATIVE_TOOLS,
        "messages": [
            {"role": "user", "content": "Weather and time in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": first,
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "id": second,
                        "name": "get_time",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": first,
                        "content": '{"temp_c": 18, "sky": "clear"}',
                    },
                    {"type": "tool_result", "tool_use_id": second, "content": "14:05"},
                ],
            },
            {"role": "assistant", "content": "18°C and clear; it is 14:05."},
            {"role": "user", "content": "Thanks. And tomorrow?"},
        ],
    }


@pytest.mark.parametrize(
    ("producer", "first", "second"),
    [
        ("anthropic", "toolu_01A09q90qw90lq917835lq9", "toolu_01B18r81rx81mr826724mr8"),
        ("openai", "call_a1B2c3D4e5F6g7H8i9J0k1L2", "call_m3N4o5P6q7R8s9T0u1V2w3X4"),
        ("gemini", "call_2_0", "call_2_1"),
        ("ollama", "call_2_0", "call_2_1"),
    ],
)
def test_history_body_exact(
    llm: AnthropicInterface, mock: MockLLMServer, producer: str, first: str, second: str
) -> None:
    mock.enqueue("anthropic", text="Sunny.")
    result = llm.generate(history_from(producer), tools=TOOLS)
    assert result["content"] == "Sunny."
    assert body(mock) == _history_body(first, second)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_history_from_every_producer_keeps_its_system_and_no_foreign_data(
    llm: AnthropicInterface, mock: MockLLMServer, producer: str
) -> None:
    """The Messages API's rules on these histories are the contract's (contract.py);
    here: the system prompt goes to ``system``, and no producer's data leaks into it."""
    mock.enqueue("anthropic", text="Sunny.")
    llm.generate(history_from(producer), tools=TOOLS)
    sent = body(mock)
    assert sent["system"] == "You are terse."
    assert "thinking" not in json.dumps(sent)


def test_foreign_invalid_ids_are_mapped_for_call_and_result(
    llm: AnthropicInterface, mock: MockLLMServer
) -> None:
    history = [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("functions.get_weather:0", "get_weather", {"city": "Paris"}),
                call("functions/get_weather:0", "get_weather", {"city": "Rome"}),
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "functions/get_weather:0",
            "name": "get_weather",
            "content": "rain",
        },
        {
            "role": "tool",
            "tool_call_id": "functions.get_weather:0",
            "name": "get_weather",
            "content": "sun",
        },
    ]
    mock.enqueue("anthropic", text="ok")
    llm.generate(history, tools=TOOLS)
    assert body(mock)["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "functions_get_weather_0",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
                {
                    "type": "tool_use",
                    "id": "functions_get_weather_0_1",
                    "name": "get_weather",
                    "input": {"city": "Rome"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "functions_get_weather_0_1",
                    "content": "rain",
                },
                {"type": "tool_result", "tool_use_id": "functions_get_weather_0", "content": "sun"},
            ],
        },
    ]


def test_thinking_round_trip(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic",
        text="Checking.",
        tool_calls=[{"id": "toolu_01", "name": "get_weather", "arguments": {"city": "Paris"}}],
        provider_data={"anthropic": {"thinking": THINKING}},
    )
    first = llm.generate("Weather in Paris?", tools=TOOLS)
    assert first["provider_data"] == {"anthropic": {"thinking": THINKING}}
    assert first["message"]["provider_data"] == {"anthropic": {"thinking": THINKING}}
    assert first["content"] == "Checking."
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        first["message"],
        {"role": "tool", "tool_call_id": "toolu_01", "name": "get_weather", "content": "sunny"},
    ]
    mock.enqueue("anthropic", text="Sunny.")
    llm.generate(history, tools=TOOLS)
    assert body(mock)["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                *THINKING,
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"}],
        },
    ]


# --- results ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ({"stop_reason": "end_turn"}, "end_turn"),
        ({"stop_reason": "max_tokens"}, "max_tokens"),
        ({"stop_reason": "stop_sequence"}, "stop_sequence"),
        ({"stop_reason": "content_filter"}, "content_filter"),
        ({"native_stop_reason": "refusal"}, "content_filter"),
        ({"native_stop_reason": "pause_turn"}, "other"),
        ({"native_stop_reason": "model_context_window_exceeded"}, "other"),
        ({"stop_reason": "end_turn", "tool_calls": [{"name": "f", "arguments": {}}]}, "tool_use"),
    ],
)
def test_stop_reasons(
    llm: AnthropicInterface, mock: MockLLMServer, script: dict[str, Any], expected: str
) -> None:
    mock.enqueue("anthropic", text="x", **script)
    assert llm.generate("Hi", stop=["STOP"])["stop_reason"] == expected


def test_thinking_only_result(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue(
        "anthropic", provider_data={"anthropic": {"thinking": THINKING}}, stop_reason="max_tokens"
    )
    assert llm.generate("Think.") == {
        "content": None,
        "tool_calls": [],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 10, "output_tokens": 5, **NO_DETAILS},
        "reasoning": "The user wants weather.",
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [],
            "provider_data": {"anthropic": {"thinking": THINKING}},
        },
        "provider_data": {"anthropic": {"thinking": THINKING}},
        "cost": None,  # claude-test has no price
    }


# --- recorded exchanges -------------------------------------------------------------------


def _recorded(streaming: bool) -> list[Any]:
    if not FIXTURES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="shared/fixtures is absent"))]
    files = sorted(FIXTURES.glob("*.json"))
    chosen = [f for f in files if json.loads(f.read_text())["streaming"] == streaming]
    return [pytest.param(f, id=f.stem) for f in chosen]


def expected_calls(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """The recording's tool calls, arguments parsed (some recordings keep them as text)."""
    out = []
    for c in fixture["derived"]["tool_calls"]:
        args = c["arguments"]
        out.append(
            {
                "id": c["id"],
                "name": c["name"],
                "arguments": json.loads(args or "{}") if isinstance(args, str) else args,
            }
        )
    return out


EXPECTED_STOP = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
}


def assert_matches_recording(result: dict[str, Any], fixture: dict[str, Any]) -> None:
    derived = fixture["derived"]
    if fixture["response"]["status"] >= 400:
        kind = {400: "invalid_request", 404: "not_found"}[fixture["response"]["status"]]
        assert result["stop_reason"] == "error"
        assert result["error"]["type"] == kind
        assert result["error"]["message"] == derived["error"]["message"]
        return
    calls = expected_calls(fixture)
    assert result["tool_calls"] == calls
    assert (result["content"] or "") == derived["text"]
    assert result["stop_reason"] == (
        "tool_use" if calls else EXPECTED_STOP[derived["finish_reason"]]
    )
    usage = dict(result["usage"])
    requests = usage.pop("server_tool_requests", None)
    assert usage == derived["usage_norm"]  # cache reads and writes added in
    assert requests == expected_server_requests(derived["usage"])
    assert result["reasoning"] == (derived["reasoning_text"] or None)


def expected_server_requests(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """usage.server_tool_use's counts above zero, named without ``_requests`` (DESIGN §18)."""
    counts = (usage or {}).get("server_tool_use") or {}
    found = {k.removesuffix("_requests"): v for k, v in counts.items() if v}
    return found or None


@pytest.mark.parametrize("path", _recorded(streaming=False))
def test_recorded_response(llm: AnthropicInterface, mock: MockLLMServer, path: Path) -> None:
    fixture = json.loads(path.read_text())
    mock.enqueue_recorded(fixture, "anthropic")
    result = llm.generate("replay")
    assert_matches_recording(result, fixture)
    json.dumps(result)  # plain data only


# --- faults -------------------------------------------------------------------------------


def test_529_overloaded_is_a_retried_server_error(mock: MockLLMServer) -> None:
    """Anthropic's own 529 (overloaded); the common statuses are the contract's."""
    llm = AnthropicInterface(MODEL, max_retries=1, **mock.client_options("anthropic"))
    for _ in range(2):
        mock.enqueue_error(529, "anthropic", message="it failed", retry_after=0.01)
    assert llm.generate("Hi") == {
        "content": None,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": None,
        "message": None,
        "cost": None,
        "error": {
            "type": "server",
            "message": "it failed",
            "status_code": 529,
            "provider": "anthropic",
            "retryable": True,
        },
    }
    assert len(mock.requests_for("anthropic")) == 2


def test_malformed_body_says_so(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    mock.enqueue("anthropic", text="x", invalid_json_body=True)
    assert llm.generate("Hi")["error"]["message"].startswith(
        "anthropic sent a malformed response: not valid JSON"
    )


# --- clients and parity -------------------------------------------------------------------


def test_client_is_built_once(llm: AnthropicInterface, mock: MockLLMServer) -> None:
    import anthropic

    assert llm.client is llm.client
    assert isinstance(llm.client, anthropic.Anthropic)
    assert llm.client.max_retries == 0


async def test_ready_async_client(mock: MockLLMServer) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(**mock.sdk_client_kwargs("anthropic"), max_retries=0)
    llm = AnthropicInterface(MODEL, client=client)
    assert llm.async_client is client
    mock.enqueue("anthropic", text="async hi")
    assert (await llm.generate_async("Hi"))["content"] == "async hi"


def test_ready_sync_client(mock: MockLLMServer) -> None:
    import anthropic

    client = anthropic.Anthropic(**mock.sdk_client_kwargs("anthropic"), max_retries=0)
    llm = AnthropicInterface(MODEL, client=client)
    mock.enqueue("anthropic", text="sync hi")
    assert llm.generate("Hi")["content"] == "sync hi"
    assert llm.client is client


# The scripts every provider shares are the contract's (contract.py); Anthropic's own:
# thinking blocks kept in provider_data.
PARITY_SCRIPTS = [
    {
        "provider_data": {"anthropic": {"thinking": THINKING}},
        "tool_calls": [call("toolu_c", "get_time", {"city": "Rome"})],
    },
]


@pytest.mark.parametrize("script", PARITY_SCRIPTS)
async def test_generate_async_parity(
    fresh_llm: AnthropicInterface, mock: MockLLMServer, script: dict[str, Any]
) -> None:
    llm = fresh_llm
    mock.enqueue("anthropic", **script)
    mock.enqueue("anthropic", **script)
    sync_result = llm.generate("Go", tools=TOOLS)
    sync_body = body(mock)
    async_result = await llm.generate_async("Go", tools=TOOLS)
    assert async_result == sync_result
    assert body(mock) == sync_body


def test_client_options_reach_the_sdk_client(mock: MockLLMServer) -> None:
    llm = AnthropicInterface(
        MODEL,
        max_retries=0,
        default_headers={"x-team": "zerda"},
        **mock.client_options("anthropic"),
    )
    mock.enqueue("anthropic", text="ok")
    llm.generate("Hi")
    assert mock.last_request("anthropic").headers["x-team"] == "zerda"
