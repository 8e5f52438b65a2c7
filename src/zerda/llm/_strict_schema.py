"""Make a JSON Schema obey OpenAI's strict structured-output rules.

https://platform.openai.com/docs/guides/structured-outputs#supported-schemas: with
``strict: true`` the root is an object (not an ``anyOf``); every object lists all of its
properties in ``required`` and says ``additionalProperties: false``; an optional field is
emulated by a union with ``null``; ``$defs`` and ``$ref`` (recursion included) work; the
keywords that may appear are a fixed list per type. ``to_strict_schema`` builds a new schema
that follows those rules from any JSON Schema (hand-written, or pydantic's
``model_json_schema()``), with the walker the Gemini adapter uses
(:mod:`zerda.llm._schema_walk`), and never mutates its input.

Transformed: an object gets ``additionalProperties: false`` and all its properties
required; a property that was not required becomes nullable (``"type": [t, "null"]``, or
an ``anyOf`` with ``{"type": "null"}`` where a type list cannot say it); ``oneOf`` becomes
``anyOf`` (the answer is validated against the caller's own schema afterwards); a one-item
``allOf`` is inlined; a ``$ref`` with keys beside it is inlined (the API refuses siblings of
``$ref``); a free-form object (no ``properties``) is closed, as the ``openai`` SDK's own
``to_strict_json_schema`` does, so it can only be ``{}``. Dropped: keywords outside the
supported list (``default``, ``examples``, ``minLength``, ``uniqueItems``, ``$schema``...)
and string ``format`` values the API does not know; the caller's schema still validates the
answer, so a dropped constraint is checked on the way back.

Refused with a ``ValueError`` naming the path: a root that is not an object, a typed map
(``additionalProperties`` holding a schema), ``patternProperties``, ``not``,
``if``/``then``/``else``, ``dependentSchemas``, an ``allOf`` of several schemas, a schema
with no type at all, a non-local ``$ref``, and more than 10 levels of nested objects.

The Anthropic dialect (``dialect="anthropic"``) follows the same rules and also drops the
numeric and string-length constraints Claude's structured outputs do not support
(https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zerda.llm._schema_walk import SchemaContext, copy_json
from zerda.llm._schema_walk import json_kind as _json_kind

JsonDict = dict[str, Any]

MAX_DEPTH = 10
"""OpenAI's limit on nested objects (the root counts as one)."""

