"""A checker of OpenAI's strict structured-output rules, written from the documentation
(https://platform.openai.com/docs/guides/structured-outputs#supported-schemas), independent
of the transformer it checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

SUPPORTED_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
# Keywords the documentation lists as supported, per type, plus the common ones.
COMMON = {"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs"}
BY_TYPE = {
    "string": {"pattern", "format"},
    "number": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "integer": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties"},
    "boolean": set(),
    "null": set(),
}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
MAX_NESTING = 10
MAX_PROPERTIES = 5000
MAX_ENUM_VALUES = 1000


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """Every way ``schema`` breaks the strict rules, as ``path: problem`` lines."""
    problems: list[str] = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("#: the root must be an object, not anyOf")
    counts = {"properties": 0}
    problems += list(_check(schema, schema, "#", 1, counts))
    for name, sub in (schema.get("$defs") or {}).items():
        problems += list(_check(sub, schema, f"#/$defs/{name}", 1, counts))
    if counts["properties"] > MAX_PROPERTIES:
        problems.append(f"#: {counts['properties']} properties (at most {MAX_PROPERTIES})")
    return problems


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    return kind if isinstance(kind, list) else [kind] if kind is not None else []


def _check(
    node: Any, root: dict[str, Any], path: str, depth: int, counts: dict[str, int]
) -> Iterator[str]:
    if not isinstance(node, dict):
        yield f"{path}: not a schema object"
        return
    if "$ref" in node:
        yield from _check_ref(node, root, path)
        return
    types = _types(node)
    allowed = set(COMMON)
    for kind in types:
        if kind not in SUPPORTED_TYPES:
            yield f"{path}: unsupported type {kind!r}"
        allowed |= BY_TYPE.get(kind, set())
    if not types and "anyOf" not in node and "enum" not in node and "const" not in node:
        yield f"{path}: no type"
    for key in node:
        if key not in allowed:
            yield f"{path}: keyword {key!r} is not supported"
    if "format" in node and node["format"] not in FORMATS:
        yield f"{path}: format {node['format']!r} is not supported"
    if isinstance(node.get("enum"), list) and len(node["enum"]) > MAX_ENUM_VALUES:
        yield f"{path}: more than {MAX_ENUM_VALUES} enum values"
    for i, branch in enumerate(node.get("anyOf") or []):
        yield from _check(branch, root, f"{path}/anyOf/{i}", depth, counts)
    if "object" in types:
        yield from _check_object(node, root, path, depth, counts)
    if "array" in types:
        if "items" not in node:
            yield f"{path}: an array without items"
        else:
            yield from _check(node["items"], root, f"{path}/items", depth, counts)


def _check_object(
    node: dict[str, Any], root: dict[str, Any], path: str, depth: int, counts: dict[str, int]
) -> Iterator[str]:
    if depth > MAX_NESTING:
        yield f"{path}: nested deeper than {MAX_NESTING} levels"
    if node.get("additionalProperties") is not False:
        yield f"{path}: additionalProperties must be false"
    properties = node.get("properties")
    if not isinstance(properties, dict):
        yield f"{path}: an object without properties"
        return
    counts["properties"] += len(properties)
    if sorted(node.get("required") or []) != sorted(properties):
        yield f"{path}: every property must be required"
    for name, sub in properties.items():
        yield from _check(sub, root, f"{path}/properties/{name}", depth + 1, counts)


def _check_ref(node: dict[str, Any], root: dict[str, Any], path: str) -> Iterator[str]:
    if set(node) != {"$ref"}:
        yield f"{path}: $ref with other keywords"
    ref = node["$ref"]
    target: Any = root
    for part in ref.lstrip("#").split("/")[1:] if ref.startswith("#") else [None]:
        target = target.get(part) if isinstance(target, dict) and part is not None else None
    if target is None:
        yield f"{path}: $ref {ref!r} does not resolve"
