"""GeminiInterface against MockLLMServer and the real google-genai SDK: converters, the exact
request bodies on the wire, result mapping, every non-streamed recorded exchange, faults and
sync/async parity. Streaming lives in test_gemini_stream.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.prices import genai_cost
from tests.llm.providers.histories import TOOLS, history_from
from zerda.llm import create_interface
from zerda.llm.base import Request
from zerda.llm.errors import (
    InvalidRequestError,
    ServerError,
    error_class_for_status,
)
from zerda.llm.providers import gemini
from zerda.llm.wires.gemini.interface import GeminiInterface
from zerda.testing import GEMINI_THOUGHT_SIGNATURE, MockLLMServer

pytest.importorskip("google.genai")

MODEL = "gemini-2.5-flash"
KEY = "sk-SECRET-zerda-1234"
RECORDED = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "recorded"
GEMINI_FILES = sorted((RECORDED / "gemini").glob("*.json")) if RECORDED.is_dir() else []
PLACEHOLDER = "skip_thought_signature_validator"  # Google's stand-in, as the wire shows it

WEATHER_DECL = {
    "description": "Current weather for a city.",
    "name": "get_weather",
    "parameters": {
        "properties": {"city": {"description": "City name", "type": "STRING"}},
        "required": ["city"],
        "type": "OBJECT",
    },
}
TIME_DECL = {
    "description": "Local time in a city.",
    "name": "get_time",
    "parameters": {
        "properties": {"city": {"type": "STRING"}},
        "required": ["city"],
        "type": "OBJECT",
    },
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture
def mock(server: MockLLMServer) -> MockLLMServer:
    server.reset()
    return server


_INTERFACES: dict[tuple[str, str], GeminiInterface] = {}


def make(server: MockLLMServer, **options: Any) -> GeminiInterface:
    """An interface on the mock server, shared by the tests that ask for the same options:
    building a genai.Client costs a quarter of a second (it loads the CA store twice)."""
    key = (server.url, repr(sorted(options.items())))
    if key not in _INTERFACES:
        kwargs = {**server.client_options("gemini"), "max_retries": 0, **options}
        llm = create_interface("gemini", model=MODEL, **kwargs)
        assert isinstance(llm, GeminiInterface)
        _INTERFACES[key] = llm
    return _INTERFACES[key]


def body_of(server: MockLLMServer) -> dict[str, Any]:
    request = server.last_request("gemini")
    assert request.path == f"/v1/models/{MODEL}:generateContent"
    body: dict[str, Any] = request.body
    return body


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


# The mock server's default counts; it reports no cache or thought counts.
NO_DETAILS = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}
DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5, **NO_DETAILS}


def result(
    content: str | None,
    calls: list[dict[str, Any]] | None = None,
    stop: str = "end_turn",
    usage: dict[str, Any] | None = DEFAULT_USAGE,
    provider_data: dict[str, Any] | None = None,
    reasoning: str | None = None,
    model: str = MODEL,
) -> dict[str, Any]:
    calls = calls or []
    message: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": calls}
    usage = {**NO_DETAILS, **usage} if usage else usage
    out: dict[str, Any] = {
        "content": content,
        "tool_calls": calls,
        "stop_reason": stop,
        "usage": usage,
        "reasoning": reasoning,
        "message": message,
        "cost": genai_cost("gemini", model, usage),  # DESIGN §21
    }
    if provider_data:
        message["provider_data"] = provider_data
        out["provider_data"] = provider_data
    return out


# --- converters -------------------------------------------------------------------------


def _resolved(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    llm = GeminiInterface(MODEL, api_key=KEY)
    return llm._prepare(messages).messages


def test_map_messages_gemini_history_keeps_signatures_as_sent() -> None:
    contents = gemini._map_messages(_resolved(history_from("gemini")))
    assert contents == [
        user("Weather and time in Paris?"),
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                    # b"sig-one" as google-genai sends bytes: URL-safe base64
                    "thoughtSignature": "c2lnLW9uZQ==",
                },
                {"functionCall": {"name": "get_time", "args": {"city": "Paris"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"temp_c": 18, "sky": "clear"},
                    }
                },
                {"functionResponse": {"name": "get_time", "response": {"result": "14:05"}}},
            ],
        },
        {"role": "model", "parts": [{"text": "18°C and clear; it is 14:05."}]},
        user("Thanks. And tomorrow?"),
    ]


def test_map_messages_merges_results_and_following_text_and_orders_results_by_call() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "Calling.",
            "tool_calls": [
                {"id": "a", "name": "f", "arguments": {}},
                {"id": "b", "name": "g", "arguments": {"x": 1}},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": [1, 2]},
        {"role": "tool", "tool_call_id": "a", "content": "boom", "is_error": True},
        {"role": "user", "content": "and?"},
    ]
    assert gemini._map_messages(_resolved(messages)) == [
        user("go"),
        {
            "role": "model",
            "parts": [
                {"text": "Calling."},
                {
                    "functionCall": {"name": "f", "args": {}, "id": "a"},
                    "thoughtSignature": PLACEHOLDER,
                },
                {"functionCall": {"name": "g", "args": {"x": 1}, "id": "b"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "f", "response": {"error": "boom"}, "id": "a"}},
                {"functionResponse": {"name": "g", "response": {"result": [1, 2]}, "id": "b"}},
                {"text": "and?"},
            ],
        },
    ]


def test_map_messages_drops_empty_messages_and_merges_same_role() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "c"},
    ]
    assert gemini._map_messages(_resolved(messages)) == [
        {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
        {"role": "model", "parts": [{"text": "c"}]},
    ]


def test_map_messages_does_not_mutate_input() -> None:
    history = history_from("gemini")
    before = json.dumps(history, sort_keys=True)
    gemini._map_messages(_resolved(history))
    assert json.dumps(history, sort_keys=True) == before


@pytest.mark.parametrize(
    ("choice", "native"),
    [
        (None, None),
        ("auto", {"functionCallingConfig": {"mode": "AUTO"}}),
        ("none", {"functionCallingConfig": {"mode": "NONE"}}),
        ("required", {"functionCallingConfig": {"mode": "ANY"}}),
        (
            {"name": "get_time"},
            {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}},
        ),
    ],
)
def test_map_tool_choice(choice: Any, native: Any) -> None:
    assert gemini._map_tool_choice(choice) == native


def test_map_tools_uses_the_gemini_schema_adapter() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P"}},
        "$defs": {"P": {"type": "string", "enum": ["a"]}},
    }
    tools = gemini._map_tools([{"name": "f", "description": "", "parameters": schema}])
    assert tools is not None
    assert json.loads(tools) == [
        {
            "function_declarations": [
                {
                    "name": "f",
                    "description": "",
                    "parameters": {
                        "type": "object",
                        "properties": {"p": {"type": "string", "enum": ["a"]}},
                    },
                }
            ]
        }
    ]


def test_map_config_options_and_native() -> None:
    req = Request(
        system="sys",
        messages=[],
        tools=None,
        tool_choice=None,
        max_tokens=9,
        temperature=0.2,
        top_p=0.5,
        stop=["X"],
        parallel_tool_calls=False,
        native={"top_k": 3, "temperature": 0.7},
    )
    config = gemini._map_config(req)
    assert config == {
        "system_instruction": "sys",
        "max_output_tokens": 9,
        "temperature": 0.2,
        "top_p": 0.5,
        "stop_sequences": ["X"],
    }
    api_client = GeminiInterface(MODEL, api_key=KEY).client._api_client
    # **native over Zerda's fields, converted by google-genai (topK), a field at a time.
    assert gemini._map_body(api_client, [user("hi")], config, req.native) == {
        "contents": [user("hi")],
        "systemInstruction": {"parts": [{"text": "sys"}], "role": "user"},
        "generationConfig": {
            "maxOutputTokens": 9,
            "temperature": 0.7,
            "topP": 0.5,
            "stopSequences": ["X"],
            "topK": 3.0,
        },
    }


# --- the exact request on the wire ------------------------------------------------------


def test_plain_prompt_body(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", text="hello")
    assert make(mock).generate("hi") == result("hello")
    assert body_of(mock) == {"contents": [user("hi")], "generationConfig": {}}


def test_system_prompt_body(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", text="ok")
    make(mock).generate(
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    )
    assert body_of(mock) == {
        "contents": [user("hi")],
        "systemInstruction": {"parts": [{"text": "be brief"}], "role": "user"},
        "generationConfig": {},
    }


def test_tools_body(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", text="ok")
    make(mock).generate("hi", tools=TOOLS)
    assert body_of(mock) == {
        "contents": [user("hi")],
        "tools": [{"functionDeclarations": [WEATHER_DECL, TIME_DECL]}],
        "generationConfig": {},
    }


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("get_time", {"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
        ({"name": "get_time"}, {"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
        (
            {"type": "function", "function": {"name": "get_time"}},
            {"mode": "ANY", "allowedFunctionNames": ["get_time"]},
        ),
    ],
)
def test_tool_choice_body(mock: MockLLMServer, choice: Any, config: dict[str, Any]) -> None:
    mock.enqueue("gemini", text="ok")
    make(mock).generate("hi", tools=TOOLS, tool_choice=choice)
    assert body_of(mock) == {
        "contents": [user("hi")],
        "tools": [{"functionDeclarations": [WEATHER_DECL, TIME_DECL]}],
        "toolConfig": {"functionCallingConfig": config},
        "generationConfig": {},
    }


def test_options_body(mock: MockLLMServer) -> None:
    mock.enqueue("gemini", text="ok")
    make(mock).generate(
        "hi",
        max_tokens=7,
        temperature=0.5,
        top_p=0.9,
        stop="END",
        seed=4,  # **native: merged into the config
    )
    assert body_of(mock) == {
        "contents": [user("hi")],
        "generationConfig": {
            "temperature": 0.5,
            "topP": 0.9,
            "maxOutputTokens": 7,
            "stopSequences": ["END"],
            "seed": 4,
        },
    }


def _history_contents(first_id: str | None, second_id: str | None, signature: str) -> list[Any]:
    def with_id(call: dict[str, Any], call_id: str | None) -> dict[str, Any]:
        return {"id": call_id, **call} if call_id else call

    weather = with_id({"args": {"city": "Paris"}, "name": "get_weather"}, first_id)
    time_call = with_id({"args": {"city": "Paris"}, "name": "get_time"}, second_id)
    weather_result = with_id(
        {"name": "get_weather", "response": {"temp_c": 18, "sky": "clear"}}, first_id
    )
    time_result = with_id({"name": "get_time", "response": {"result": "14:05"}}, second_id)
    return [
        user("Weather and time in Paris?"),
        {
            "parts": [
                {"functionCall": weather, "thoughtSignature": signature},
                {"functionCall": time_call},
            ],
            "role": "model",
        },
        {
            "parts": [{"functionResponse": weather_result}, {"functionResponse": time_result}],
            "role": "user",
        },
        {"parts": [{"text": "18°C and clear; it is 14:05."}], "role": "model"},
        user("Thanks. And tomorrow?"),
    ]


@pytest.mark.parametrize(
    ("producer", "first", "second", "signature"),
    [
        ("gemini", None, None, "c2lnLW9uZQ=="),
        ("openai", "call_a1B2c3D4e5F6g7H8i9J0k1L2", "call_m3N4o5P6q7R8s9T0u1V2w3X4", PLACEHOLDER),
        ("ollama", None, None, PLACEHOLDER),
        (
            "anthropic",
            "toolu_01A09q90qw90lq917835lq9",
            "toolu_01B18r81rx81mr826724mr8",
            PLACEHOLDER,
        ),
    ],
)
def test_history_body_exact(
    mock: MockLLMServer, producer: str, first: str | None, second: str | None, signature: str
) -> None:
    mock.enqueue("gemini", text="ok")
    make(mock).generate(history_from(producer), tools=TOOLS)
    assert body_of(mock) == {
        "contents": _history_contents(first, second, signature),
        "systemInstruction": {"parts": [{"text": "You are terse."}], "role": "user"},
        "tools": [{"functionDeclarations": [WEATHER_DECL, TIME_DECL]}],
        "generationConfig": {},
    }


def test_a_gemini_result_round_trips_its_signature_and_id(mock: MockLLMServer) -> None:
    signatures = {"gemini": {"thought_signatures": ["QUJD", None]}}
    mock.enqueue(
        "gemini",
        tool_calls=[
            {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "fc-1"},
            {"name": "get_time", "arguments": {"city": "Oslo"}, "id": "fc-2"},
        ],
        provider_data=signatures,
    )
    llm = make(mock)
    first = llm.generate("Oslo?", tools=TOOLS)
    assert first["provider_data"] == signatures
    mock.enqueue("gemini", text="done")
    history = [
        {"role": "user", "content": "Oslo?"},
        first["message"],
        {"role": "tool", "tool_call_id": "fc-2", "name": "get_time", "content": "09:00"},
        {"role": "tool", "tool_call_id": "fc-1", "name": "get_weather", "content": {"t": 1}},
    ]
    llm.generate(history, tools=TOOLS)
    assert body_of(mock)["contents"][1:] == [
        {
            "parts": [
                {
                    "functionCall": {"id": "fc-1", "args": {"city": "Oslo"}, "name": "get_weather"},
                    "thoughtSignature": "QUJD",
                },
                {"functionCall": {"id": "fc-2", "args": {"city": "Oslo"}, "name": "get_time"}},
            ],
            "role": "model",
        },
        {
            "parts": [
                {"functionResponse": {"id": "fc-1", "name": "get_weather", "response": {"t": 1}}},
                {
                    "functionResponse": {
                        "id": "fc-2",
                        "name": "get_time",
                        "response": {"result": "09:00"},
                    }
                },
            ],
            "role": "user",
        },
    ]


# --- result mapping ---------------------------------------------------------------------


def test_text_and_tool_calls_result(mock: MockLLMServer) -> None:
    """A thinking model signs the turn's first call, as Gemini 2.5 and 3 do by default."""
    mock.enqueue(
        "gemini",
        text="Checking.",
        tool_calls=[{"name": "get_weather", "arguments": {"city": "Rome"}}],
        usage={"input_tokens": 12, "output_tokens": 3},
    )
    got = make(mock).generate("Rome?", tools=TOOLS)
    assert got == result(
        "Checking.",
        [{"id": None, "name": "get_weather", "arguments": {"city": "Rome"}}],
        "tool_use",
        {"input_tokens": 12, "output_tokens": 3},
        {"gemini": {"thought_signatures": [GEMINI_THOUGHT_SIGNATURE]}},
    )


