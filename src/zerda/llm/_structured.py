"""Structured output (DESIGN.md §13): what ``response_format`` asks for, how it is sent,
and how the answer is parsed.

``response_format`` is a pydantic model class, a ``{"name", "schema"}`` dict (an OpenAI
``{"type": "json_schema", "json_schema": {...}}`` is read too) or ``"json"`` (or OpenAI's
``{"type": "json_object"}``).
:func:`output_spec` checks it before anything is sent; :func:`choose_mode` picks
``native`` (the API constrains the output) or ``tool`` (a forced tool carries the answer)
from the provider's traits (its registry row's, passed in: this module is core and reads no
row itself); :func:`apply_output` turns either kind of answer into the
same result: ``content`` the JSON text, ``parsed`` the validated value or None with
``parse_error``. :class:`PartialParser` gives the object so far while a stream runs.

Imports nothing outside the standard library at import time: pydantic comes with the
caller's model, ``jsonschema`` and ``jiter`` (extra ``structured``) are imported when used.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zerda.llm import _schema_check
from zerda.llm._request import MAX_SCHEMA_DEPTH
from zerda.llm._schema_walk import bracket_bound, json_depth
from zerda.llm.errors import InvalidRequestError
from zerda.llm.messages import encoded

if TYPE_CHECKING:
    from zerda.llm._traits import Traits

MODES = ("auto", "native", "tool")
_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_EXTRA = 'pip install "zerda-llm[structured]"'


@dataclass(frozen=True)
class OutputSpec:
    """A checked ``response_format`` and the mode it is sent in."""

    kind: str  # "model" | "schema" | "json"
    name: str  # the schema's name; in tool mode also the answer tool's name
    schema: dict[str, Any] | None  # None for "json"
    description: str | None = None
    model: Any = None  # the pydantic model class, for kind "model"
    mode: str = "native"  # "native" | "tool"
    strict: bool = field(default=True)  # the native schema was made strict

    @property
    def answer_schema(self) -> dict[str, Any]:
        """The schema of the answer tool: any object for "json"."""
        return self.schema if self.schema is not None else {"type": "object"}


def output_spec(value: Any) -> OutputSpec | None:
    """``response_format`` checked: a pydantic model, a schema dict or "json"; anything
    else is an invalid request, raised before sending."""
    if value is None:
        return None
    if value == "json" or (isinstance(value, Mapping) and value.get("type") == "json_object"):
        return OutputSpec("json", "json_answer", None)
    if isinstance(value, type) and callable(getattr(value, "model_json_schema", None)):
        return _model_spec(value)
    if isinstance(value, Mapping):
        return _schema_spec(value)
    raise InvalidRequestError(
        "response_format must be a pydantic model class, a dict {'name': ..., 'schema': {...}} "
        f"or 'json', not {value!r}"
    )


def _model_spec(model: Any) -> OutputSpec:
    schema = model.model_json_schema()
    _check_model_schema(model, schema)
    description = schema.get("description") if isinstance(schema.get("description"), str) else None
    return OutputSpec("model", _tool_name(model.__name__), schema, description, model)


def _schema_spec(value: Mapping[str, Any]) -> OutputSpec:
    if value.get("type") == "json_schema" and isinstance(value.get("json_schema"), Mapping):
        value = value["json_schema"]  # OpenAI's own response_format shape
    name, schema = value.get("name"), value.get("schema")
    if not isinstance(name, str) or not name:
        raise InvalidRequestError("response_format: a schema dict needs a 'name' (a string)")
    if not isinstance(schema, Mapping):
        raise InvalidRequestError(f"response_format {name!r}: 'schema' must be a JSON Schema dict")
    text = _schema_text(name, schema)
    _refuse(name, _schema_check.verdict(_schema_check.output_schema_problem, text))
    description = value.get("description")
    return OutputSpec(
        "schema",
        _tool_name(name),
        json.loads(text),  # a private copy: the caller's dict is never touched
        description if isinstance(description, str) else None,
    )


def _schema_text(name: str, schema: Mapping[str, Any]) -> str:
    """The schema's JSON text (what is sent, and the key its verdict is cached under)."""
    text, problem = encoded(schema)
    if text is None:
        raise InvalidRequestError(
            f"response_format {name!r}: the schema cannot be sent as JSON: {problem}"
        )
    if bracket_bound(text) > MAX_SCHEMA_DEPTH and json_depth(schema) > MAX_SCHEMA_DEPTH:
        raise InvalidRequestError(
            f"response_format {name!r}: the schema nests {json_depth(schema)} levels deep "
            f"(dicts and lists); Zerda sends at most {MAX_SCHEMA_DEPTH} on every provider"
        )
    return text


