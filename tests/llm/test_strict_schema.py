"""The OpenAI strict-schema transformer: whole outputs, errors naming the path, no mutation,
and every Berkeley Function Calling Leaderboard tool schema made strict obeys the rules."""

from __future__ import annotations

import copy
import json
from typing import Any, Optional

import pytest
from pydantic import BaseModel

from tests.llm.bfcl_schemas import bfcl_functions, openai_schema
from tests.llm.strict_rules import strict_violations
from zerda.llm import _schema_walk
from zerda.llm._strict_schema import to_strict_schema


class Address(BaseModel):
    street: str
    zip: Optional[str] = None  # noqa: UP045 - the pydantic form users write


class Person(BaseModel):
    """A person."""

    name: str
    age: int = 3
    home: Address
    friends: list[Person] = []


def test_pydantic_model_made_strict_whole_output() -> None:
    assert to_strict_schema(Person.model_json_schema(), "response_format 'Person'") == {
        "title": "Person",
        "description": "A person.",
        "type": "object",
        "properties": {
            "name": {"title": "Name", "type": "string"},
            "age": {"title": "Age", "type": ["integer", "null"]},
            "home": {"$ref": "#/$defs/Address"},
            "friends": {
                "title": "Friends",
                "type": ["array", "null"],
                "items": {"$ref": "#/$defs/Person"},
            },
        },
        "required": ["name", "age", "home", "friends"],
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "title": "Address",
                "type": "object",
                "properties": {
                    "street": {"title": "Street", "type": "string"},
                    "zip": {"title": "Zip", "anyOf": [{"type": "string"}, {"type": "null"}]},
                },
                "required": ["street", "zip"],
                "additionalProperties": False,
            },
            "Person": {
                "title": "Person",
                "description": "A person.",
                "type": "object",
                "properties": {
                    "name": {"title": "Name", "type": "string"},
                    "age": {"title": "Age", "type": ["integer", "null"]},
                    "home": {"$ref": "#/$defs/Address"},
                    "friends": {
                        "title": "Friends",
                        "type": ["array", "null"],
                        "items": {"$ref": "#/$defs/Person"},
                    },
                },
                "required": ["name", "age", "home", "friends"],
                "additionalProperties": False,
            },
        },
    }


def test_input_is_not_mutated_nor_shared() -> None:
    schema = Person.model_json_schema()
    before = copy.deepcopy(schema)
    out = to_strict_schema(schema, "x")
    assert schema == before
    out["$defs"]["Address"]["properties"]["street"]["title"] = "changed"
    assert schema == before


def test_ref_with_siblings_is_inlined_and_oneof_becomes_anyof() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A", "description": "the a"},
            "b": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "c": {"allOf": [{"$ref": "#/$defs/A"}]},
        },
        "required": ["a", "b", "c"],
        "$defs": {"A": {"type": "string", "enum": ["x", "y"], "default": "x"}},
    }
    assert to_strict_schema(schema, "t") == {
        "type": "object",
        "properties": {
            "a": {"description": "the a", "type": "string", "enum": ["x", "y"]},
            "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "c": {"$ref": "#/$defs/A"},
        },
        "required": ["a", "b", "c"],
        "additionalProperties": False,
        "$defs": {"A": {"type": "string", "enum": ["x", "y"]}},
    }


def test_optional_enum_gets_null_and_unsupported_keywords_go() -> None:
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["c", "f"], "minLength": 1, "format": "color"},
            "when": {"type": "string", "format": "date-time"},
            "free": {"type": "object"},
        },
    }
    assert to_strict_schema(schema, "t") == {
        "type": "object",
        "properties": {
            "unit": {"type": ["string", "null"], "enum": ["c", "f", None]},
            "when": {"type": ["string", "null"], "format": "date-time"},
            "free": {
                "type": ["object", "null"],
                "properties": {},
                "required": [],
                "additionalProperties": False,
            },
        },
        "required": ["unit", "when", "free"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array", "items": {"type": "string"}}, "schema at #: the root of a strict"),
        (
            {
                "type": "object",
                "properties": {
                    "m": {"type": "object", "additionalProperties": {"type": "integer"}}
                },
            },
            "schema at #/properties/m: a map (additionalProperties with a schema)",
        ),
        (
            {"type": "object", "properties": {"x": {"not": {"type": "string"}}}},
            "schema at #/properties/x: 'not' cannot be expressed",
        ),
        (
            {"type": "object", "properties": {"x": {"description": "anything"}}},
            "schema at #/properties/x: a schema without a type cannot be strict",
        ),
        (
            {"type": "object", "properties": {"x": {"$ref": "other.json#/A"}}},
            "schema at #/properties/x: cannot resolve $ref 'other.json#/A'",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "l": {
                        "type": "array",
                        "items": {"allOf": [{"type": "string"}, {"minLength": 2}]},
                    }
                },
            },
            "schema at #/properties/l/items: an 'allOf' of several schemas",
        ),
    ],
)
def test_schemas_that_cannot_be_strict_name_the_path(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        to_strict_schema(schema, "tool 'f'")
    assert str(info.value).startswith("tool 'f': " + message)


def test_too_deep_is_refused_at_its_path() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    node = schema
    for _ in range(11):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"]["n"] = child
        node = child
    with pytest.raises(ValueError, match=r"#/properties/n(/properties/n){9}: objects nest deeper"):
        to_strict_schema(schema, "t")


def test_gemini_adapter_and_strict_share_one_walker() -> None:
    from zerda.llm import _gemini_schema, _strict_schema

    assert _gemini_schema._Context is _schema_walk.SchemaContext
    assert _strict_schema.SchemaContext is _schema_walk.SchemaContext


def test_the_checker_catches_what_it_checks() -> None:
    # The checker must fail on a schema the transformer would fix.
    raw = {"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}
    assert strict_violations(raw) == [
        "#: additionalProperties must be false",
        "#: every property must be required",
        "#/properties/a: keyword 'minLength' is not supported",
    ]
    assert strict_violations(to_strict_schema(raw, "t")) == []


_BFCL = bfcl_functions()


@pytest.mark.skipif(not _BFCL, reason="bfcl-eval is not installed (make install adds it)")
def test_every_bfcl_schema_made_strict_obeys_the_rules() -> None:
    assert len(_BFCL) >= 3255  # distinct declarations in the package's data files
    failures = {}
    for fn in _BFCL:
        schema = openai_schema(fn["parameters"])
        before = json.dumps(schema, sort_keys=True)
        problems = strict_violations(to_strict_schema(schema, f"tool {fn['name']!r}"))
        assert json.dumps(schema, sort_keys=True) == before
        if problems:
            failures[fn["name"]] = problems
    assert failures == {}