def test_the_default_signature_goes_back_on_its_call(mock: MockLLMServer) -> None:
    """Two calls, the first signed by the server: the next request carries the signature on
    that call's part and on no other (https://ai.google.dev/gemini-api/docs/thought-signatures)."""
    mock.enqueue(
        "gemini",
        tool_calls=[
            {"name": "get_weather", "arguments": {"city": "Oslo"}},
            {"name": "get_time", "arguments": {"city": "Oslo"}},
        ],
    )
    llm = make(mock)
    first = llm.generate("Oslo?", tools=TOOLS)
    assert first == result(
        None,
        [
            {"id": None, "name": "get_weather", "arguments": {"city": "Oslo"}},
            {"id": None, "name": "get_time", "arguments": {"city": "Oslo"}},
        ],
        "tool_use",
        provider_data={"gemini": {"thought_signatures": [GEMINI_THOUGHT_SIGNATURE, None]}},
    )
    mock.enqueue("gemini", text="done")
    history = [
        {"role": "user", "content": "Oslo?"},
        first["message"],
        {"role": "tool", "tool_call_id": None, "name": "get_weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": None, "name": "get_time", "content": "09:00"},
    ]
    assert llm.generate(history, tools=TOOLS) == result("done")
    assert body_of(mock)["contents"][1] == {
        "parts": [
            {
                "functionCall": {"args": {"city": "Oslo"}, "name": "get_weather"},
                "thoughtSignature": GEMINI_THOUGHT_SIGNATURE,
            },
            {"functionCall": {"args": {"city": "Oslo"}, "name": "get_time"}},
        ],
        "role": "model",
    }