def _refuse(name: str, problem: str | None) -> None:
    """A schema problem (:mod:`zerda.llm._schema_check`) as the refusal of the request."""
    if problem is not None:
        raise InvalidRequestError(f"response_format {name!r}: {problem}")


@functools.lru_cache(maxsize=256)
def _model_problem(model: Any) -> str | None:
    """A pydantic model's schema checked once per model (its schema does not change)."""
    return _schema_check.verdict(
        _schema_check.output_schema_problem, json.dumps(model.model_json_schema())
    )


def _check_model_schema(model: Any, schema: dict[str, Any]) -> None:
    try:
        problem = _model_problem(model)
    except TypeError:  # an unhashable model class: checked each time
        problem = _schema_check.verdict(_schema_check.output_schema_problem, json.dumps(schema))
    _refuse(model.__name__, problem)


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:
        raise InvalidRequestError(
            f"a schema dict as response_format is validated with jsonschema: {_EXTRA}"
        ) from None
    return jsonschema


def _tool_name(name: str) -> str:
    """A name every provider accepts for a schema and a tool: ``[a-zA-Z0-9_-]{1,64}``."""
    return _NAME.sub("_", name)[:64] or "answer"


# --- mode ---------------------------------------------------------------------------------


def choose_mode(
    spec: OutputSpec, requested: Any, traits: Traits, provider: str, model: str, has_tools: bool
) -> str:
    """``native`` or ``tool``: the one asked for, else the row's best mode that fits
    (native needs a JSON mode for "json", and must combine with the call's tools)."""
    if requested is None:
        requested = "auto"
    if requested not in MODES:
        raise InvalidRequestError(
            f"structured_output must be one of {', '.join(map(repr, MODES))}, not {requested!r}"
        )
    modes = traits.structured_output
    if requested != "auto":
        if requested not in modes or not _native_fits(spec, traits, model, False, requested):
            raise InvalidRequestError(
                f"structured_output={requested!r}: {provider} cannot do that for this "
                f"response_format (its modes: {', '.join(modes)})",
                capability=True,
            )
        return str(requested)
    for mode in modes:
        if _native_fits(spec, traits, model, has_tools, mode):
            return mode
    raise InvalidRequestError(
        f"{provider} has no structured-output mode for this response_format", capability=True
    )


def _native_fits(spec: OutputSpec, traits: Traits, model: str, has_tools: bool, mode: str) -> bool:
    if mode != "native":
        return True
    if spec.kind == "json" and not traits.json_mode:
        return False
    if _matches(traits.no_native_output, model):
        return False
    return not has_tools or _matches(traits.native_output_with_tools, model)


def uses_strict(traits: Traits, model: str) -> bool:
    """Whether the native schema is sent strict (made strict first) for this model."""
    return _matches(traits.strict_output_models, model)


def _matches(pattern: str, model: str) -> bool:
    """Whether a trait's model pattern covers ``model`` (an empty pattern covers none)."""
    return bool(pattern) and re.search(pattern, model) is not None


def answer_tool(spec: OutputSpec) -> dict[str, Any]:
    """The unified tool that carries the answer in tool mode."""
    description = spec.description or "Give the final answer with this tool."
    return {"name": spec.name, "description": description, "parameters": spec.answer_schema}


