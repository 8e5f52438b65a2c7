"""MockLLMServer.answer_like_a_model (issue 36): each request answered as a model would
answer it, on every wire of the registry, through Zerda and the wire's real SDK: a call to
an offered tool whose arguments the tool's schema accepts, text after a tool's result, JSON
the structured output's schema accepts, in JSON answers and streams alike."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, Field

from tests.testing.test_layout import _code_only, named_wires
from zerda.llm import create_interface, registry, tool_result
from zerda.testing import MockLLMServer, _instance, _modellike, model_like_answer, wires
from zerda.testing._modellike import OfferedTool, RequestView, answer
from zerda.testing._script import RecordedRequest

# One row per wire protocol, read from the registry: a new wire is covered with no change.
ROWS = [next(n for n in registry.NAMES if registry.get(n).wire == w) for w in registry.wires()]

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city."},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer"},
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        },
        "hours": {"type": "array", "items": {"type": "integer"}},
        "detailed": {"type": "boolean"},
        "note": {"type": "string"},  # optional: left out
    },
    "required": ["city", "unit", "days", "where", "hours", "detailed"],
}
WEATHER_ARGS = {
    "city": "example",
    "unit": "celsius",
    "days": 1,
    "where": {"lat": 1.0, "lon": 1.0},
    "hours": [1],
    "detailed": True,
}
TIME = {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}
TOOLS = [
    {"name": "get_weather", "description": "Weather.", "parameters": WEATHER},
    {"name": "get_time", "description": "Time.", "parameters": TIME},
]
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "role": {"type": "string", "enum": ["admin", "user"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}},
            "required": ["street"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "role", "tags", "address"],
    "additionalProperties": False,
}
PERSON_VALUE = {
    "name": "example",
    "role": "admin",
    "tags": ["example"],
    "address": {"street": "example"},
}


@pytest.fixture(scope="module")
def server() -> Any:
    with MockLLMServer() as s:
        s.answer_like_a_model()
        yield s


def _llm(server: MockLLMServer, row: str) -> Any:
    return create_interface(row, model="m-1", **server.client_options(row))


def _made(interfaces: Callable[..., Any], row: str) -> Any:
    """The row's interface on the module's server, made once (tests/conftest.py)."""
    return interfaces(row, "m-1")


def _streamed(llm: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    events = list(llm.stream(*args, **kwargs))
    assert events[-1]["type"] == "done"
    result: dict[str, Any] = events[-1]["result"]
    return result


# --- through Zerda and each wire's SDK --------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("row", ROWS)
def test_offered_tools_get_a_call_the_schema_accepts(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str, stream: bool
) -> None:
    llm = _made(interfaces, row)
    result = (_streamed if stream else type(llm).generate)(llm, "Weather in Paris?", tools=TOOLS)
    assert result.get("error") is None
    assert result["stop_reason"] == "tool_use"
    assert [(c["name"], c["arguments"]) for c in result["tool_calls"]] == [
        ("get_weather", WEATHER_ARGS)
    ]
    jsonschema.validate(result["tool_calls"][0]["arguments"], WEATHER)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("row", ROWS)
def test_a_tool_result_gets_text(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str, stream: bool
) -> None:
    llm = _made(interfaces, row)
    first = llm.generate("Weather in Paris?", tools=TOOLS)
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        first["message"],
        tool_result(first["tool_calls"][0], {"temp_c": 18}),
    ]
    result = (_streamed if stream else type(llm).generate)(llm, history, tools=TOOLS)
    assert (result["content"], result["tool_calls"], result["stop_reason"]) == (
        "Done.",
        [],
        "end_turn",
    )


@pytest.mark.parametrize("mode", ["native", "tool"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("row", ROWS)
def test_structured_output_is_json_the_schema_accepts(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str, stream: bool, mode: str
) -> None:
    llm = _made(interfaces, row)
    spec = {"name": "Person", "schema": PERSON}
    call = _streamed if stream else type(llm).generate
    result = call(llm, "Who?", response_format=spec, structured_output=mode)
    assert result.get("parse_error") is None
    assert result["parsed"] == PERSON_VALUE
    assert json.loads(result["content"]) == PERSON_VALUE
    jsonschema.validate(result["parsed"], PERSON)


@pytest.mark.parametrize("row", ROWS)
def test_a_named_tool_choice_is_the_tool_called(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str
) -> None:
    result = _made(interfaces, row).generate("Time?", tools=TOOLS, tool_choice="get_time")
    assert [(c["name"], c["arguments"]) for c in result["tool_calls"]] == [
        ("get_time", {"zone": "example"})
    ]


@pytest.mark.parametrize("row", ROWS)
def test_tool_choice_none_gets_text(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str
) -> None:
    result = _made(interfaces, row).generate("Weather?", tools=TOOLS, tool_choice="none")
    assert (result["content"], result["tool_calls"]) == ("Done.", [])


@pytest.mark.parametrize("row", ROWS)
def test_a_tool_loop_runs_one_call_then_answers(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str
) -> None:
    seen: list[str] = []

    def get_weather(city: str) -> str:
        """Current weather for a city."""
        seen.append(city)
        return f"Sunny in {city}."

    result = _made(interfaces, row).run("Weather in Paris?", tools=[get_weather])
    assert seen == ["example"]
    assert result["content"] == "Done."
    assert [m["role"] for m in result["messages"]][-3:] == ["assistant", "tool", "assistant"]


# Rows that can require a call (Ollama cannot: there the model decides, and this one answers
# text after a tool's result).
REQUIRING = [r for r in ROWS if "required" in registry.get(r).traits.tool_choice]


@pytest.mark.parametrize("row", REQUIRING)
def test_tool_mode_beside_tools_calls_a_tool_then_answers_in_the_answer_tool(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str
) -> None:
    """Tool-mode structured output with the caller's tools: the first turn calls the first
    tool; after its result a call is still required, and the answer tool (sent last) gets
    it, so the run ends with the parsed answer."""

    def lookup(name: str) -> str:
        """Look a person up."""
        return f"{name} is an admin."

    spec = {"name": "Person", "schema": PERSON}
    llm = _made(interfaces, row)
    result = llm.run("Who?", tools=[lookup], response_format=spec, structured_output="tool")
    assert result["parsed"] == PERSON_VALUE


def test_async_stream_gets_the_call(server: MockLLMServer, interfaces: Callable[..., Any]) -> None:
    llm = _made(interfaces, "anthropic")

    async def main() -> list[dict[str, Any]]:
        return [e async for e in llm.stream_async("Weather?", tools=TOOLS)]

    events = asyncio.run(main())
    calls = [e["tool_call"] for e in events if e["type"] == "tool_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", WEATHER_ARGS)]
    deltas = [e for e in events if e["type"] == "tool_call_delta"]
    assert len(deltas) > 1  # the arguments come in pieces, as a model streams them
    assert json.loads("".join(d["arguments"] for d in deltas)) == WEATHER_ARGS


def test_a_pydantic_model_is_parsed(server: MockLLMServer, interfaces: Callable[..., Any]) -> None:
    class City(BaseModel):
        name: str
        population: int = Field(ge=1)
        country: str = "FR"

    result = _made(interfaces, "openai").generate("A city?", response_format=City)
    # OpenAI's strict schema requires every property, so the model gives country too.
    assert result["parsed"] == City(name="example", population=1, country="example")


def test_the_queues_still_come_first(server: MockLLMServer, interfaces: Callable[..., Any]) -> None:
    server.enqueue("openai", text="queued")
    llm = _made(interfaces, "openai")
    assert llm.generate("hi", tools=TOOLS)["content"] == "queued"
    assert llm.generate("hi", tools=TOOLS)["tool_calls"][0]["name"] == "get_weather"


def test_one_provider_only() -> None:
    with MockLLMServer() as s:
        s.answer_like_a_model("openai")
        assert _llm(s, "openai").generate("hi")["content"] == "Done."
        assert _llm(s, "groq").generate("hi")["error"]["type"] == "invalid_request"


def test_a_count_request_is_counted_from_the_request(
    server: MockLLMServer, interfaces: Callable[..., Any]
) -> None:
    llm = _made(interfaces, "anthropic")
    counted = llm.count_tokens("Weather in Paris?", tools=TOOLS)
    from zerda.testing._counting import request_tokens

    assert counted["input_tokens"] == request_tokens(server.last_request("anthropic").body)


# --- the decision, wire-free ----------------------------------------------------------------

A = OfferedTool(
    "a", {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
)
B = OfferedTool("b", {"type": "object"})


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        (RequestView(), ("Done.", [])),
        (RequestView(tools=(A, B)), (None, [("a", {"x": 1})])),
        (RequestView(tools=(A, B), choice="named", forced="b"), (None, [("b", {})])),
        (
            RequestView(tools=(A, B), choice="named", forced="b", after_tool_result=True),
            (None, [("b", {})]),
        ),
        (RequestView(tools=(A, B), choice="none"), ("Done.", [])),
        (RequestView(tools=(A, B), after_tool_result=True), ("Done.", [])),
        (RequestView(tools=(A, B), choice="required", after_tool_result=True), (None, [("b", {})])),
        (RequestView(tools=(A, B), choice="required"), (None, [("a", {"x": 1})])),
        (RequestView(wants_json=True), ('{"answer": "Done."}', [])),
        (RequestView(wants_json=True, schema=A.schema), ('{"x": 1}', [])),
        (
            RequestView(tools=(A,), after_tool_result=True, wants_json=True, schema=A.schema),
            ('{"x": 1}', []),
        ),
        (RequestView(tools=(OfferedTool("c", None),)), (None, [("c", {})])),
        (RequestView(tools=(A,), choice="named", forced="missing"), ("Done.", [])),
    ],
)
def test_the_answer_to_each_view(view: RequestView, expected: tuple[Any, Any]) -> None:
    script = answer(view)
    assert (script.text, [(c.name, c.arguments) for c in script.tool_calls]) == expected


def test_a_request_the_view_cannot_read_gets_text() -> None:
    """A body that is not the wire's shape (or not JSON) is no crash: plain text."""
    for row in ROWS:
        for body in (
            None,
            [],
            {"messages": "x", "tools": 3, "tool_choice": [], "contents": {}},
            {"messages": [5], "input": [7], "contents": [{"parts": 3}], "format": 1},
            {"tools": [{"functionDeclarations": 5, "function": 2, "toolSpec": []}, 4]},
            {"toolConfig": {"tools": 1, "toolChoice": 2}, "outputConfig": {"textFormat": 3}},
            {"generationConfig": 1, "output_config": 2, "response_format": 3, "text": 4},
        ):
            req = RecordedRequest(row, "POST", "/x", {}, {}, body)
            assert model_like_answer(req).text == "Done.", (row, body)