def test_a_gemini_2_0_model_signs_nothing(mock: MockLLMServer) -> None:
    """Gemini 2.0 does not think: its calls carry no signature (recording
    gemini/pydantic-ai__test_google.test_google_tool_output__i00)."""
    mock.enqueue("gemini", tool_calls=[{"name": "get_weather", "arguments": {}}])
    options = {**mock.client_options("gemini"), "max_retries": 0}
    got = create_interface("gemini", model="gemini-2.0-flash", **options).generate(
        "hi", tools=TOOLS
    )
    expected = result(
        None,
        [{"id": None, "name": "get_weather", "arguments": {}}],
        "tool_use",
        model="gemini-2.0-flash",
    )
    assert got == expected


@pytest.mark.parametrize(
    ("native", "stop"),
    [
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "other"),
        ("OTHER", "other"),
        ("SOMETHING_NEW", "other"),
    ],
)
@pytest.mark.filterwarnings("ignore:SOMETHING_NEW is not a valid FinishReason")
def test_stop_reasons(mock: MockLLMServer, native: str, stop: str) -> None:
    mock.enqueue("gemini", text="x", native_stop_reason=native)
    assert make(mock).generate("hi")["stop_reason"] == stop


def test_calls_mean_tool_use_whatever_the_finish_reason(mock: MockLLMServer) -> None:
    mock.enqueue(
        "gemini", tool_calls=[{"name": "f", "arguments": {}}], native_stop_reason="MAX_TOKENS"
    )
    assert make(mock).generate("hi")["stop_reason"] == "tool_use"


