"""Adapt any JSON Schema to the subset Gemini accepts in a function declaration.

Gemini's ``FunctionDeclaration.parameters`` is a ``google.genai.types.Schema``: a fixed set of
OpenAPI-3.0-style fields, and the SDK model forbids every other key. ``to_gemini_schema``
turns any JSON Schema (hand-written, OpenAI-style, or pydantic's ``model_json_schema()``)
into a plain dict that ``types.Schema`` validates, keeping what Gemini can express.

Output keys are the JSON-Schema spellings (``anyOf``, ``minItems``, ``propertyOrdering``...),
which are the camelCase aliases ``types.Schema`` accepts; the SDK serialises them to the
REST API itself. The module imports only the standard library: ``zerda.llm.tools`` imports
it and must stay SDK-free.

Kept: ``type`` (one of string, number, integer, boolean, array, object), ``title``,
``description``, ``nullable``, ``enum`` (strings), ``format`` (any format for strings;
int32/int64 for integers; float/double for numbers), ``pattern``, ``minLength``,
``maxLength``, ``minimum``, ``maximum``, ``items``, ``minItems``, ``maxItems``,
``properties``, ``required`` (only names present in ``properties``), ``propertyOrdering``,
``minProperties``, ``maxProperties``, ``anyOf``, ``default`` (unless null) and ``example``.

Transformed:
- ``$ref`` is inlined (any local JSON pointer: ``#/$defs/X``, ``#/definitions/X``, ``#``);
  keys beside the ``$ref`` override the referenced schema's. A non-local ``$ref`` raises
  ``ValueError`` naming the tool.
- Recursive schemas are cut, not refused: one definition is expanded at most
  ``MAX_REF_EXPANSIONS`` (2) times along any path from the root; the reference beyond that
  becomes ``{}`` (any value) plus the keys written beside it. A tree model thus shows the
  model two levels of its structure; deeper levels are free-form.
- ``{"type": "null"}`` branches of ``anyOf``/``oneOf``, ``"null"`` in a ``type`` list and
  ``None`` in ``enum``/``const`` become ``nullable: true``; one remaining branch is merged
  into its parent (the parent's keys win), several stay an ``anyOf``.
- ``oneOf`` becomes ``anyOf`` (Gemini has no exclusive union); when both are present the
  ``anyOf`` is kept. ``allOf`` items are merged into one schema (properties and required
  united, otherwise the later item and then the parent win).
- A ``type`` list with several non-null types becomes an ``anyOf`` with one branch per type,
  each carrying the keywords of its type; annotations stay on the parent.
- ``const`` becomes a one-value ``enum``. Gemini enums hold strings only. String values are
  kept as they are. Integer or number values become the form the SDK documents for numeric
  enums: ``{"type": "integer", "format": "enum", "enum": ["1", "2"]}`` (values as JSON text),
  so the type the model answers with stays numeric. Boolean values keep ``type: boolean``
  and drop the enum (nothing narrower is expressible); object and array values keep their
  type only. Values of several kinds become an ``anyOf`` with one branch per kind.
- ``exclusiveMinimum``/``exclusiveMaximum`` (number or draft-4 boolean form) become
  ``minimum``/``maximum``: exactly (plus or minus one) for integers, as the inclusive bound
  for numbers; the tighter of two bounds wins.
- ``prefixItems`` (or a draft-4 ``items`` list) becomes ``items``: the one distinct item
  schema, or an ``anyOf`` of them; ``items: false`` after them caps ``maxItems``.
- ``examples`` gives its first value to ``example``.
- Without a ``type``, ``properties`` implies object and ``items``/``prefixItems`` imply array.
  An array without ``items`` gets ``items: {}``, since Gemini requires the field.
- The root is always an object schema: an untyped root becomes ``{"type": "object"}`` and a
  root object without ``properties`` gets ``properties: {}``.
- snake_case spellings of Gemini fields (``any_of``, ``max_items``...) and upper-case type
  names (``STRING``) are read as their JSON-Schema equivalents.

Dropped: ``additionalProperties`` (``types.Schema`` has the field, but the Gemini Developer
API rejects it; the SDK itself refuses it there), ``$defs``/``definitions``, ``$schema``,
``$id``, ``$comment``, ``multipleOf``, ``uniqueItems``, ``contains``, ``not``,
``if``/``then``/``else``, ``patternProperties``, ``propertyNames``, ``dependent*``,
``unevaluated*``, ``discriminator``, ``readOnly``/``writeOnly``/``deprecated``,
``default: null``, unknown types, values of the wrong JSON type, and every non-standard key
(``optional``, ``strict``, ``x-*``...). A boolean schema (``true``/``false``) becomes ``{}``.

The input is never mutated and never shared with the output: every dict and list in the
result is new.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from zerda.llm._schema_walk import SchemaContext as _Context
from zerda.llm._schema_walk import copy_json as _copy_json
from zerda.llm._schema_walk import json_kind as _json_kind

JsonDict = dict[str, Any]

MAX_REF_EXPANSIONS = 2
"""How many times one ``$ref`` target is expanded along a path before it is cut to ``{}``."""

_TYPES = ("string", "number", "integer", "boolean", "array", "object")

_KEY_ALIASES = {
    "any_of": "anyOf",
    "one_of": "oneOf",
    "all_of": "allOf",
    "min_items": "minItems",
    "max_items": "maxItems",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_properties": "minProperties",
    "max_properties": "maxProperties",
    "property_ordering": "propertyOrdering",
    "prefix_items": "prefixItems",
    "additional_properties": "additionalProperties",
}

_NUMERIC_FORMATS = {"integer": ("int32", "int64"), "number": ("float", "double")}


def _tool_context(schema: Mapping[str, Any], tool_name: str) -> _Context:
    return _Context(root=schema, owner=f"tool {tool_name!r}")


def to_gemini_schema(schema: dict, tool_name: str) -> dict:
    """Return a new dict, built from ``schema``, that ``google.genai.types.Schema`` accepts.

    Raises ``ValueError`` (naming ``tool_name``) for a schema that is not a JSON object, or
    for a ``$ref`` that does not point inside ``schema``.
    """
    context = _tool_context(schema, tool_name)
    if not isinstance(schema, Mapping):
        raise context.error(f"expected a JSON Schema object, got {type(schema).__name__}")
    return _as_root(_convert(schema, context))


def _as_root(result: JsonDict) -> JsonDict:
    """Make the converted root an object schema, as a function's parameters must be."""
    if "type" not in result and "anyOf" not in result:
        result = {"type": "object", **result}
    if result.get("type") == "object" and "properties" not in result:
        result = {**result, "properties": {}}
    return result


