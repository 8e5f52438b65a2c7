"""Tests for zerda.llm._gemini_schema.to_gemini_schema (JSON Schema -> Gemini's subset)."""

from __future__ import annotations

import copy
import enum
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from zerda.llm._gemini_schema import to_gemini_schema

genai_types = pytest.importorskip("google.genai.types")
genai_models = pytest.importorskip("google.genai.models")
genai_common = pytest.importorskip("google.genai._common")

SRC = Path(__file__).resolve().parents[2] / "src"


def validate(parameters: dict) -> Any:
    """Build the SDK Tool the way Zerda passes it; fail on any SDK warning too."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return genai_types.Tool.model_validate(
            {"function_declarations": [{"name": "t", "description": "d", "parameters": parameters}]}
        )


def wire(parameters: dict) -> dict:
    """Return the JSON the SDK sends to the Gemini Developer API for these parameters."""
    tool = genai_models._Tool_to_mldev(validate(parameters))
    body = genai_common.encode_unserializable_types(genai_common.convert_to_dict(tool))
    return json.loads(json.dumps(body))["functionDeclarations"][0]["parameters"]


def obj(**properties: Any) -> dict:
    """The converted root wrapping the given converted properties."""
    return {"type": "object", "properties": properties}


def root(**properties: Any) -> dict:
    """An input root object schema with the given properties."""
    return {"type": "object", "properties": properties}


# Each case: (input property schema, expected converted property schema).
PROPERTY_CASES: dict[str, tuple[Any, dict]] = {
    "plain string": ({"type": "string"}, {"type": "string"}),
    "description and title kept": (
        {"type": "integer", "title": "Count", "description": "How many."},
        {"type": "integer", "title": "Count", "description": "How many."},
    ),
    "upper-case type": ({"type": "STRING"}, {"type": "string"}),
    "unknown type dropped": ({"type": "file", "description": "x"}, {"description": "x"}),
    "type list with null": (
        {"type": ["string", "null"], "maxLength": 3},
        {"type": "string", "maxLength": 3, "nullable": True},
    ),
    "type list of two types": (
        {"type": ["string", "integer"], "description": "id", "minLength": 1, "minimum": 0},
        {
            "description": "id",
            "anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}],
        },
    ),
    "type null alone": ({"type": "null"}, {"nullable": True}),
    "openapi nullable kept": (
        {"type": "string", "nullable": True},
        {"type": "string", "nullable": True},
    ),
    "string enum": (
        {"type": "string", "enum": ["a", "b", "a"]},
        {"type": "string", "enum": ["a", "b"]},
    ),
    "enum without type": ({"enum": ["x", "y"]}, {"type": "string", "enum": ["x", "y"]}),
    "enum with null": (
        {"enum": ["x", None]},
        {"type": "string", "enum": ["x"], "nullable": True},
    ),
    "string const": ({"const": "fixed"}, {"type": "string", "enum": ["fixed"]}),
    "integer const": (
        {"type": "integer", "const": 3},
        {"type": "integer", "format": "enum", "enum": ["3"]},
    ),
    "integer enum": (
        {"type": "integer", "enum": [1, 2, 3]},
        {"type": "integer", "format": "enum", "enum": ["1", "2", "3"]},
    ),
    "number enum with ints and floats": (
        {"enum": [1, 2.5]},
        {"type": "number", "format": "enum", "enum": ["1", "2.5"]},
    ),
    "gemini-style numeric enum kept": (
        {"type": "integer", "format": "enum", "enum": ["101", "201"]},
        {"type": "integer", "format": "enum", "enum": ["101", "201"]},
    ),
    "boolean const keeps type only": ({"const": True}, {"type": "boolean"}),
    "null const": ({"const": None}, {"nullable": True}),
    "mixed enum": (
        {"enum": ["a", 1, True, None]},
        {
            "anyOf": [
                {"type": "string", "enum": ["a"]},
                {"type": "integer", "format": "enum", "enum": ["1"]},
                {"type": "boolean"},
            ],
            "nullable": True,
        },
    ),
    "object enum keeps type only": (
        {"enum": [{"a": 1}]},
        {"type": "object"},
    ),
    "string formats kept": (
        {"type": "string", "format": "date-time", "pattern": "^2", "minLength": 1, "maxLength": 30},
        {"type": "string", "format": "date-time", "pattern": "^2", "minLength": 1, "maxLength": 30},
    ),
    "uncommon string format kept": (
        {"type": "string", "format": "uuid"},
        {"type": "string", "format": "uuid"},
    ),
    "numeric formats Gemini knows kept": (
        {"type": "integer", "format": "int64"},
        {"type": "integer", "format": "int64"},
    ),
    "numeric format Gemini lacks dropped": (
        {"type": "number", "format": "decimal"},
        {"type": "number"},
    ),
    "number bounds": (
        {"type": "number", "minimum": 0.5, "maximum": 10},
        {"type": "number", "minimum": 0.5, "maximum": 10},
    ),
    "integer exclusive bounds are exact": (
        {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
        {"type": "integer", "minimum": 1, "maximum": 9},
    ),
    "number exclusive bounds become inclusive": (
        {"type": "number", "exclusiveMinimum": 0.5},
        {"type": "number", "minimum": 0.5},
    ),
    "tighter bound wins": (
        {
            "type": "integer",
            "minimum": 5,
            "exclusiveMinimum": 2,
            "maximum": 7,
            "exclusiveMaximum": 7,
        },
        {"type": "integer", "minimum": 5, "maximum": 6},
    ),
    "draft 4 boolean exclusive bound": (
        {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
        {"type": "integer", "minimum": 1},
    ),
    "bounds of the wrong type dropped": (
        {"type": "string", "minLength": "3", "maxLength": -1, "pattern": 5},
        {"type": "string"},
    ),
    "whole float counts become ints": (
        {"type": "array", "items": {"type": "string"}, "minItems": 1.0, "maxItems": 2.5},
        {"type": "array", "items": {"type": "string"}, "minItems": 1},
    ),
    "array of strings": (
        {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
        {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
    ),
    "array without items gets empty items": (
        {"type": "array"},
        {"type": "array", "items": {}},
    ),
    "items imply array": (
        {"items": {"type": "integer"}},
        {"type": "array", "items": {"type": "integer"}},
    ),
    "prefixItems of two types": (
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2},
        {
            "type": "array",
            "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "minItems": 2,
        },
    ),
    "prefixItems of one type with items false": (
        {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": False},
        {"type": "array", "items": {"type": "number"}, "maxItems": 2},
    ),
    "prefixItems plus additional items": (
        {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "boolean"}},
        {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}},
    ),
    "draft 4 items list": (
        {"type": "array", "items": [{"type": "string"}, {"type": "string"}]},
        {"type": "array", "items": {"type": "string"}},
    ),
    "nested object with required filtered": (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a", "missing", "a"],
            "minProperties": 1,
            "maxProperties": 2,
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a"],
            "minProperties": 1,
            "maxProperties": 2,
        },
    ),
    "properties imply object": (
        {"properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "string"}}},
    ),
    "required without properties dropped": (
        {"type": "object", "required": ["a"]},
        {"type": "object"},
    ),
    "additionalProperties dropped": (
        {"type": "object", "additionalProperties": {"type": "integer"}, "description": "counts"},
        {"type": "object", "description": "counts"},
    ),
    "propertyOrdering filtered": (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "propertyOrdering": ["b", "zz", "a"],
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "propertyOrdering": ["b", "a"],
        },
    ),
    "anyOf with null becomes nullable": (
        {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Age"},
        {"type": "integer", "title": "Age", "nullable": True},
    ),
    "anyOf of two types stays anyOf": (
        {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}], "description": "u"},
        {"description": "u", "anyOf": [{"type": "integer"}, {"type": "string"}], "nullable": True},
    ),
    "anyOf duplicates collapse": (
        {"anyOf": [{"type": "string"}, {"type": "string"}]},
        {"type": "string"},
    ),
    "oneOf becomes anyOf": (
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
        {"anyOf": [{"type": "string"}, {"type": "number"}]},
    ),
    "anyOf wins over oneOf": (
        {"anyOf": [{"type": "string"}, {"type": "number"}], "oneOf": [{"type": "boolean"}]},
        {"anyOf": [{"type": "string"}, {"type": "number"}]},
    ),
    "snake_case gemini keys read": (
        {
            "any_of": [
                {"type": "array", "items": {"type": "string"}, "max_items": 2},
                {"type": "null"},
            ]
        },
        {"type": "array", "items": {"type": "string"}, "maxItems": 2, "nullable": True},
    ),
    "allOf of one item merged": (
        {"allOf": [{"type": "string", "description": "inner"}], "description": "outer"},
        {"type": "string", "description": "outer"},
    ),
    "allOf of objects united": (
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ]
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
    "examples give example": (
        {"type": "string", "examples": ["x", "y"]},
        {"type": "string", "example": "x"},
    ),
    "openapi example kept": (
        {"type": "object", "example": {"k": [1]}},
        {"type": "object", "example": {"k": [1]}},
    ),
    "default kept": (
        {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
        {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
    ),
    "non-standard keys dropped": (
        {
            "type": "string",
            "optional": True,
            "x-foo": {"bar": 1},
            "strict": True,
            "$comment": "c",
            "readOnly": True,
            "deprecated": True,
            "uniqueItems": True,
            "multipleOf": 2,
            "not": {"type": "null"},
        },
        {"type": "string"},
    ),
    "boolean true schema is any": (True, {}),
    "empty schema is any": ({}, {}),
    "non-string description dropped": ({"type": "string", "description": 3}, {"type": "string"}),
}


@pytest.mark.parametrize("case", list(PROPERTY_CASES))
def test_property_schema_is_converted_exactly(case: str) -> None:
    given_schema, expected = PROPERTY_CASES[case]
    result = to_gemini_schema(root(p=given_schema), "tool")
    assert result == obj(p=expected)
    validate(result)


def test_empty_root_becomes_empty_object() -> None:
    assert to_gemini_schema({}, "t") == {"type": "object", "properties": {}}


def test_root_object_without_properties_gets_empty_properties() -> None:
    schema = {"type": "object", "additionalProperties": True, "strict": True, "title": "Args"}
    assert to_gemini_schema(schema, "t") == {"type": "object", "title": "Args", "properties": {}}


def test_ref_is_inlined_and_siblings_override() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Addr", "description": "Where they live."},
            "old": {"$ref": "#/definitions/Old"},
        },
        "$defs": {
            "Addr": {
                "type": "object",
                "description": "An address.",
                "properties": {"street": {"type": "string"}},
                "required": ["street"],
            }
        },
        "definitions": {"Old": {"type": "integer"}},
    }
    assert to_gemini_schema(schema, "t") == obj(
        home={
            "type": "object",
            "description": "Where they live.",
            "properties": {"street": {"type": "string"}},
            "required": ["street"],
        },
        old={"type": "integer"},
    )


def test_ref_to_any_json_pointer_is_inlined() -> None:
    schema = root(
        a={"type": "string", "enum": ["x"]},
        b={"$ref": "#/properties/a"},
        c={"$ref": "#/$defs/we~1ird~0name%20x"},
    )
    schema["$defs"] = {"we/ird~name x": {"type": "boolean"}}
    assert to_gemini_schema(schema, "t") == obj(
        a={"type": "string", "enum": ["x"]},
        b={"type": "string", "enum": ["x"]},
        c={"type": "boolean"},
    )


def test_optional_ref_becomes_nullable_object() -> None:
    schema = root(
        pet={
            "anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}],
            "default": None,
            "description": "The pet.",
        }
    )
    schema["$defs"] = {"Pet": {"type": "object", "title": "Pet", "properties": {"n": {}}}}
    assert to_gemini_schema(schema, "t") == obj(
        pet={
            "type": "object",
            "title": "Pet",
            "description": "The pet.",
            "properties": {"n": {}},
            "nullable": True,
        }
    )


def test_recursive_ref_is_cut_after_two_expansions() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "next": {
                        "anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}],
                        "description": "n",
                    },
                },
            }
        },
        "$ref": "#/$defs/Node",
    }
    assert to_gemini_schema(schema, "t") == {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "next": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "next": {"description": "n", "nullable": True},
                },
                "description": "n",
                "nullable": True,
            },
        },
    }


def test_root_self_reference_is_cut() -> None:
    schema = root(child={"$ref": "#"})
    inner = {"type": "object", "properties": {"child": {}}}
    assert to_gemini_schema(schema, "t") == obj(
        child={"type": "object", "properties": {"child": inner}}
    )


def test_mutual_recursion_terminates_and_validates() -> None:
    schema = {
        "$defs": {
            "A": root(b1={"$ref": "#/$defs/B"}, b2={"$ref": "#/$defs/B"}),
            "B": root(a1={"$ref": "#/$defs/A"}, a2={"$ref": "#/$defs/A"}),
        },
        "$ref": "#/$defs/A",
    }
    validate(to_gemini_schema(schema, "t"))


def test_external_ref_raises_naming_the_tool() -> None:
    schema = root(a={"$ref": "https://example.com/schema.json"})
    with pytest.raises(ValueError, match=r"tool 'lookup'.*#/properties/a.*https://example.com"):
        to_gemini_schema(schema, "lookup")


def test_dangling_ref_raises_naming_the_tool() -> None:
    with pytest.raises(ValueError, match=r"tool 'lookup'.*'#/\$defs/Nope' points to nothing"):
        to_gemini_schema(root(a={"$ref": "#/$defs/Nope"}), "lookup")


def test_non_schema_value_raises_with_its_path() -> None:
    with pytest.raises(ValueError, match=r"tool 't': schema at #/properties/a/items: .*str"):
        to_gemini_schema(root(a={"type": "array", "items": "string"}), "t")


def test_non_dict_root_raises() -> None:
    with pytest.raises(ValueError, match="tool 't'"):
        to_gemini_schema(["not", "a", "schema"], "t")  # type: ignore[arg-type]


def test_output_shares_no_dict_or_list_with_input() -> None:
    default = {"k": [1, 2]}
    schema = root(
        a={"type": "object", "default": default, "examples": [[1]]}, b={"$ref": "#/$defs/B"}
    )
    schema["$defs"] = {"B": {"type": "object", "properties": {"c": {"type": "string"}}}}
    snapshot = copy.deepcopy(schema)
    result = to_gemini_schema(schema, "t")
    assert schema == snapshot
    assert not _container_ids(result) & _container_ids(schema)


def _container_ids(value: Any) -> set[int]:
    if isinstance(value, dict):
        return {id(value)}.union(*(_container_ids(v) for v in value.values()))
    if isinstance(value, list):
        return {id(value)}.union(*(_container_ids(v) for v in value))
    return set()


def test_sdk_sends_the_converted_schema_on_the_wire() -> None:
    result = to_gemini_schema(
        root(
            n={"anyOf": [{"type": "integer", "maximum": 3}, {"type": "null"}]},
            e={"enum": [1, 2]},
            s={"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        ),
        "t",
    )
    assert wire(result) == {
        "type": "OBJECT",
        "properties": {
            "n": {"type": "INTEGER", "maximum": 3.0, "nullable": True},
            "e": {"type": "INTEGER", "format": "enum", "enum": ["1", "2"]},
            "s": {"any_of": [{"type": "STRING"}, {"type": "ARRAY", "items": {"type": "STRING"}}]},
        },
    }


def test_module_imports_neither_pydantic_nor_an_sdk() -> None:
    code = (
        "import sys, zerda.llm._gemini_schema; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pydantic', 'google')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(SRC)})


# --- pydantic-generated schemas -------------------------------------------------------------


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address."""

    street: str
    zip_code: str | None = None


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class Everything(BaseModel):
    """A model with every common field shape."""

    name: Annotated[str, Field(description="Full name.", min_length=1, max_length=50)]
    age: int | None = Field(None, ge=0, lt=150)
    mode: Literal["fast", "slow"] = "fast"
    fixed: Literal["x"] = "x"
    one: Literal[1] = 1
    color: Color = Color.RED
    level: Level = Level.LOW
    home: Address
    work: Address | None = Field(None, description="Office address.")
    previous: list[Address] = []
    scores: dict[str, float] = {}
    ident: int | str
    pair: tuple[int, str]
    pet: Cat | Dog = Field(discriminator="kind")
    tree: TreeNode | None = None
    ratio: float = Field(0.5, gt=0, le=1)
    tags: set[str] = set()