def _raw(mock: MockLLMServer, body: dict[str, Any]) -> None:
    mock.enqueue_raw(200, json.dumps(body), headers={"content-type": "application/json"})


def test_blocked_prompt_is_content_filter(mock: MockLLMServer) -> None:
    _raw(
        mock,
        {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 4}},
    )
    got = make(mock).generate("hi")
    assert got == result(
        None, stop="content_filter", usage={"input_tokens": 4, "output_tokens": None}
    )


def test_thought_parts_are_not_content(mock: MockLLMServer) -> None:
    parts = [
        {"text": "Let me think.", "thought": True},
        {"text": "Answer."},
        {"functionCall": {"name": "f", "args": {"a": 1}, "id": "x1"}, "thoughtSignature": "AAEC"},
        {"functionCall": {"name": "g", "args": {}}},
    ]
    _raw(
        mock,
        {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
        },
    )
    assert make(mock).generate("hi") == result(
        "Answer.",
        [
            {"id": "x1", "name": "f", "arguments": {"a": 1}},
            {"id": None, "name": "g", "arguments": {}},
        ],
        "tool_use",
        {"input_tokens": 3, "output_tokens": 2},
        {"gemini": {"thought_signatures": ["AAEC", None]}},
        reasoning="Let me think.",
    )


