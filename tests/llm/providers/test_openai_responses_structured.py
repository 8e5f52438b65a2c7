"""openai-responses: structured output through ``text.format``, strict function tools, and
the body sent through ``client.post`` (never ``responses.create``), against MockLLMServer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

NAME = "openai-responses"
WEATHER = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
CITY = {
    "name": "city",
    "schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["name"],
    },
}
STRICT_CITY = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "population": {"type": ["integer", "null"]},
    },
    "required": ["name", "population"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def llm(server: MockLLMServer) -> Any:
    server.reset()
    return create_interface(NAME, model="gpt-4.1", max_retries=0, **server.client_options(NAME))


def test_json_mode_is_a_json_object_format(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, text='{"a": [1, 2]}')
    result = llm.generate("JSON please", response_format="json")
    assert result["parsed"] == {"a": [1, 2]}
    assert server.last_request(NAME).body == {
        "model": "gpt-4.1",
        "input": [{"role": "user", "content": "JSON please"}],
        "store": False,
        "text": {"format": {"type": "json_object"}},
    }


def test_a_schema_beside_tools_stays_native_and_strict(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, text='{"name": "Paris", "population": null}')
    result = llm.generate("Largest city?", tools=[WEATHER], response_format=CITY)
    assert result["parsed"] == {"name": "Paris"}  # the strict null of an optional field dropped
    body = server.last_request(NAME).body
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "city", "schema": STRICT_CITY, "strict": True}
    }
    assert [t["name"] for t in body["tools"]] == ["get_weather"]
    assert "tool_choice" not in body


def test_a_strict_tool_is_sent_strict_with_its_schema_made_strict(
    server: MockLLMServer, llm: Any
) -> None:
    server.enqueue(NAME, text="ok")
    llm.generate("hi", tools=[{**WEATHER, "strict": True}, WEATHER | {"name": "loose"}])
    tools = server.last_request(NAME).body["tools"]
    assert tools == [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": ["string", "null"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
            "strict": True,
            "description": "Weather in a city.",
        },
        {
            "type": "function",
            "name": "loose",
            "parameters": WEATHER["parameters"],
            "strict": False,
            "description": "Weather in a city.",
        },
    ]


def test_the_mock_refuses_a_json_schema_format_without_its_name(server: MockLLMServer) -> None:
    server.reset()
    llm = create_interface(NAME, model="gpt-4.1", max_retries=0, **server.client_options(NAME))
    server.enqueue(NAME, text="never served")
    result = llm.generate("hi", text={"format": {"type": "json_schema", "schema": {}}})
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"] == "Missing required parameter: 'text.format.name'."
    assert server.last_request(NAME).rejected_by == "text_format_valid"


async def test_the_body_goes_through_client_post_never_create(
    server: MockLLMServer, llm: Any
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("responses.create was called")

    llm.client.responses.create = refuse
    llm.async_client.responses.create = refuse
    for _ in range(4):
        server.enqueue(NAME, text="ok", fragments=2)
    assert llm.generate("hi")["content"] == "ok"
    assert (await llm.generate_async("hi"))["content"] == "ok"
    assert list(llm.stream("hi"))[-1]["result"]["content"] == "ok"
    assert [e async for e in llm.stream_async("hi")][-1]["result"]["content"] == "ok"
    paths = [r.path for r in server.requests_for(NAME)]
    assert paths == ["/v1/responses"] * 4


def test_a_keyword_create_does_not_take_is_refused_before_sending(
    server: MockLLMServer, llm: Any
) -> None:
    result = llm.generate("hi", stop_sequences=["x"])
    assert result["error"]["type"] == "invalid_request"
    assert "stop_sequences" in result["error"]["message"]
    assert server.requests_for(NAME) == []


def test_tool_mode_answers_in_a_forced_tool(server: MockLLMServer, llm: Any) -> None:
    server.enqueue(NAME, tool_calls=[{"name": "city", "arguments": {"name": "Paris"}}])
    result = llm.generate("Largest city?", response_format=CITY, structured_output="tool")
    assert (result["content"], result["parsed"]) == (
        json.dumps({"name": "Paris"}),
        {"name": "Paris"},
    )
    assert server.last_request(NAME).body["tool_choice"] == {"type": "function", "name": "city"}
