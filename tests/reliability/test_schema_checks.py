"""Schemas checked before sending (issue 33, "Zerda sends invalid tool schemas"; issue 34,
item 13): tool parameters and response_format schemas that are not JSON Schema, or that
would break the validation of the answer after the call was paid for (a pattern that is no
regular expression, a $ref to nothing, a $ref cycle), are refused on every row before
anything is sent, naming the tool (or response_format), the JSON pointer and what is
accepted. Valid schemas (ECMA-262 patterns, recursive schemas) still go out, verdicts are
cached per schema, and ``import zerda.llm`` does not import jsonschema."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface, registry
from zerda.llm.registry import NAMES
from zerda.testing import MockLLMServer

DRAFT7 = "checked against http://json-schema.org/draft-07/schema#)"
TYPES = "'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'"


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


CYCLE = {
    **obj(a={"$ref": "#/$defs/A"}),
    "$defs": {"A": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/A"}]}},
}
# (schema, the refusal after "tools[0] ('f'): " / "response_format 'm': ")
BAD_SCHEMAS = [
    pytest.param(
        {"type": "objet"},
        f"schema at #/type: 'objet' is not valid under any of the given schemas (accepted: a "
        f"type name ({TYPES}) or a list of them; {DRAFT7}",
        id="objet",
    ),
    pytest.param(
        obj(a={"type": "str"}),
        f"schema at #/properties/a/type: 'str' is not valid under any of the given schemas "
        f"(accepted: a type name ({TYPES}) or a list of them; {DRAFT7}",
        id="str",
    ),
    pytest.param(
        {"type": "object", "required": "a"},
        f"schema at #/required: 'a' is not of type 'array' (accepted: a list of property "
        f"names; {DRAFT7}",
        id="required",
    ),
    pytest.param(
        obj(a={"type": "string", "pattern": "[a-"}),
        "schema at #/properties/a/pattern: '[a-' is not a regular expression (unterminated "
        "character set at position 0); patterns are ECMA-262 regular expressions",
        id="pattern",
    ),
    pytest.param(
        {"type": "object", "patternProperties": {"(": {"type": "string"}}},
        "schema at #/patternProperties: '(' is not a regular expression (missing ), "
        "unterminated subpattern at position 0); patterns are ECMA-262 regular expressions",
        id="pattern-properties",
    ),
    pytest.param(
        obj(a={"$ref": "#/$defs/Nope"}),
        "schema at #/properties/a/$ref: $ref '#/$defs/Nope' points to nothing in the schema",
        id="dangling-ref",
    ),
    pytest.param(
        obj(a={"$ref": "https://example.com/a.json"}),
        "schema at #/properties/a/$ref: $ref 'https://example.com/a.json' points outside the "
        "schema; only references inside it ('#' or '#/...') are accepted",
        id="remote-ref",
    ),
    pytest.param(
        CYCLE,
        "schema at #/$defs/A: a $ref cycle leads back here without descending into "
        "properties or items, so no value can ever be validated against it (a recursive "
        "schema is accepted when its recursion goes through properties or items)",
        id="ref-cycle",
    ),
    pytest.param(
        {"type": "object", "$ref": "#"},
        "schema at #: a $ref cycle leads back here",
        id="root-cycle",
    ),
]
NOT_OBJECTS = [
    pytest.param({"type": "array", "items": {"type": "string"}}, "its type is 'array'", id="array"),
    pytest.param({"properties": {"a": {"type": "string"}}}, "it has no type", id="untyped"),
    pytest.param({"type": ["object", "null"]}, "its type is ['object', 'null']", id="list"),
]


@pytest.fixture(scope="module")
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


_MADE: dict[str, Any] = {}


def llm(server: MockLLMServer, provider: str) -> Any:
    if provider not in _MADE:
        gemini = registry.get(provider).wire in ("gemini", "vertex")
        model = "gemini-3-flash" if gemini else "test-model"
        options = server.client_options(provider)
        _MADE[provider] = create_interface(provider, model=model, max_retries=0, **options)
    return _MADE[provider]


def refused(result: dict[str, Any], message: str, server: MockLLMServer) -> None:
    assert result["error"]["type"] == "invalid_request", result["error"]
    assert result["error"]["message"].startswith(message), result["error"]["message"]
    assert server.requests == []


# --- tools ---------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", NAMES)
@pytest.mark.parametrize(("schema", "problem"), BAD_SCHEMAS)
def test_bad_tool_schemas_are_refused_on_every_row(
    mock: MockLLMServer, provider: str, schema: dict[str, Any], problem: str
) -> None:
    mock.reset()
    tools = [{"name": "ok", "parameters": obj()}, {"name": "f", "parameters": schema}]
    result = llm(mock, provider).generate("q", tools=tools)
    refused(result, f"tools[1] ('f'): {problem}", mock)


@pytest.mark.parametrize("provider", NAMES)
@pytest.mark.parametrize(("schema", "shown"), NOT_OBJECTS)
def test_tool_parameters_must_be_an_object_on_every_row(
    mock: MockLLMServer, provider: str, schema: dict[str, Any], shown: str
) -> None:
    mock.reset()
    result = llm(mock, provider).generate("q", tools=[{"name": "f", "parameters": schema}])
    refused(
        result,
        "tools[0] ('f'): schema at #: the parameters must be an object schema, with "
        f'"type": "object" ({shown})',
        mock,
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic", "bedrock", "gemini", "ollama"])
def test_stream_and_run_refuse_them_too(mock: MockLLMServer, provider: str) -> None:
    mock.reset()
    tools = [{"name": "f", "parameters": {"type": "array"}}]
    message = "tools[0] ('f'): schema at #: the parameters must be an object schema"
    events = list(llm(mock, provider).stream("q", tools=tools))
    assert [e["type"] for e in events] == ["done"]
    refused(events[0]["result"], message, mock)
    refused(llm(mock, provider).run("q", tools=tools), message, mock)


GOOD = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": r"^\p{Lu}\p{Ll}+$"},  # ECMA-262 only
        "date": {"type": "string", "pattern": r"^(?<year>\d{4})-\d\d$"},
        "any": {"type": "string", "pattern": "[^]"},
        "kids": {"type": "array", "items": {"$ref": "#"}},  # recursion through items
        "best": {"$ref": "#/$defs/Kid"},
        "pattern": {"type": "string", "default": {"$ref": "not a reference"}},
    },
    "$defs": {"Kid": {"type": "object", "properties": {"kid": {"$ref": "#/$defs/Kid"}}}},
    "required": ["name"],
}


@pytest.mark.parametrize("provider", NAMES)
def test_valid_schemas_are_sent_on_every_row(mock: MockLLMServer, provider: str) -> None:
    mock.reset()
    mock.enqueue(provider, text="ok")
    result = llm(mock, provider).generate("q", tools=[{"name": "f", "parameters": GOOD}])
    assert "error" not in result, result["error"]
    assert len(mock.requests) == 1


# --- response_format -------------------------------------------------------------------------

OUTPUT_CASES = [(p, mode) for p in NAMES for mode in registry.get(p).traits.structured_output]


@pytest.mark.parametrize(("provider", "mode"), OUTPUT_CASES)
@pytest.mark.parametrize(("schema", "problem"), BAD_SCHEMAS)
def test_bad_response_format_schemas_are_refused_on_every_row(
    mock: MockLLMServer, provider: str, mode: str, schema: dict[str, Any], problem: str
) -> None:
    mock.reset()
    response_format = {"name": "m", "schema": schema}
    result = llm(mock, provider).generate(
        "q", response_format=response_format, structured_output=mode
    )
    refused(result, f"response_format 'm': {problem}", mock)


def test_a_response_format_schema_too_deep_is_refused(mock: MockLLMServer) -> None:
    mock.reset()
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(80):
        schema = obj(a=schema)
    result = llm(mock, "ollama").generate("q", response_format={"name": "m", "schema": schema})
    refused(
        result,
        "response_format 'm': the schema nests 161 levels deep (dicts and lists); Zerda "
        "sends at most 100 on every provider",
        mock,
    )


@pytest.mark.parametrize("provider", ["ollama", "gemini", "openai"])
def test_answers_are_validated_with_ecma_patterns_and_the_checked_draft(
    mock: MockLLMServer, provider: str
) -> None:
    # Python's re has no \p{...}, and draft 2020-12 reads no items list: validating the
    # answer used to crash after the call was paid for.
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": r"^\p{Lu}"},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["name", "pair"],
    }
    response_format = {"name": "m", "schema": schema}
    mock.reset()
    mock.enqueue(provider, text='{"name": "Zoë", "pair": ["a", 1]}')
    result = llm(mock, provider).generate("q", response_format=response_format)
    assert result["parsed"] == {"name": "Zoë", "pair": ["a", 1]}, result
    mock.enqueue(provider, text='{"name": "Zoë", "pair": ["a", "b"]}')
    result = llm(mock, provider).generate("q", response_format=response_format)
    assert result["parse_error"] == (
        "the answer does not match the schema at pair/1: 'b' is not of type 'integer'"
    )


def test_tool_mode_needs_an_object_answer(mock: MockLLMServer) -> None:
    mock.reset()
    response_format = {"name": "xs", "schema": {"type": "array", "items": {"type": "string"}}}
    result = llm(mock, "openai").generate(
        "q", response_format=response_format, structured_output="tool"
    )
    refused(
        result,
        "response_format 'xs': in tool mode the answer travels as a tool's arguments, which "
        'must be an object schema ("type": "object"), not type \'array\'',
        mock,
    )


# --- cost --------------------------------------------------------------------------------------


def test_each_schema_is_checked_once(mock: MockLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from zerda.llm import _schema_check

    checked: list[Any] = []
    real = _schema_check.schema_problem

    def counting(schema: Any) -> str | None:
        checked.append(schema)
        return real(schema)

    monkeypatch.setattr(_schema_check, "schema_problem", counting)
    marker = uuid.uuid4().hex  # schemas no earlier test checked
    tools = [{"name": "f", "description": marker, "parameters": obj(a={"title": marker})}]
    response_format = {"name": "m", "schema": obj(b={"type": "integer", "title": marker})}
    for _ in range(3):
        mock.enqueue("openai", text='{"b": 1}')
        result = llm(mock, "openai").generate("q", tools=tools, response_format=response_format)
        assert "error" not in result
    assert checked == [response_format["schema"], tools[0]["parameters"]]


def test_import_does_not_load_jsonschema() -> None:
    code = "import sys, zerda.llm; print('jsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