def _convert(node: Any, context: _Context) -> JsonDict:
    """Return the Gemini form of one (sub)schema."""
    if isinstance(node, bool):
        return {}
    if not isinstance(node, Mapping):
        raise context.error(f"expected a schema object or boolean, got {type(node).__name__}")
    node = _normalise_keys(node)
    if "$ref" in node:
        return _convert_ref(node, context)
    if "allOf" in node:
        return _convert_all_of(node, context)
    if "anyOf" in node or "oneOf" in node:
        return _convert_union(node, context)
    return _convert_typed(node, context)


def _normalise_keys(node: Mapping[str, Any]) -> JsonDict:
    """Return ``node`` with Gemini's snake_case keys spelled as in JSON Schema."""
    result: JsonDict = {}
    for key, value in node.items():
        name = _KEY_ALIASES.get(key, key)
        if name == key or name not in node:
            result[name] = value
    return result


# --- $ref ---------------------------------------------------------------------------------


def _convert_ref(node: JsonDict, context: _Context) -> JsonDict:
    """Inline a ``$ref``; keys written beside it override the referenced schema's."""
    ref = node["$ref"]
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    if not isinstance(ref, str):
        return _convert(siblings, context)
    if context.refs.count(ref) >= MAX_REF_EXPANSIONS:
        # Recursion cut: the target's structure is already shown MAX_REF_EXPANSIONS times.
        return _convert(siblings, context)
    target = _convert(_resolve_ref(ref, context), context.expanding(ref))
    return _merge(target, _convert(siblings, context))


def _resolve_ref(ref: str, context: _Context) -> Any:
    """Return what a local ``$ref`` (a JSON pointer in a URI fragment) points to."""
    return context.resolve(ref, " for Gemini")


# --- combinators ----------------------------------------------------------------------------


def _convert_all_of(node: JsonDict, context: _Context) -> JsonDict:
    """Merge the ``allOf`` items, then the parent's own keys, into one schema."""
    items = node["allOf"]
    rest = {key: value for key, value in node.items() if key != "allOf"}
    merged: JsonDict = {}
    if isinstance(items, list):
        for index, item in enumerate(items):
            merged = _merge(merged, _convert(item, context.at(f"allOf/{index}")))
    return _merge(merged, _convert(rest, context))


def _convert_union(node: JsonDict, context: _Context) -> JsonDict:
    """Map ``anyOf``/``oneOf`` to ``anyOf``, null branches to ``nullable``."""
    key = "anyOf" if "anyOf" in node else "oneOf"
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    converted_rest = _convert(rest, context)
    options = node[key] if isinstance(node[key], list) else []
    branches: list[JsonDict] = []
    nullable = False
    for index, option in enumerate(options):
        branch = _convert(option, context.at(f"{key}/{index}"))
        if _is_null_only(branch):
            nullable = True
        elif branch not in branches:
            branches.append(branch)
    return _combine(branches, converted_rest, nullable)