def test_no_usage_and_no_content(mock: MockLLMServer) -> None:
    _raw(mock, {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL"}]})
    assert make(mock).generate("hi") == result(None, stop="other", usage=None)


# --- recorded exchanges -----------------------------------------------------------------

_STOPS = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens"}


def _load(path: Path) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return fixture


def _go_sdk_format(fixture: dict[str, Any]) -> bool:
    """langchaingo asked for integer enums (and, streaming, a JSON array), a wire format only
    the Go SDK requests and google-genai cannot read."""
    return "enum-encoding=int" in str((fixture["request"].get("query") or {}).get("$alt", ""))


def expected_from_recording(fixture: dict[str, Any]) -> dict[str, Any]:
    derived = fixture["derived"]
    calls = [
        {"id": c["id"] or None, "name": c["name"], "arguments": c["arguments"]}
        for c in derived["tool_calls"]
    ]
    finish = derived["finish_reason"]
    stop = "tool_use" if calls else _STOPS.get(finish, "other")
    return {"content": derived["text"] or None, "tool_calls": calls, "stop_reason": stop}


def recorded_params(streaming: bool) -> list[Any]:
    if not GEMINI_FILES:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [
        pytest.param(path, id=path.stem)
        for path in GEMINI_FILES
        if bool(_load(path)["streaming"]) is streaming
    ]


@pytest.mark.parametrize("path", recorded_params(streaming=False))
def test_recorded_exchange(mock: MockLLMServer, path: Path) -> None:
    fixture = _load(path)
    mock.enqueue_recorded(fixture, provider="gemini")
    got = make(mock).generate("hi")
    status = fixture["response"]["status"]
    if status >= 400:
        assert got["stop_reason"] == "error"
        assert got["error"]["type"] == error_class_for_status(status).type
        assert got["error"]["status_code"] == status
    elif _go_sdk_format(fixture):
        assert got["stop_reason"] == "error" and got["message"] is None
    else:
        assert {k: got[k] for k in ("content", "tool_calls", "stop_reason")} == (
            expected_from_recording(fixture)
        )
        norm = fixture["derived"]["usage_norm"]  # thoughts counted as output
        assert got["usage"] == (norm if any(v is not None for v in norm.values()) else None)
        assert got["reasoning"] == (fixture["derived"]["reasoning_text"] or None)
    assert len(mock.requests) == 1


# --- faults -----------------------------------------------------------------------------


def test_retry_delay_reads_google_retry_info() -> None:
    details = {
        "error": {
            "code": 429,
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}],
        }
    }
    assert gemini._retry_info_delay(details) == 7.0
    assert gemini._retry_info_delay({"error": {"details": []}}) is None