# --- the answer ---------------------------------------------------------------------------


def apply_output(result: dict[str, Any], spec: OutputSpec) -> dict[str, Any]:
    """``result`` with the answer in ``content`` (tool mode: taken out of the answer
    tool's call) and ``parsed`` / ``parse_error`` (DESIGN.md §13). Error results are
    returned as they are."""
    if result.get("error") is not None or result.get("message") is None:
        return result
    if spec.mode == "tool":
        result = _from_answer_tool(result, spec.name)
    if result["tool_calls"]:  # a tool-calling turn, not an answer
        return {**result, "parsed": None}
    parsed, error = parse_answer(spec, result["content"])
    out = {**result, "parsed": parsed}
    if error is not None:
        out["parse_error"] = error
    return out


def _from_answer_tool(result: dict[str, Any], name: str) -> dict[str, Any]:
    answers = [c for c in result["tool_calls"] if c["name"] == name]
    if not answers:
        return result
    kept = [i for i, c in enumerate(result["tool_calls"]) if c["name"] != name]
    calls = [result["tool_calls"][i] for i in kept]
    content = answer_text(answers[0]["arguments"])
    message = {**result["message"], "content": content, "tool_calls": calls}
    stop = result["stop_reason"]
    if not calls and stop == "tool_use":
        stop = "end_turn"
    out = {
        **result,
        "content": content,
        "tool_calls": calls,
        "stop_reason": stop,
        "message": message,
    }
    return _align_provider_data(out, kept)


# provider_data lists that run parallel to tool_calls, one item per call (Gemini's thought
# signatures): when the answer tool's call is taken out, they lose its item too.
PER_CALL_DATA = frozenset({"thought_signatures"})


def _align_provider_data(result: dict[str, Any], kept: list[int]) -> dict[str, Any]:
    """``result`` with each provider's per-call lists (:data:`PER_CALL_DATA`) aligned with
    the tool_calls kept, and dropped when no kept call has an item (the answer tool's item
    goes with its call; a signed answer is what Gemini thinking models send)."""
    data = result.get("provider_data")
    if not isinstance(data, dict):
        return result
    touched = [k for k, v in data.items() if isinstance(v, dict) and _has_per_call(v)]
    if not touched:
        return result
    new = {k: v for k, v in data.items() if k not in touched}
    for key in touched:
        if aligned := _aligned(data[key], kept):
            new[key] = aligned
    out = {k: v for k, v in result.items() if k != "provider_data"}
    message = {k: v for k, v in result["message"].items() if k != "provider_data"}
    if new:
        out["provider_data"] = message["provider_data"] = new
    return {**out, "message": message}


def _has_per_call(data: dict[str, Any]) -> bool:
    return any(isinstance(data.get(k), list) for k in PER_CALL_DATA)


def _aligned(data: dict[str, Any], kept: list[int]) -> dict[str, Any]:
    """One provider's data with its per-call lists keeping the items of ``kept`` only."""
    out = {k: v for k, v in data.items() if k not in PER_CALL_DATA}
    for key in PER_CALL_DATA:
        items = data.get(key)
        if not isinstance(items, list):
            if key in data:
                out[key] = items
            continue
        aligned = [items[i] if i < len(items) else None for i in kept]
        if any(aligned):
            out[key] = aligned
    return out


def answer_text(arguments: Any) -> str:
    """The JSON text of an answer tool's arguments (unparseable ones as they came)."""
    if isinstance(arguments, dict) and set(arguments) == {"_raw"}:
        return str(arguments["_raw"])
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except RecursionError:  # parsed a few frames higher up, nested too deep to encode here
        return _json_text(arguments)


class _Literal(str):
    """A piece of JSON syntax on :func:`_json_text`'s stack (a plain str there is a value)."""