def _is_null_only(branch: JsonDict) -> bool:
    """Tell whether a converted branch allows only null (it came from ``{"type": "null"}``)."""
    return branch.get("nullable") is True and not any(
        key in branch for key in ("type", "anyOf", "enum", "properties", "items")
    )


def _combine(branches: list[JsonDict], parent: JsonDict, nullable: bool) -> JsonDict:
    """Join union branches to their parent: one branch merges in, several stay an anyOf."""
    if len(branches) == 1:
        result = _merge(branches[0], parent)
    elif branches:
        result = {**parent, "anyOf": branches}
    else:
        result = parent
    return {**result, "nullable": True} if nullable else result


def _merge(base: JsonDict, override: JsonDict) -> JsonDict:
    """Merge two converted schemas: properties and required are united, else ``override`` wins."""
    result = dict(base)
    for key, value in override.items():
        if key == "properties" and "properties" in base:
            result[key] = {**base["properties"], **value}
        elif key == "required" and "required" in base:
            result[key] = _unique([*base["required"], *value])
        else:
            result[key] = value
    return result


# --- typed schemas --------------------------------------------------------------------------


def _convert_typed(node: JsonDict, context: _Context) -> JsonDict:
    """Convert a schema with no combinator: annotations, then one branch per JSON type."""
    types, nullable = _declared_types(node)
    enum = _enum_values(node)
    if enum is not None:
        types, enum_nullable = _enum_types(enum, types)
        nullable = nullable or enum_nullable
    elif not types:
        types = _implied_types(node)
    result = _annotations(node)
    branches = [_typed_keywords(node, kind, enum, context) for kind in types]
    result = _combine(branches, result, False)
    return {**result, "nullable": True} if nullable or node.get("nullable") is True else result


def _declared_types(node: JsonDict) -> tuple[list[str], bool]:
    """Return the known non-null types ``type`` names, and whether it allows null."""
    declared = node.get("type")
    names = declared if isinstance(declared, list) else [declared]
    lowered = [name.lower() for name in names if isinstance(name, str)]
    return _unique(name for name in lowered if name in _TYPES), "null" in lowered


def _implied_types(node: JsonDict) -> list[str]:
    """Return the type an untyped schema's keywords imply (properties: object; items: array)."""
    if "properties" in node:
        return ["object"]
    if "items" in node or "prefixItems" in node:
        return ["array"]
    return []


def _enum_values(node: JsonDict) -> list[Any] | None:
    """Return the allowed values from ``const`` or ``enum``, or None when neither is usable."""
    if "const" in node:
        return [node["const"]]
    enum = node.get("enum")
    return list(enum) if isinstance(enum, list) and enum else None


def _enum_types(values: list[Any], declared: list[str]) -> tuple[list[str], bool]:
    """Return the types of the enum's values (in order of first use), and whether None is one."""
    kinds = [_json_kind(value) for value in values]
    if declared in (["integer"], ["number"]) and all(kind == "string" for kind in kinds):
        return declared, False  # already Gemini's numeric enum form: {"enum": ["1", "2"]}
    if "number" in kinds or "number" in declared:
        kinds = ["number" if kind == "integer" else kind for kind in kinds]
    return _unique(kind for kind in kinds if kind != "null"), "null" in kinds


def _annotations(node: JsonDict) -> JsonDict:
    """Return the keys that describe a schema whatever its type."""
    result: JsonDict = {}
    for key in ("title", "description"):
        if isinstance(node.get(key), str):
            result[key] = node[key]
    if node.get("default") is not None:
        result["default"] = _copy_json(node["default"])
    example = _example(node)
    if example is not None:
        result["example"] = _copy_json(example)
    return result


def _example(node: JsonDict) -> Any:
    """Return the OpenAPI ``example``, else the first of JSON Schema's ``examples``."""
    if node.get("example") is not None:
        return node["example"]
    examples = node.get("examples")
    return examples[0] if isinstance(examples, list) and examples else None


def _typed_keywords(
    node: JsonDict, kind: str, enum: list[Any] | None, context: _Context
) -> JsonDict:
    """Return ``{"type": kind}`` plus the keywords of ``node`` that apply to that type."""
    result: JsonDict = {"type": kind}
    if kind == "string":
        result.update(_string_keywords(node, enum))
    elif kind in ("integer", "number"):
        result.update(_number_keywords(node, kind, enum))
    elif kind == "array":
        result.update(_array_keywords(node, context))
    elif kind == "object":
        result.update(_object_keywords(node, context))
    return result