def test_malformed_body(mock: MockLLMServer) -> None:
    mock.enqueue_fault("malformed", "gemini")
    error = make(mock).generate("hi")["error"]
    assert (error["type"], error["retryable"]) == ("server", False)
    assert error["message"].startswith("gemini sent a malformed response")


def test_an_empty_body_is_a_server_error_not_an_empty_answer(mock: MockLLMServer) -> None:
    # google-genai reads b"" as {}: without the check this was a result with stop "other".
    mock.enqueue_fault("empty", "gemini")
    error = make(mock).generate("hi")["error"]
    assert error == {
        "type": "server",
        "message": "gemini sent a malformed response: "
        "the body is empty (no candidates, prompt feedback or usage)",
        "status_code": None,
        "provider": "gemini",
        "retryable": False,
    }


@pytest.mark.parametrize("body", [{}, {"candidates": []}, {"modelVersion": "m"}])
def test_a_body_with_no_answer_at_all_is_a_server_error(
    mock: MockLLMServer, body: dict[str, Any]
) -> None:
    from google.genai import errors

    _raw(mock, body)
    with pytest.raises(ServerError) as info:
        make(mock).generate("hi", raise_errors=True)
    assert info.value.retryable is False
    assert isinstance(info.value.__cause__, errors.UnknownApiResponseError)