def test_pydantic_model_converts_exactly() -> None:
    address = {
        "type": "object",
        "title": "Address",
        "description": "A postal address.",
        "properties": {
            "street": {"type": "string", "title": "Street"},
            "zip_code": {"type": "string", "title": "Zip Code", "nullable": True},
        },
        "required": ["street"],
    }
    leaf = {
        "type": "object",
        "title": "TreeNode",
        "properties": {
            "value": {"type": "integer", "title": "Value"},
            "children": {"type": "array", "title": "Children", "items": {}, "default": []},
        },
        "required": ["value"],
    }
    result = to_gemini_schema(Everything.model_json_schema(), "everything")
    assert result["properties"] == {
        "name": {
            "type": "string",
            "title": "Name",
            "description": "Full name.",
            "minLength": 1,
            "maxLength": 50,
        },
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 149, "nullable": True},
        "mode": {"type": "string", "title": "Mode", "enum": ["fast", "slow"], "default": "fast"},
        "fixed": {"type": "string", "title": "Fixed", "enum": ["x"], "default": "x"},
        "one": {"type": "integer", "title": "One", "format": "enum", "enum": ["1"], "default": 1},
        "color": {"type": "string", "title": "Color", "enum": ["red", "green"], "default": "red"},
        "level": {
            "type": "integer",
            "title": "Level",
            "format": "enum",
            "enum": ["1", "2"],
            "default": 1,
        },
        "home": address,
        "work": {**address, "description": "Office address.", "nullable": True},
        "previous": {"type": "array", "title": "Previous", "items": address, "default": []},
        "scores": {"type": "object", "title": "Scores", "default": {}},
        "ident": {"title": "Ident", "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "pair": {
            "type": "array",
            "title": "Pair",
            "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "minItems": 2,
            "maxItems": 2,
        },
        "pet": {
            "title": "Pet",
            "anyOf": [
                {
                    "type": "object",
                    "title": "Cat",
                    "properties": {
                        "kind": {"type": "string", "title": "Kind", "enum": ["cat"]},
                        "lives": {"type": "integer", "title": "Lives", "default": 9},
                    },
                    "required": ["kind"],
                },
                {
                    "type": "object",
                    "title": "Dog",
                    "properties": {
                        "kind": {"type": "string", "title": "Kind", "enum": ["dog"]},
                        "good": {"type": "boolean", "title": "Good", "default": True},
                    },
                    "required": ["kind"],
                },
            ],
        },
        "tree": {
            "type": "object",
            "title": "TreeNode",
            "properties": {
                "value": {"type": "integer", "title": "Value"},
                "children": {"type": "array", "title": "Children", "items": leaf, "default": []},
            },
            "required": ["value"],
            "nullable": True,
        },
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1, "default": 0.5},
        "tags": {"type": "array", "title": "Tags", "items": {"type": "string"}, "default": []},
    }
    assert result["required"] == ["name", "home", "ident", "pair", "pet"]
    assert result["title"] == "Everything"
    assert result["description"] == "A model with every common field shape."
    validate(result)