def _json_text(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, built with a stack instead of recursion:
    for arguments nested past Python's recursion limit (the answer is then reported as too
    deep, its text kept)."""
    out: list[str] = []
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        if type(item) is _Literal:
            out.append(item)
        elif isinstance(item, (dict, list)) and item:
            entries = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
            todo.append(_Literal("}" if isinstance(item, dict) else "]"))
            for n, (key, sub) in enumerate(reversed(entries)):
                opener = ("{" if isinstance(item, dict) else "[") if n == len(entries) - 1 else ", "
                label = (
                    json.dumps(str(key), ensure_ascii=False) + ": "
                    if isinstance(item, dict)
                    else ""
                )
                todo += [sub, _Literal(opener + label)]
        else:
            out.append(json.dumps(item, ensure_ascii=False))
    return "".join(out)


# How deep a structured answer may nest (dicts and lists). json.loads, jsonschema, pydantic
# and the comparisons of partial objects recurse once or more per level, and reach Python's
# recursion limit (1,000 frames) from a few hundred levels: a deeper answer (a degenerate
# ``[[[[...`` output) is an invalid answer, never a RecursionError. No real answer nests 100.
MAX_ANSWER_DEPTH = 100


def parse_answer(spec: OutputSpec, text: str | None) -> tuple[Any, str | None]:
    """(the validated value, None) or (None, why the answer is invalid)."""
    if text is None or not text.strip():
        return None, "the model gave no answer"
    value, error = load_answer(text)
    if error is not None:
        return None, error
    try:
        return _validated(spec, value)
    except RecursionError:  # a recursive schema walked deep, from a deep caller's stack
        return None, _too_deep("it is nested too deeply to validate")


def load_answer(text: str) -> tuple[Any, str | None]:
    """(the decoded JSON, None) or (None, why it is not a JSON value Zerda can take)."""
    try:
        value = json.loads(text)
    except RecursionError:
        return None, _too_deep("it is nested past what the JSON decoder takes")
    except ValueError as exc:
        return None, f"the answer is not valid JSON: {exc}"
    if bracket_bound(text) > MAX_ANSWER_DEPTH:
        depth = json_depth(value)
        if depth > MAX_ANSWER_DEPTH:
            return None, _too_deep(f"{depth} levels of dicts and lists")
    return value, None


def _too_deep(detail: str) -> str:
    return f"the answer nests too deeply ({detail}); Zerda parses at most {MAX_ANSWER_DEPTH} levels"


def _validated(spec: OutputSpec, value: Any) -> tuple[Any, str | None]:
    if spec.schema is not None and spec.strict and spec.mode == "native":
        value = drop_strict_nulls(value, spec.schema)
    if spec.kind == "model":
        return _validate_model(spec.model, value)
    if spec.kind == "schema":
        return _validate_schema(spec.schema or {}, value)
    return value, None


def _validate_model(model: Any, value: Any) -> tuple[Any, str | None]:
    from pydantic import ValidationError

    try:
        return model.model_validate(value), None
    except ValidationError as exc:
        return None, f"the answer does not match {model.__name__}: {exc}"


def _validate_schema(schema: dict[str, Any], value: Any) -> tuple[Any, str | None]:
    error = _jsonschema().exceptions.best_match(_answer_validator(schema).iter_errors(value))
    if error is None:
        return value, None
    where = "/".join(str(p) for p in error.absolute_path) or "the root"
    return None, f"the answer does not match the schema at {where}: {error.message}"


def _answer_validator(schema: dict[str, Any]) -> Any:
    """A validator of answers against ``schema``: its draft as the schema was checked with
    (:func:`zerda.llm._schema_check.validator_class`), patterns read as ECMA-262."""
    return _with_ecma_patterns(_schema_check.validator_class(schema))(schema)


@functools.cache
def _with_ecma_patterns(cls: Any) -> Any:
    """``cls`` whose ``pattern`` and ``patternProperties`` read ECMA-262 patterns
    (jsonschema's own call Python's ``re`` with them, which lacks ``\\p{L}`` and more)."""
    return _jsonschema().validators.extend(
        cls, {"pattern": _pattern, "patternProperties": _pattern_properties}
    )


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _schema_check.compiled(pattern).search(
        instance
    ):
        yield _jsonschema().ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, item in instance.items():
            if _schema_check.compiled(pattern).search(key):
                yield from validator.descend(item, subschema, path=key, schema_path=pattern)


def drop_strict_nulls(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` without the nulls strict mode made the model write for optional fields
    that do not accept null (strict mode has no optional fields: it makes them nullable)."""
    return _drop_nulls(value, schema, schema, 0)


