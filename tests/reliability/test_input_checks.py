"""Bad input is refused the same way on every provider, before anything is sent, with a
message that says what to do (issue 18, items 6, 8, 9, 11, 15)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.llm import InvalidRequestError, create_interface
from zerda.llm.base import MAX_SCHEMA_DEPTH
from zerda.testing import MockLLMServer


def refused(llm: Any, messages: Any = "hi", **kwargs: Any) -> str:
    """The invalid_request message, after checking that nothing was sent."""
    result = llm.generate(messages, **kwargs)
    error = result["error"]
    assert (error["type"], error["status_code"], error["retryable"]) == (
        "invalid_request",
        None,
        False,
    )
    with pytest.raises(InvalidRequestError):
        llm.generate(messages, raise_errors=True, **kwargs)
    message: str = error["message"]
    return message


@pytest.fixture
def nothing_sent(server: MockLLMServer) -> Any:
    yield
    assert server.requests == []


def tool(name: str = "get_weather", schema: dict[str, Any] | None = None) -> dict[str, Any]:
    schema = schema or {"type": "object", "properties": {"city": {"type": "string"}}}
    return {"name": name, "description": "Weather.", "parameters": schema}


# --- item 6: tool names are matched whole ------------------------------------------------


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", ["get_weather\n", "get_weather\n\n", "\nget_weather"])
def test_a_tool_name_with_a_newline_is_refused(llms: Interfaces, provider: str, name: str) -> None:
    message = refused(llms.get(provider), tools=[tool(name)])
    assert f"tools[0]: {provider} refuses the tool name {name!r}" in message


# --- item 8: values no provider can take -------------------------------------------------

LONE_SURROGATE = "bad \ud800 text"


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"messages": LONE_SURROGATE}, "messages[0]: 'content' holds the lone surrogate"),
        (
            {"messages": [{"role": "user", "content": LONE_SURROGATE}]},
            "messages[0]: 'content' holds the lone surrogate '\\ud800' at position 4",
        ),
        ({"system": LONE_SURROGATE}, "system holds the lone surrogate"),
        ({"stop": [LONE_SURROGATE]}, "stop[0] holds the lone surrogate"),
        (
            {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "c1", "name": "f", "arguments": {"x": "\udfff"}}],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                ]
            },
            "messages[1]: tool_calls[0].arguments cannot be sent as JSON",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "c1", "name": "f", "arguments": {}}],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": LONE_SURROGATE},
                ]
            },
            "messages[2]: tool message 'content' cannot be sent as JSON",
        ),
        ({"temperature": math.nan}, "temperature must be a finite number, not nan"),
        ({"temperature": math.inf}, "temperature must be a finite number, not inf"),
        ({"temperature": "0.5"}, "temperature must be a number, not '0.5'"),
        ({"top_p": math.nan}, "top_p must be a finite number"),
        ({"max_tokens": 0}, "max_tokens must be a positive integer, not 0"),
        ({"max_tokens": "100"}, "max_tokens must be a positive integer, not '100'"),
        ({"max_tokens": True}, "max_tokens must be a positive integer, not True"),
        ({"stop": 123}, "stop must be a string or a list of strings, not 123"),
        ({"stop": ["ok", 5]}, "stop[1] must be a string, not 5"),
        ({"parallel_tool_calls": "no"}, "parallel_tool_calls must be True, False or None"),
    ],
    ids=lambda v: repr(v)[:40] if isinstance(v, dict) else "",
)
def test_a_value_no_provider_takes_is_invalid_request(
    llms: Interfaces, provider: str, kwargs: dict[str, Any], expected: str
) -> None:
    kwargs = dict(kwargs)
    messages = kwargs.pop("messages", "hi")
    assert expected in refused(llms.get(provider), messages, **kwargs)


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_tool_description_with_a_lone_surrogate_is_refused(
    llms: Interfaces, provider: str
) -> None:
    bad = {**tool(), "description": LONE_SURROGATE}
    message = refused(llms.get(provider), tools=[bad])
    assert "tools[0] ('get_weather'): the description holds the lone surrogate" in message


# --- item 9: deep tool schemas -----------------------------------------------------------


def nested_schema(levels: int) -> dict[str, Any]:
    """``levels`` object schemas, each the only property of the one above: every level is
    two dicts deep (the schema and its ``properties``)."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("levels", [MAX_SCHEMA_DEPTH // 2, 200, 5000])
def test_a_schema_nested_past_the_limit_is_refused_naming_its_depth(
    llms: Interfaces, provider: str, levels: int
) -> None:
    message = refused(llms.get(provider), tools=[tool(schema=nested_schema(levels))])
    depth = 2 * levels + 1
    assert message == (
        f"tools[0] ('get_weather'): the schema nests {depth} levels deep (dicts and lists); "
        f"Zerda sends at most {MAX_SCHEMA_DEPTH} on every provider"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_schema_at_the_limit_is_sent(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    schema = nested_schema((MAX_SCHEMA_DEPTH - 1) // 2)
    server.enqueue(provider, text="fine")

    result = llms.get(provider).generate("hi", tools=[tool(schema=schema)])

    assert result["content"] == "fine", result.get("error")
    assert len(server.requests_for(provider)) == 1


# --- item 11: generate(stream=True) -----------------------------------------------------


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("value", [True, False])
def test_generate_with_stream_points_to_llm_stream(
    llms: Interfaces, provider: str, value: bool
) -> None:
    message = refused(llms.get(provider), stream=value)
    assert "llm.stream(" in message and "generate()" in message


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_run_with_stream_is_the_streamed_loop_not_a_generate_argument(
    llms: Interfaces, provider: str
) -> None:
    # run(stream=True) streams the whole loop (docs/loop.md): the loop takes the argument,
    # it never reaches generate; nothing is sent before the iterator is read.
    def noop() -> str:
        """Does nothing."""
        return "ok"

    events = llms.get(provider).run("hi", tools=[noop], stream=True)

    assert hasattr(events, "__next__")
    events.close()


# --- item 15: messages that say what to do -----------------------------------------------


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_openai_shaped_history_is_named_as_such(llms: Interfaces, provider: str) -> None:
    history = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]
    message = refused(llms.get(provider), history)
    assert message.startswith("messages[1]: tool_calls[0] looks like an OpenAI tool call")
    assert "{'id', 'name', 'arguments'}" in message
    assert "docs/getting-started.md" in message


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_whole_result_appended_to_the_history_is_named_as_such(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    result = {
        "content": "Hello",
        "tool_calls": [],
        "stop_reason": "end_turn",
        "usage": None,
        "message": {"role": "assistant", "content": "Hello", "tool_calls": []},
    }
    history = [{"role": "user", "content": "hi"}, result, {"role": "user", "content": "more"}]
    message = refused(llms.get(provider), history)
    assert message.startswith("messages[1]: this is a whole result of generate()")
    assert "append result['message']" in message


@pytest.mark.usefixtures("nothing_sent")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_content_none_is_reported_as_none(llms: Interfaces, provider: str) -> None:
    message = refused(llms.get(provider), [{"role": "user", "content": None}])
    assert message == "messages[0]: user message 'content' must be a string, got None"
    message = refused(llms.get(provider), [{"role": "user"}])
    assert message == "messages[0]: user message 'content' must be a string, got missing"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_model_given_twice_says_so(provider: str) -> None:
    with pytest.raises(ValueError) as info:
        create_interface(f"{provider}:model-a", model="model-b")
    assert str(info.value) == (
        f"the model is given twice: 'model-a' in {provider + ':model-a'!r} and "
        "model='model-b'; give one"
    )