class Item(BaseModel):
    sku: str
    qty: int = Field(1, description="How many.")


class Order(BaseModel):
    items: list[Item]
    notes: str | None = None


class Wrapper(BaseModel):
    order: Order
    orders_by_id: dict[str, Order] = {}
    maybe: list[Item | None] | None = None


class Recursive(BaseModel):
    name: str
    parent: Recursive | None = None
    siblings: list[Recursive] = []


PYDANTIC_MODELS = [Everything, Address, TreeNode, Cat, Item, Order, Wrapper, Recursive]


@pytest.mark.parametrize("model", PYDANTIC_MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("mode", ["validation", "serialization"])
def test_pydantic_schema_is_accepted_by_the_sdk(model: type[BaseModel], mode: str) -> None:
    schema = model.model_json_schema(mode=mode)  # type: ignore[arg-type]
    snapshot = copy.deepcopy(schema)
    result = to_gemini_schema(schema, model.__name__)
    assert schema == snapshot
    assert wire(result)["type"] == "OBJECT"
    assert "$ref" not in json.dumps(result)


# --- property test --------------------------------------------------------------------------

DEF_NAMES = ["A", "B", "C"]
JSON_SCALARS = (
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-3, 3) | st.text(max_size=3)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=4,
)
TYPE_NAMES = st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null"])
UNKNOWN_KEYS = st.dictionaries(
    st.sampled_from(["x-foo", "optional", "strict", "$comment", "uniqueItems", "readOnly"]),
    JSON_VALUES,
    max_size=2,
)


