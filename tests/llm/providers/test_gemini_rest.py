"""Gemini's fast path (issue 12): the REST body Zerda writes is, in JSON terms byte for byte,
the one google-genai's own converter made of the old SDK-form request (the test oracle,
gemini_oracle.py), on the Gemini API and on Vertex AI, for hand-picked requests: media,
thought signatures, reasoning, structured output, cache points, tool_choice, options and
the ``**native`` escape hatch. (tests/llm/conftest.py checks every other request the tests
build the same way.) And the SDK-form arguments derived back from a body
(``_gemini_sdk.sdk_kwargs``: batch requests, the benchmarks' raw side) send that body."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.llm.providers import gemini_oracle
from zerda.llm import create_interface
from zerda.llm.errors import InvalidRequestError
from zerda.llm.wires.gemini import sdk as _gemini_sdk
from zerda.testing import MockLLMServer

pytest.importorskip("google.genai")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
# Bytes whose base64 differs between the standard and URL-safe alphabets.
BINARY = bytes(range(256)) * 3
WEATHER = {
    "name": "get_weather",
    "description": "Weather.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City"},
            "days": {"type": "integer", "minimum": 1, "maximum": 10},
            "unit": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["city"],
    },
}
TIME = {"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}


def _call(i: int, name: str = "get_weather", **args: Any) -> dict[str, Any]:
    return {"id": f"call{i}", "name": name, "arguments": args}


TOOL_TURN = [
    {"role": "user", "content": "Weather in Paris and the time?"},
    {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [_call(1, city="Paris", unit=None), _call(2, "get_time", tz="CET")],
        "provider_data": {
            "gemini": {
                "thought_signatures": [
                    base64.b64encode(BINARY).decode(),  # standard alphabet
                    base64.urlsafe_b64encode(BINARY).decode().rstrip("="),  # URL-safe, unpadded
                ]
            }
        },
    },
    {"role": "tool", "tool_call_id": "call2", "content": "14:05"},
    {"role": "tool", "tool_call_id": "call1", "content": {"temp": 18, "rain": None}},
    {"role": "user", "content": "Thanks."},
]

MEDIA = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look: ünïcödé ✓"},
            {"type": "image", "data": base64.b64encode(PNG).decode(), "media_type": "image/png"},
            {"type": "document", "data": BINARY, "media_type": "application/pdf"},
            {"type": "image", "url": "https://example.com/cat.jpg", "media_type": "image/jpeg"},
            {"type": "file", "uri": "gs://bucket/a.mp3", "media_type": "audio/mpeg"},
        ],
    }
]

TOOL_MEDIA = [
    {"role": "user", "content": "Show me."},
    {"role": "assistant", "content": None, "tool_calls": [_call(1, city="Paris")]},
    {
        "role": "tool",
        "tool_call_id": "call1",
        "content": [
            {"type": "text", "text": "a chart"},
            {"type": "image", "data": BINARY, "media_type": "image/png"},
            {
                "type": "document",
                "url": "https://example.com/a.pdf",
                "media_type": "application/pdf",
            },
        ],
    },
]

FROM_THE_MODEL = [
    {"role": "assistant", "content": None, "tool_calls": [_call(1, city="Rome")]},
    {"role": "tool", "tool_call_id": "call1", "content": [1, 2], "is_error": True},
]

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/T"}},
    },
    "required": ["city"],
    "$defs": {"T": {"type": "string", "enum": ["a", "b"]}},
}

CASES: dict[str, tuple[str, list[dict[str, Any]], dict[str, Any]]] = {
    "plain": ("gemini-2.5-flash", [{"role": "user", "content": "hi"}], {}),
    "tools-and-signatures": ("gemini-2.5-flash", TOOL_TURN, {"tools": [WEATHER, TIME]}),
    "media": ("gemini-2.5-flash", MEDIA, {}),
    "tool-media-gemini-3": ("gemini-3-pro-preview", TOOL_MEDIA, {"tools": [WEATHER]}),
    "tool-media-gemini-2": ("gemini-2.5-flash", TOOL_MEDIA, {"tools": [WEATHER]}),
    "history-from-the-model": ("gemini-2.5-flash", FROM_THE_MODEL, {"tools": [WEATHER]}),
    "options": (
        "gemini-2.5-flash",
        [{"role": "user", "content": "hi"}],
        {"system": "Be brief.", "max_tokens": 50, "temperature": 1, "top_p": 0.5, "stop": ["X"]},
    ),
    "tool-choice-auto": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {"tools": [WEATHER, TIME], "tool_choice": "auto"},
    ),
    "tool-choice-none": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {"tools": [WEATHER, TIME], "tool_choice": "none"},
    ),
    "tool-choice-required": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {"tools": [WEATHER, TIME], "tool_choice": "required"},
    ),
    "tool-choice-named": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {"tools": [WEATHER, TIME], "tool_choice": {"name": "get_time"}},
    ),
    "reasoning-gemini-3": (
        "gemini-3-pro-preview",
        TOOL_TURN,
        {"reasoning": "low", "tools": [WEATHER]},
    ),
    "reasoning-budget": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {"reasoning": "medium", "max_tokens": 30000},
    ),
    "reasoning-off": ("gemini-2.5-flash", TOOL_TURN, {"reasoning": False}),
    "structured": (
        "gemini-2.5-flash",
        [{"role": "user", "content": "A city."}],
        {"response_format": {"name": "city", "schema": SCHEMA}},
    ),
    "cache": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {"system": "Be brief.", "tools": [WEATHER], "cache": True},
    ),
    "timeout": ("gemini-2.5-flash", [{"role": "user", "content": "hi"}], {"timeout": 2.5}),
    "native": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {
            "tools": [WEATHER],
            "temperature": 0.3,
            "max_tokens": 40,
            "safety_settings": [
                {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}
            ],
            "top_k": 5,
            "seed": 7,
            "presence_penalty": 0.5,
            "candidate_count": 1,
            "response_logprobs": True,
            "cached_content": "cachedContents/abc",
            "labels": {"team": "zerda"},
        },
    ),
    "native-overrides": (
        "gemini-2.5-flash",
        TOOL_TURN,
        {
            "system": "mine",
            "tools": [WEATHER],
            "temperature": 0.3,
            "reasoning": "low",
            "max_tokens": 5000,
            # A **native field set to None removes Zerda's, as merging the config dicts did.
            "max_output_tokens": None,
            "system_instruction": "theirs",
            "thinking_config": {"thinking_budget": 0},
            "tool_config": {"function_calling_config": {"mode": "NONE"}},
            "response_mime_type": "application/json",
            "response_schema": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
        },
    ),
    "native-http-options": (
        "gemini-2.5-flash",
        [{"role": "user", "content": "hi"}],
        {"timeout": 3, "http_options": {"headers": {"X-Trace": "1"}, "timeout": 9000}},
    ),
}


_INTERFACES: dict[tuple[str, str, str], Any] = {}


@pytest.fixture(scope="module", params=["gemini", "vertex"])
def server_and_row(request: pytest.FixtureRequest) -> Any:
    with MockLLMServer() as server:
        yield server, request.param
    for llm in _INTERFACES.values():
        llm.close()
    _INTERFACES.clear()


def _interface(server: MockLLMServer, row: str, model: str) -> Any:
    """One interface per server, row and model, closed with the server."""
    key = (server.url, row, model)
    if key not in _INTERFACES:
        options = server.client_options(row)
        _INTERFACES[key] = create_interface(row, model=model, max_retries=0, **options)
    return _INTERFACES[key]


def _own(server: MockLLMServer, model: str) -> Any:
    return create_interface("gemini", model=model, max_retries=0, **server.client_options("gemini"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_body_is_the_sdk_converters(server_and_row: Any, name: str) -> None:
    server, row = server_and_row
    model, messages, kwargs = CASES[name]
    llm = _interface(server, row, model)
    req = llm._prepare(messages, **kwargs)
    native = llm._build_request(req)
    gemini_oracle.check(llm, req, native)  # tests/llm/conftest.py did too; here by name


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_body_goes_on_the_wire_as_built(server_and_row: Any, name: str) -> None:
    """What the mock receives is the body Zerda built (the client adds nothing to it) on
    the model's path, and what google-genai's own call of the derived arguments sends."""
    server, row = server_and_row
    model, messages, kwargs = CASES[name]
    if name == "cache" or "cached_content" in kwargs:
        pytest.skip("the mock has no cachedContents/abc")
    llm = _interface(server, row, model)
    native = llm._native_request(messages, kwargs)
    server.reset()
    server.enqueue(row, text="ok")
    result = llm.generate(messages, **kwargs)
    assert result["stop_reason"] != "error", result.get("error")
    sent = server.last_request(row)
    assert sent.path.endswith(f"{model}:generateContent")
    assert gemini_oracle.canonical(sent.body) == gemini_oracle.canonical(native["body"])
    # google-genai's own generate_content with the arguments derived from the body (which
    # writes the blobs' bytes in the URL-safe alphabet, where Zerda sends the standard one).
    server.reset()
    server.enqueue(row, text="ok")
    llm.client.models.generate_content(**_gemini_sdk.sdk_kwargs(model, native["body"]))
    assert gemini_oracle.canonical(server.last_request(row).body) == gemini_oracle.canonical(
        gemini_oracle.urlsafe_blobs(native["body"])
    )


def test_a_native_field_the_sdk_refuses_is_an_invalid_request_before_sending() -> None:
    with MockLLMServer() as server, _own(server, "gemini-2.5-flash") as llm:
        with pytest.raises(InvalidRequestError, match="top_k") as caught:
            llm.generate("hi", raise_errors=True, top_k="many")
        assert "GenerateContentConfig refuses" in str(caught.value)
        with pytest.raises(InvalidRequestError, match="no_such_field"):
            llm.generate("hi", raise_errors=True, no_such_field=1)
        assert server.requests_for("gemini") == []


def test_the_tools_are_converted_once_per_tool_set() -> None:
    with MockLLMServer() as server, _own(server, "gemini-2.5-flash") as llm:
        first = llm._native_request("hi", {"tools": [WEATHER]})["body"]["tools"]
        again = llm._native_request("hi", {"tools": [json.loads(json.dumps(WEATHER))]})
        assert again["body"]["tools"] is first  # the cached conversion, shared (only read)


def test_building_does_not_mutate_the_callers_messages_or_tools() -> None:
    with MockLLMServer() as server, _own(server, "gemini-3-pro-preview") as llm:
        messages = TOOL_TURN + TOOL_MEDIA[1:]
        before = json.dumps([messages, WEATHER], sort_keys=True, default=repr)
        body = llm._native_request(messages, {"tools": [WEATHER]})["body"]
        json.dumps(body)  # all JSON
        assert json.dumps([messages, WEATHER], sort_keys=True, default=repr) == before