def _drop_nulls(value: Any, node: Any, root: Mapping[str, Any], depth: int) -> Any:
    node = _deref(node, root)
    if depth > 32 or not isinstance(node, Mapping):
        return value
    if isinstance(value, dict) and isinstance(node.get("properties"), Mapping):
        props, required = node["properties"], node.get("required") or []
        return {
            key: _drop_nulls(item, props.get(key), root, depth + 1)
            for key, item in value.items()
            if not (item is None and key not in required and not _allows_null(props.get(key), root))
        }
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [_drop_nulls(item, node["items"], root, depth + 1) for item in value]
    return value


def _deref(node: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(8):
        if not isinstance(node, Mapping) or not isinstance(node.get("$ref"), str):
            return node
        target: Any = root
        for part in node["$ref"].lstrip("#").split("/")[1:]:
            target = target.get(part) if isinstance(target, Mapping) else None
        node = target
    return node


def _allows_null(node: Any, root: Mapping[str, Any]) -> bool:
    node = _deref(node, root)
    if not isinstance(node, Mapping):
        return True
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = node.get("anyOf") or node.get("oneOf") or []
    return any(_allows_null(b, root) for b in branches) or (kind is None and not branches)


def jsonable(parsed: Any) -> Any:
    """The JSON form of a parsed value (a model instance dumped)."""
    dump = getattr(parsed, "model_dump", None)
    return dump(mode="json") if callable(dump) else parsed


# --- partial objects while streaming ----------------------------------------------------


class PartialParser:
    """The object so far from the JSON text so far, with jiter's partial mode (the parser
    pydantic-core is built on): incomplete strings are kept, incomplete keys are not."""

    def __init__(self) -> None:
        self.last: Any = None
        self._jiter: Any = None

    def feed(self, text: str) -> list[dict[str, Any]]:
        """A ``partial`` event when ``text`` parses to more than the last partial. An
        object nested deeper than an answer may be (:data:`MAX_ANSWER_DEPTH`) gives none:
        comparing it would recurse as deep, and its answer will be refused."""
        value = self._parse(text)
        if value is None:
            return []
        if bracket_bound(text) > MAX_ANSWER_DEPTH and json_depth(value) > MAX_ANSWER_DEPTH:
            return []
        if value == self.last or _size(value) < _size(self.last):
            return []
        self.last = value
        return [{"type": "partial", "partial": value}]

    def final(self, parsed: Any) -> list[dict[str, Any]]:
        """The last partial: the parsed object's JSON form, unless already sent."""
        value = jsonable(parsed)
        if value == self.last:
            return []
        self.last = value
        return [{"type": "partial", "partial": value}]

    def _parse(self, text: str) -> Any:
        if not text.strip():
            return None
        if self._jiter is None:
            try:
                import jiter
            except ImportError:
                raise InvalidRequestError(
                    f"partial objects in streams are parsed with jiter: {_EXTRA}"
                ) from None
            self._jiter = jiter
        try:
            return self._jiter.from_json(text.encode(), partial_mode="trailing-strings")
        except ValueError:
            return None


def _size(value: Any) -> int:
    """How many keys (at any depth) and list items a value holds."""
    if isinstance(value, dict):
        return len(value) + sum(_size(v) for v in value.values())
    if isinstance(value, list):
        return len(value) + sum(_size(v) for v in value)
    return 0