@pytest.mark.parametrize("wire", registry.wires())
def test_every_wire_declares_a_view(wire: str) -> None:
    """A new wire says how a model reads its requests (its folder's ``view.py``, or the
    view of the wire whose bodies it shares)."""
    import importlib

    name = wires.mock_wire(wire).view
    assert name is not None and name.startswith(f"{wires.__name__}.")
    assert callable(importlib.import_module(name).read)


@pytest.mark.parametrize("module", [_modellike, _instance], ids=lambda m: m.__name__)
def test_the_model_like_modules_name_no_wire(module: Any) -> None:
    source = Path(module.__file__).read_text(encoding="utf-8")
    assert named_wires(_code_only(source)) == []


# --- the instances -------------------------------------------------------------------------


class _Address(BaseModel):
    street: str
    zip: str = Field(pattern=r"^\d{5}$")


class _Node(BaseModel):
    name: str
    children: list[_Node] = []


class _Everything(BaseModel):
    name: str = Field(min_length=10, max_length=12)
    age: int = Field(gt=17, le=130)
    score: float = Field(gt=0, lt=0.1)
    step: int = Field(multiple_of=7, ge=10)
    mode: str = Field(json_schema_extra={"enum": ["b", "a"]})
    address: _Address
    tags: list[str] = Field(min_length=2)
    nick: str | None
    tree: _Node
    when: str = Field(json_schema_extra={"format": "date-time"})
    code: str = Field(pattern=r"^[A-Z]{3}-[^a-z0-9]\w+(x|y)$")


