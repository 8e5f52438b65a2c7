"""The path-carrying, non-mutating JSON Schema walker shared by the schema adapters.

Both the Gemini adapter (:mod:`zerda.llm._gemini_schema`) and the OpenAI strict-schema
transformer (:mod:`zerda.llm._strict_schema`) walk a schema recursively, building a new one.
:class:`SchemaContext` is where such a walk is: the whole schema (to resolve a local
``$ref``), what the schema belongs to (named in errors), the ``$ref`` targets being expanded
along the current path (to cut recursion) and the JSON pointer of the current node, so an
error says exactly where a schema failed. A context is frozen: stepping into a child returns
a new context, and nothing here ever writes to the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from zerda.llm._record import hot_record


class DialectError(ValueError):
    """A schema an adapter cannot express in its provider's dialect (Gemini's subset, strict
    mode). Schemas are checked as JSON Schema first (:mod:`zerda.llm._schema_check`), so what
    an adapter refuses is what its rows cannot take: a capability refusal, on which a
    fallback moves on (``InvalidRequestError.capability``)."""

    capability = True


@hot_record
class SchemaContext:
    """Where the walk is: the whole schema (for ``$ref``), its owner, the refs being
    expanded and the path (a JSON pointer, ``#`` at the root)."""

    root: Mapping[str, Any]
    owner: str  # "tool 'get_weather'", "response_format 'City'": named in every error
    refs: tuple[str, ...] = ()
    path: str = "#"

    def at(self, segment: str) -> SchemaContext:
        """The context of a child node, ``segment`` below this one (``properties/x``)."""
        return SchemaContext(self.root, self.owner, self.refs, f"{self.path}/{segment}")

    def expanding(self, ref: str) -> SchemaContext:
        """The context inside the target of ``ref``: the same path, one more ref open."""
        return SchemaContext(self.root, self.owner, (*self.refs, ref), self.path)

    def error(self, message: str) -> DialectError:
        return DialectError(f"{self.owner}: schema at {self.path}: {message}")

    def resolve(self, ref: str, why_local: str = "") -> Any:
        """What a local ``$ref`` (a JSON pointer in a URI fragment) points to."""
        if not ref.startswith("#"):
            raise self.error(
                f"cannot resolve $ref {ref!r}: only references inside the schema ('#/...') "
                f"are supported{why_local}"
            )
        current: Any = self.root
        for raw_part in ref[1:].split("/")[1:]:
            part = unquote(raw_part).replace("~1", "/").replace("~0", "~")
            if isinstance(current, Mapping) and part in current:
                current = current[part]
            elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
                current = current[int(part)]
            else:
                raise self.error(f"$ref {ref!r} points to nothing in the schema")
        return current


def copy_json(value: Any) -> Any:
    """A copy of a JSON value whose dicts and lists are new objects."""
    if isinstance(value, Mapping):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [copy_json(item) for item in value]
    return value


def json_depth(value: Any) -> int:
    """How deep dicts and lists nest in ``value``, counted level by level without
    recursion (a value nested past Python's recursion limit is measured too; each level is
    two list comprehensions, as this runs for every tool schema on every call)."""
    depth = 0
    level = [value]
    while level:
        containers = [v for v in level if isinstance(v, (dict, list))]
        if not containers:
            break
        depth += 1
        level = [c for v in containers for c in (v.values() if isinstance(v, dict) else v)]
    return depth


def bracket_bound(text: str) -> int:
    """An upper bound of how deep the JSON ``text`` nests (each level opens a bracket): a
    cheap test of whether measuring it is worth it."""
    return text.count("{") + text.count("[")


def json_kind(value: Any) -> str:
    """Return the JSON Schema type name of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