def _leaf_schemas() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda t: {"type": t}, TYPE_NAMES),
        st.builds(lambda ts: {"type": ts}, st.lists(TYPE_NAMES, min_size=1, max_size=3)),
        st.builds(lambda v: {"enum": v}, st.lists(JSON_VALUES, min_size=1, max_size=4)),
        st.builds(lambda v: {"const": v}, JSON_VALUES),
        st.builds(lambda n: {"$ref": f"#/$defs/{n}"}, st.sampled_from(DEF_NAMES)),
        st.just({"$ref": "#"}),
        st.booleans(),
        st.just({}),
        st.fixed_dictionaries(
            {"type": st.sampled_from(["string", "integer", "number"])},
            optional={
                "format": st.sampled_from(["date-time", "int32", "float", "uuid", "enum"]),
                "minimum": st.integers(-3, 3) | st.floats(-3, 3),
                "exclusiveMaximum": st.integers(-3, 3) | st.booleans(),
                "minLength": st.integers(0, 3),
                "pattern": st.just("^a"),
                "default": JSON_VALUES,
                "examples": st.lists(JSON_VALUES, max_size=2),
                "description": st.text(max_size=5),
                "title": st.text(max_size=5),
                "nullable": st.booleans(),
            },
        ),
    )


def _composite(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.text(min_size=1, max_size=3)
    return st.one_of(
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": req,
                **extra,
            },
            st.dictionaries(names, inner, max_size=3),
            st.lists(names, max_size=3),
            UNKNOWN_KEYS,
        ),
        st.builds(
            lambda items, extra: {"type": "array", "items": items, **extra}, inner, UNKNOWN_KEYS
        ),
        st.builds(
            lambda prefix, items: {"prefixItems": prefix, "items": items},
            st.lists(inner, max_size=3),
            inner,
        ),
        st.builds(lambda opts: {"anyOf": opts}, st.lists(inner, max_size=3)),
        st.builds(lambda opts: {"oneOf": opts, "description": "u"}, st.lists(inner, max_size=3)),
        st.builds(lambda opts: {"allOf": opts}, st.lists(inner, max_size=2)),
        st.builds(
            lambda ref, extra: {"$ref": f"#/$defs/{ref}", **extra},
            st.sampled_from(DEF_NAMES),
            st.fixed_dictionaries(
                {}, optional={"description": st.text(max_size=3), "default": JSON_VALUES}
            ),
        ),
        st.builds(lambda v: {"additionalProperties": v, "type": "object"}, inner),
    )


SCHEMAS = st.recursive(_leaf_schemas(), _composite, max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    properties=st.dictionaries(st.text(min_size=1, max_size=3), SCHEMAS, max_size=4),
    defs=st.fixed_dictionaries({name: SCHEMAS for name in DEF_NAMES}),
    extra=UNKNOWN_KEYS,
)
def test_any_schema_converts_to_one_the_sdk_accepts(
    properties: dict, defs: dict, extra: dict
) -> None:
    schema = {"type": "object", "properties": properties, "$defs": defs, **extra}
    snapshot = copy.deepcopy(schema)
    result = to_gemini_schema(schema, "prop")
    assert schema == snapshot
    assert not _container_ids(result) & _container_ids(schema)
    assert wire(result)["type"] == "OBJECT"