SCHEMAS = [
    _Everything.model_json_schema(),
    {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True},
    {"type": "number", "multipleOf": 0.25, "minimum": 3.1},
    {"type": "number", "exclusiveMinimum": 5, "exclusiveMaximum": 5.5},
    {"type": "object", "minProperties": 2, "properties": {"a": {}, "b": {"type": "boolean"}}},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"const": 3}}, "required": ["b"]},
        ]
    },
    {"type": ["null", "string"], "format": "email"},
    {"oneOf": [{"type": "null"}, {"type": "object", "properties": {"k": {"enum": ["x"]}}}]},
    {"type": "object", "properties": {}, "additionalProperties": False},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "maxItems": 2},
    {"type": "string", "maxLength": 3},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: json.dumps(s)[:60])
def test_the_instance_is_valid(schema: dict[str, Any]) -> None:
    value = _instance.instance(schema)
    jsonschema.validate(value, schema)
    assert value == _instance.instance(schema)  # deterministic


def test_a_draft_4_exclusive_minimum_is_read() -> None:
    schema = {"type": "integer", "minimum": 5, "exclusiveMinimum": True}
    assert _instance.instance(schema) == 6
    jsonschema.Draft4Validator(schema).validate(6)


def test_the_instance_of_a_pydantic_model_validates_in_it() -> None:
    value = _instance.instance(_Everything.model_json_schema())
    assert _Everything.model_validate(value).address.zip == "00000"
    assert value["tree"] == {"name": "example"}  # the recursion stops at what is required


def test_gemini_style_schemas_are_read() -> None:
    """Gemini's OpenAPI Schema: types in capitals, int64 bounds as strings."""
    schema = {
        "type": "OBJECT",
        "properties": {
            "n": {"type": "INTEGER", "minimum": "5"},
            "xs": {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": "2"},
            "maybe": {"type": "STRING", "nullable": True},
        },
        "required": ["n", "xs", "maybe"],
    }
    expected = {"n": 5, "xs": ["example", "example1"], "maybe": "example"}
    assert _instance.instance(schema) == expected


def test_what_cannot_be_read_is_null() -> None:
    assert _instance.instance(None) is None
    assert _instance.instance({"$ref": "#/$defs/Missing"}) == "example"
    loop = {
        "$defs": {
            "L": {"type": "object", "properties": {"l": {"$ref": "#/$defs/L"}}, "required": ["l"]}
        },
        "$ref": "#/$defs/L",
    }
    depth, node = 0, _instance.instance(loop)
    while isinstance(node, dict):
        depth, node = depth + 1, node["l"]
    assert node is None and depth > 5  # a required recursion stops, it does not hang