def _string_keywords(node: JsonDict, enum: list[Any] | None) -> JsonDict:
    result: JsonDict = {}
    if isinstance(node.get("format"), str):
        result["format"] = node["format"]
    if isinstance(node.get("pattern"), str):
        result["pattern"] = node["pattern"]
    result.update(_counts(node, ("minLength", "maxLength")))
    if enum is not None:
        result["enum"] = _unique(value for value in enum if isinstance(value, str))
    return result


def _number_keywords(node: JsonDict, kind: str, enum: list[Any] | None) -> JsonDict:
    result: JsonDict = {}
    if node.get("format") in _NUMERIC_FORMATS[kind]:
        result["format"] = node["format"]
    result.update(_bounds(node, kind))
    if enum is not None:
        # The SDK documents numeric enums as string values with format "enum".
        result["format"] = "enum"
        result["enum"] = _numeric_enum(enum, kind)
    return result


def _numeric_enum(values: list[Any], kind: str) -> list[str]:
    """Return the enum values of this numeric kind as JSON text (``1`` -> ``"1"``)."""
    if all(isinstance(value, str) for value in values):
        return _unique(values)
    wanted = ("integer",) if kind == "integer" else ("integer", "number")
    return _unique(json.dumps(value) for value in values if _json_kind(value) in wanted)


def _bounds(node: JsonDict, kind: str) -> JsonDict:
    """Return ``minimum``/``maximum``, folding in the exclusive bounds Gemini lacks."""
    result: JsonDict = {}
    for inclusive, exclusive, step, tighter in (
        ("minimum", "exclusiveMinimum", 1, max),
        ("maximum", "exclusiveMaximum", -1, min),
    ):
        candidates = []
        if _is_number(node.get(inclusive)):
            candidates.append(node[inclusive])
        bound = node.get(exclusive)
        if bound is True and candidates:
            bound = candidates[0]  # draft 4: the inclusive bound is itself exclusive
        if _is_number(bound):
            is_whole = kind == "integer" and float(bound).is_integer()
            candidates.append(int(bound) + step if is_whole else bound)
        if candidates:
            result[inclusive] = tighter(candidates)
    return result


def _array_keywords(node: JsonDict, context: _Context) -> JsonDict:
    result: JsonDict = {"items": _items(node, context)}
    result.update(_counts(node, ("minItems", "maxItems")))
    prefix = _prefix_items(node)
    if prefix is not None and node.get("items") is False:
        result["maxItems"] = min(result.get("maxItems", len(prefix)), len(prefix))
    return result


def _prefix_items(node: JsonDict) -> list[Any] | None:
    """Return the tuple item schemas: ``prefixItems``, or draft 4's ``items`` list."""
    if isinstance(node.get("prefixItems"), list):
        return list(node["prefixItems"])
    return list(node["items"]) if isinstance(node.get("items"), list) else None


def _items(node: JsonDict, context: _Context) -> JsonDict:
    """Return one ``items`` schema covering the tuple items and the additional items."""
    prefix = _prefix_items(node)
    items = node.get("items")
    if prefix is None:
        return _convert(items, context.at("items")) if items is not None else {}
    key = "prefixItems" if "prefixItems" in node else "items"
    candidates = [_convert(item, context.at(f"{key}/{i}")) for i, item in enumerate(prefix)]
    if isinstance(items, Mapping):
        candidates.append(_convert(items, context.at("items")))
    distinct = [item for i, item in enumerate(candidates) if item not in candidates[:i]]
    if len(distinct) == 1:
        return distinct[0]
    return {"anyOf": distinct} if distinct else {}


def _object_keywords(node: JsonDict, context: _Context) -> JsonDict:
    result: JsonDict = {}
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        result["properties"] = {
            name: _convert(schema, context.at(f"properties/{name}"))
            for name, schema in properties.items()
        }
    names = result.get("properties", {})
    required = _names_in(node.get("required"), names)
    if required:
        result["required"] = required
    ordering = _names_in(node.get("propertyOrdering"), names)
    if ordering:
        result["propertyOrdering"] = ordering
    result.update(_counts(node, ("minProperties", "maxProperties")))
    return result


def _names_in(value: Any, properties: Mapping[str, Any]) -> list[str]:
    """Return the distinct strings of the list ``value`` that name a property."""
    if not isinstance(value, list):
        return []
    return _unique(name for name in value if isinstance(name, str) and name in properties)


# --- small values ---------------------------------------------------------------------------


def _counts(node: JsonDict, keys: Iterable[str]) -> JsonDict:
    """Return the keys whose value is a non-negative whole number, as ints."""
    result: JsonDict = {}
    for key in keys:
        value = node.get(key)
        if _is_number(value) and value >= 0 and float(value).is_integer():
            result[key] = int(value)
    return result


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _unique(values: Iterable[Any]) -> list[Any]:
    """Return the values without repeats, in first-seen order."""
    result: list[Any] = []
    for value in values:
        if value not in result:
            result.append(value)
    return result