_ANNOTATIONS = ("title", "description")
_COMMON = ("enum", "const")
_BY_TYPE: dict[str, tuple[str, ...]] = {
    "string": ("pattern", "format"),
    "number": ("multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"),
    "integer": ("multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"),
    "array": ("minItems", "maxItems"),
    "boolean": (),
    "object": (),
    "null": (),
}
_ANTHROPIC_DROPPED = frozenset(
    {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxItems"}
)
_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_REFUSED = ("patternProperties", "not", "if", "then", "else", "dependentSchemas")
_TYPES = frozenset(_BY_TYPE)


def to_strict_schema(schema: Mapping[str, Any], owner: str, dialect: str = "openai") -> JsonDict:
    """A new schema, built from ``schema``, that obeys the strict rules (module docstring).

    ``owner`` names what the schema belongs to in errors (``"tool 'f'"``,
    ``"response_format 'City'"``).
    """
    context = SchemaContext(root=schema, owner=owner)
    if not isinstance(schema, Mapping):
        raise context.error(f"expected a JSON Schema object, got {type(schema).__name__}")
    walker = _Walker(dialect)
    result = walker.node(_root_node(schema, context), context, depth=0)
    if result.get("type") != "object":
        raise context.error("the root of a strict schema must be an object (type: object)")
    for key in ("$defs", "definitions"):
        defs = schema.get(key)
        if isinstance(defs, Mapping):
            result[key] = {
                name: walker.node(sub, context.at(f"{key}/{name}"), depth=0)
                for name, sub in defs.items()
            }
    return result


def _root_node(schema: Mapping[str, Any], context: SchemaContext) -> Mapping[str, Any]:
    """The root with a root ``$ref`` (pydantic's form for a recursive model) inlined: the
    root itself must be an object."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    target = context.resolve(ref)
    rest = {k: v for k, v in schema.items() if k not in ("$ref", "$defs", "definitions")}
    return {**target, **rest} if isinstance(target, Mapping) else schema


class _Walker:
    """One strict transformation: the dialect decides which keywords are kept."""

    def __init__(self, dialect: str) -> None:
        self.dropped = _ANTHROPIC_DROPPED if dialect == "anthropic" else frozenset()

    def node(self, node: Any, context: SchemaContext, depth: int) -> JsonDict:
        """The strict form of one (sub)schema."""
        if not isinstance(node, Mapping):
            raise context.error(f"expected a schema object, got {type(node).__name__}")
        for key in _REFUSED:
            if key in node:
                raise context.error(f"{key!r} cannot be expressed in a strict schema")
        if "$ref" in node:
            return self._ref(node, context, depth)
        if "allOf" in node:
            return self._all_of(node, context, depth)
        if "anyOf" in node or "oneOf" in node:
            return self._union(node, context, depth)
        return self._typed(node, context, depth)

    def _ref(self, node: Mapping[str, Any], context: SchemaContext, depth: int) -> JsonDict:
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise context.error("$ref must be a string")
        target = context.resolve(ref)  # refuses a non-local or dangling reference
        siblings = {k: v for k, v in node.items() if k != "$ref" and k not in ("$defs",)}
        if not siblings or ref in context.refs or not isinstance(target, Mapping):
            return {"$ref": ref}
        # The API refuses keywords beside a $ref: inline the target, the siblings winning.
        return self.node({**target, **siblings}, context.expanding(ref), depth)

    def _all_of(self, node: Mapping[str, Any], context: SchemaContext, depth: int) -> JsonDict:
        items = node["allOf"]
        if not isinstance(items, list) or len(items) != 1:
            raise context.error("an 'allOf' of several schemas cannot be expressed strictly")
        rest = {k: v for k, v in node.items() if k != "allOf"}
        only = items[0]
        if isinstance(only, Mapping) and "$ref" in only and not rest:
            return self._ref(only, context.at("allOf/0"), depth)
        merged = {**only, **rest} if isinstance(only, Mapping) else rest
        return self.node(merged, context.at("allOf/0"), depth)

    def _union(self, node: Mapping[str, Any], context: SchemaContext, depth: int) -> JsonDict:
        key = "anyOf" if "anyOf" in node else "oneOf"
        options = node[key]
        if not isinstance(options, list) or not options:
            raise context.error(f"{key!r} must be a non-empty list")
        result: JsonDict = _annotations(node)
        result["anyOf"] = [
            self.node(option, context.at(f"{key}/{i}"), depth) for i, option in enumerate(options)
        ]
        return result

    def _typed(self, node: Mapping[str, Any], context: SchemaContext, depth: int) -> JsonDict:
        types = _types_of(node, context)
        result: JsonDict = _annotations(node)
        result["type"] = types[0] if len(types) == 1 else list(types)
        for key in _COMMON:
            if key in node:
                result[key] = copy_json(node[key])
        for kind in types:
            result.update(self._keywords(node, kind, context, depth))
        return result

    def _keywords(
        self, node: Mapping[str, Any], kind: str, context: SchemaContext, depth: int
    ) -> JsonDict:
        result: JsonDict = {}
        for key in _BY_TYPE[kind]:
            if key in node and key not in self.dropped:
                if key == "format" and node[key] not in _FORMATS:
                    continue
                result[key] = copy_json(node[key])
        if kind == "array":
            result["items"] = self._items(node, context, depth)
        elif kind == "object":
            result.update(self._object(node, context, depth + 1))
        return result

    def _items(self, node: Mapping[str, Any], context: SchemaContext, depth: int) -> JsonDict:
        items = node.get("items")
        if isinstance(items, Mapping):
            return self.node(items, context.at("items"), depth)
        prefix = node.get("prefixItems", items if isinstance(items, list) else None)
        if isinstance(prefix, list) and prefix:
            key = "prefixItems" if "prefixItems" in node else "items"
            branches = [self.node(s, context.at(f"{key}/{i}"), depth) for i, s in enumerate(prefix)]
            distinct = [b for i, b in enumerate(branches) if b not in branches[:i]]
            return distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
        raise context.error("an array needs an 'items' schema to be strict")

    def _object(self, node: Mapping[str, Any], context: SchemaContext, depth: int) -> JsonDict:
        if depth > MAX_DEPTH:
            raise context.error(f"objects nest deeper than {MAX_DEPTH} levels")
        extra = node.get("additionalProperties")
        properties = node.get("properties")
        if isinstance(extra, Mapping) and extra:
            raise context.error(
                "a map (additionalProperties with a schema) cannot be expressed strictly"
            )
        if extra is True and isinstance(properties, Mapping) and properties:
            raise context.error("an object that allows extra properties cannot be strict")
        required = node.get("required")
        wanted = set(required) if isinstance(required, list) else set()
        props: JsonDict = {}
        for name, sub in (properties or {}).items():
            converted = self.node(sub, context.at(f"properties/{name}"), depth)
            props[name] = converted if name in wanted else _nullable(converted)
        return {"properties": props, "required": list(props), "additionalProperties": False}


def _types_of(node: Mapping[str, Any], context: SchemaContext) -> list[str]:
    """The schema's types (``type``, or what its keywords imply); refuses an untyped one."""
    declared = node.get("type")
    names = declared if isinstance(declared, list) else [declared] if declared else []
    unknown = [n for n in names if n not in _TYPES]
    if unknown:
        raise context.error(f"unknown type {unknown[0]!r}")
    if names:
        return list(dict.fromkeys(names))
    if "properties" in node:
        return ["object"]
    if "items" in node or "prefixItems" in node:
        return ["array"]
    values = node.get("enum", [node["const"]] if "const" in node else None)
    if isinstance(values, list) and values:
        return list(dict.fromkeys(_json_kind(v) for v in values))
    raise context.error("a schema without a type cannot be strict")


def _annotations(node: Mapping[str, Any]) -> JsonDict:
    return {k: node[k] for k in _ANNOTATIONS if isinstance(node.get(k), str)}


def _nullable(schema: JsonDict) -> JsonDict:
    """``schema`` that also allows null: the way strict mode says a field is optional."""
    if "anyOf" in schema:
        if {"type": "null"} in schema["anyOf"]:
            return schema
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    kind = schema.get("type")
    if kind is None or "$ref" in schema or "const" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" in kinds:
        return schema
    result = {**schema, "type": [*kinds, "null"]}
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        result["enum"] = [*schema["enum"], None]
    return result