def test_no_candidates_with_usage_is_an_empty_answer(mock: MockLLMServer) -> None:
    _raw(mock, {"candidates": [], "usageMetadata": {"promptTokenCount": 3}})
    assert make(mock).generate("hi") == result(
        None, stop="other", usage={"input_tokens": 3, "output_tokens": None}
    )


@pytest.mark.parametrize(
    "messages",
    ["", [], [{"role": "user", "content": ""}], [{"role": "assistant", "content": None}]],
)
def test_a_history_with_nothing_to_send_is_refused_before_sending(
    mock: MockLLMServer, messages: Any
) -> None:
    error = make(mock).generate(messages)["error"]
    assert (error["type"], error["message"]) == (
        "invalid_request",
        "messages: Gemini needs at least one non-empty message",
    )
    assert [e["type"] for e in make(mock).stream(messages)] == ["done"]
    assert mock.requests == []


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        # Common bad input and the tool-name rule are the contract's; these are Gemini's own.
        ({"no_such_config_field": 1}, "no_such_config_field"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": None, "name": "f", "arguments": {}}],
                        "provider_data": {"gemini": {"thought_signatures": ["not base64!"]}},
                    },
                    {"role": "tool", "content": "x"},
                ]
            },
            "not base64",
        ),
    ],
)
def test_bad_input_is_refused_before_sending(
    mock: MockLLMServer, kwargs: dict[str, Any], fragment: str
) -> None:
    messages = kwargs.pop("messages", "hi")
    got = make(mock).generate(messages, **kwargs)
    assert got["error"]["type"] == "invalid_request"
    assert fragment in got["error"]["message"]
    with pytest.raises(InvalidRequestError):
        make(mock).generate(messages, raise_errors=True, **kwargs)
    assert mock.requests == []


def test_vertex_needs_no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    llm = GeminiInterface(MODEL, vertexai=True, project="p", location="us-central1")
    llm._check_key()  # no AuthenticationError: ADC signs Vertex calls


# --- clients and parity -----------------------------------------------------------------


def test_a_ready_client_is_used(mock: MockLLMServer) -> None:
    from google import genai

    client = genai.Client(**mock.sdk_client_kwargs("gemini"))
    llm = GeminiInterface(MODEL, client=client)
    mock.enqueue("gemini", text="via client")
    assert llm.generate("hi")["content"] == "via client"
    assert llm.client is client


async def test_a_ready_async_client_is_used(mock: MockLLMServer) -> None:
    from google import genai

    client = genai.Client(**mock.sdk_client_kwargs("gemini"))
    llm = GeminiInterface(MODEL, client=client.aio)
    mock.enqueue("gemini", text="via aio")
    assert (await llm.generate_async("hi"))["content"] == "via aio"
    assert llm.async_client is client.aio


async def test_generate_and_generate_async_agree(mock: MockLLMServer) -> None:
    script = {
        "text": "Both.",
        "tool_calls": [{"name": "get_time", "arguments": {"city": "Lima"}, "id": "t1"}],
        "provider_data": {"gemini": {"thought_signatures": ["c2ln"]}},
        "usage": {"input_tokens": 8, "output_tokens": 4, **NO_DETAILS},
    }
    llm = make(mock)
    mock.enqueue("gemini", **script)
    sync = llm.generate("Lima?", tools=TOOLS)
    sync_body = body_of(mock)
    mock.enqueue("gemini", **script)
    assert await llm.generate_async("Lima?", tools=TOOLS) == sync
    assert body_of(mock) == sync_body


def test_the_client_is_built_once_and_held(mock: MockLLMServer) -> None:
    llm = make(mock)
    assert llm.client is llm.client
    # The async side is a Client of its own, built once per event loop (see base.py).
    assert llm.async_client is llm.async_client
    assert llm.async_client is not llm.client.aio
