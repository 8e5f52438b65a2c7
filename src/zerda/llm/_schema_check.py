"""JSON Schemas checked before anything is sent: tool parameters and ``response_format``
schemas, the same on every row.

The real APIs answer 400 to a schema that is not JSON Schema (``"type": "objet"``, a
property typed ``"str"``, ``"required": "a"``; OpenAI, Anthropic, Gemini and Bedrock), and
a schema the API takes can still break Zerda's own validation of the answer after the call
was paid for (a ``pattern`` that is no regular expression, a ``$ref`` to nothing, ``$ref``
cycles). So a schema is refused before sending, naming the JSON pointer of its first problem
and what is accepted, when:

- it is not valid against the metaschema of its draft (``jsonschema``; draft 7 unless
  ``$schema`` names another: checking against 2020-12's costs about six times as much for
  the same mistakes, and 2020-12 refuses draft 7's ``items`` lists), a ``pattern`` or a
  ``patternProperties`` name included, which must be an ECMA-262 regular expression (JSON
  Schema's own regex dialect, https://json-schema.org/draft-07/json-schema-validation#rfc.section.4.3);
- a ``$ref`` points to nothing in the schema, or outside it (no provider fetches one);
- ``$ref`` leads back to itself without descending into the value (``{"$ref": "#"}``, or a
  definition that is one of its own ``anyOf`` branches): validating any value against it
  never ends. A recursive schema goes through ``properties`` or ``items``, and is accepted;
- for tools: the parameters are not an object schema (``"type": "object"``), which every
  provider's function declaration requires (OpenAI: "schema must be a JSON Schema of 'type:
  "object"'"; Anthropic's ``input_schema.type`` is ``"object"``; Bedrock's and Gemini's
  parameters are an object).

What a row's own dialect cannot express (Gemini's subset, strict mode) is its adapter's to
refuse (:class:`zerda.llm._schema_walk.DialectError`): that is a capability refusal.

Cost: the verdicts are cached per schema text (the JSON a request sends anyway), so the same
tools on every turn are checked once; a first check takes 1-4 ms. ``jsonschema`` is
imported on the first check, never at ``import zerda.llm``.
"""

from __future__ import annotations

import functools
import json
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from zerda.llm.errors import InvalidRequestError

_CACHE_SIZE = 4096
_TYPES = "'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'"
# What the keyword whose value failed the metaschema accepts, in words (else the draft).
_ACCEPTED = {
    "type": f"a type name ({_TYPES}) or a list of them",
    "required": "a list of property names",
    "properties": "an object whose values are schemas",
    "enum": "a list of values",
}


# --- the verdicts, cached per schema text -----------------------------------------------


@functools.lru_cache(maxsize=_CACHE_SIZE)
def tool_schema_problem(text: str) -> str | None:
    """Why the tool parameters whose JSON is ``text`` cannot be sent, or None."""
    schema = json.loads(text)
    problem = schema_problem(schema)
    if problem is None and (not isinstance(schema, dict) or schema.get("type") != "object"):
        kind = schema.get("type") if isinstance(schema, dict) else None
        shown = f"its type is {kind!r}" if kind is not None else "it has no type"
        problem = (
            f'schema at #: the parameters must be an object schema, with "type": "object" ({shown})'
        )
    return problem


@functools.lru_cache(maxsize=_CACHE_SIZE)
def output_schema_problem(text: str) -> str | None:
    """Why the ``response_format`` schema whose JSON is ``text`` cannot be used, or None."""
    return schema_problem(json.loads(text))


def check_tool_schema(index: int, name: str, text: str) -> None:
    """Refuses tool ``index`` (``name``) when its parameters (``text``: their JSON) cannot
    be sent (module docstring)."""
    problem = verdict(tool_schema_problem, text)
    if problem is not None:
        raise InvalidRequestError(f"tools[{index}] ({name!r}): {problem}")


def verdict(check: Callable[[str], str | None], text: str) -> str | None:
    """``check(text)``; a schema too deep for jsonschema's recursive walk from the caller's
    stack is refused (and that verdict, which depends on the stack, is not cached)."""
    try:
        return check(text)
    except RecursionError:
        return "schema at #: it nests too deeply to be checked from here"


def schema_problem(schema: Any) -> str | None:
    """The first problem of ``schema`` as ``schema at <pointer>: <what, what is accepted>``;
    None for a usable schema."""
    return _metaschema_problem(schema) or _reference_problem(schema)


# --- the metaschema --------------------------------------------------------------------------


def _metaschema_problem(schema: Any) -> str | None:
    cls = validator_class(schema)
    error = _jsonschema().exceptions.best_match(_meta_validator(cls).iter_errors(schema))
    if error is None:
        return None
    where = pointer(error.absolute_path)
    if error.validator == "format" and error.validator_value == "regex":
        return (
            f"schema at {where}: {error.instance!r} is not a regular expression "
            f"({error.cause}); patterns are ECMA-262 regular expressions"
        )
    draft = cls.META_SCHEMA.get("$schema", cls.__name__)
    return (
        f"schema at {where}: {error.message} (accepted: {_accepted(list(error.absolute_path))}; "
        f"checked against {draft})"
    )


def _accepted(path: list[Any]) -> str:
    """What the place at ``path`` takes, in words: a keyword's value, or a named schema."""
    if len(path) >= 2 and path[-2] in _NAMED:  # properties/<name>: a schema by that name
        return "a schema (an object or true / false)"
    keyword = path[-1] if path else None
    return _ACCEPTED.get(keyword, "JSON Schema") if isinstance(keyword, str) else "JSON Schema"


def validator_class(schema: Any) -> Any:
    """The jsonschema validator class of ``schema``'s draft: the one ``$schema`` names,
    else draft 7 (the module docstring says why). The answer is validated with it too."""
    jsonschema = _jsonschema()
    declared = schema.get("$schema") if isinstance(schema, Mapping) else None
    if not isinstance(declared, str):
        return jsonschema.Draft7Validator
    return jsonschema.validators.validator_for({"$schema": declared}, jsonschema.Draft7Validator)


@functools.cache
def _meta_validator(cls: Any) -> Any:
    """A validator of schemas of one draft, its ``regex`` format checked as ECMA-262 (what
    ``check_schema`` builds on every call: reused, it keeps its resolved references)."""
    checker = _jsonschema().FormatChecker(formats=())
    checker.checks("regex", raises=re.error)(_compiles)
    return cls(cls.META_SCHEMA, format_checker=checker)


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:  # a core dependency (pyproject.toml); absent only if skipped
        raise InvalidRequestError(
            "schemas (tool parameters, response_format) are checked with jsonschema: "
            "pip install jsonschema"
        ) from None
    return jsonschema


def pointer(path: Any) -> str:
    """The JSON pointer (RFC 6901, as a URI fragment) of a path of keys and indices."""
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


# --- regular expressions -------------------------------------------------------------------

# ECMA-262 syntax Python's re lacks, and a stand-in with the same shape for the check (and
# for validating answers: the stand-in accepts at least what the pattern accepts there).
_ECMA = [
    (re.compile(r"\\[pP]\{[^}]*\}"), r"\\w"),  # Unicode property escapes: \p{L}
    (re.compile(r"\\u\{[0-9a-fA-F]+\}"), r"\\w"),  # code point escapes: \u{1F600}
    (re.compile(r"\(\?<(?![=!])"), "(?P<"),  # named groups: (?<year>...)
    (re.compile(r"\\k<([^>]*)>"), r"(?P=\1)"),  # named back references: \k<year>
    (re.compile(r"\[\^\]"), r"[\\s\\S]"),  # [^]: any character
    (re.compile(r"\\c[A-Za-z]"), r"\\x01"),  # control escapes: \cJ
]


def python_regex(pattern: str) -> str:
    """``pattern`` (ECMA-262) in the syntax of Python's ``re``, for checking and for
    validating answers (jsonschema's ``pattern`` uses ``re.search``)."""
    for ecma, python in _ECMA:
        pattern = ecma.sub(python, pattern)
    return pattern


@functools.lru_cache(maxsize=_CACHE_SIZE)
def compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled (see :func:`python_regex`); raises ``re.error``."""
    with warnings.catch_warnings():  # "possible nested set" FutureWarnings: not ours to show
        warnings.simplefilter("ignore")
        return re.compile(python_regex(pattern))


def _compiles(instance: Any) -> bool:
    if isinstance(instance, str):
        compiled(instance)
    return True


# --- $ref -----------------------------------------------------------------------------------

# Keywords whose value is one schema, a list of schemas, or an object of schemas; and those
# that apply to the same value as their parent (a cycle through them alone never ends).
_ONE = ("items", "additionalItems", "additionalProperties", "contains", "propertyNames",
        "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties")  # fmt: skip
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
          "dependencies")  # fmt: skip
_IN_PLACE = frozenset(
    {"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"}
)


def _subschemas(node: dict[str, Any], where: str) -> Iterator[tuple[Any, str, bool]]:
    """(subschema, its pointer, whether it applies to the same value) of ``node``."""
    for key in _ONE:
        if isinstance(node.get(key), dict):
            yield node[key], f"{where}/{key}", key in _IN_PLACE
    for key in _MANY:
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                yield sub, f"{where}/{key}/{i}", key in _IN_PLACE
    for key in _NAMED:
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                yield sub, pointer([*_segments(where), key, name]), key in _IN_PLACE


def _segments(at: str) -> list[str]:
    """The (escaped) segments of a pointer :func:`pointer` built, for building on it."""
    return [p.replace("~1", "/").replace("~0", "~") for p in at.split("/")[1:]]


def _resolve(root: Any, ref: str) -> tuple[Any, str | None]:
    """(the target of a local ``$ref``, None) or (None, why it has none)."""
    if ref != "#" and not ref.startswith("#/"):
        return None, (
            f"$ref {ref!r} points outside the schema; only references inside it "
            "('#' or '#/...') are accepted"
        )
    target = root
    for raw in ref[2:].split("/") if ref != "#" else ():
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None, f"$ref {ref!r} points to nothing in the schema"
    if not isinstance(target, (dict, bool)):
        return None, f"$ref {ref!r} points to {type(target).__name__} value, not a schema"
    return target, None


def _reference_problem(root: Any) -> str | None:
    """A ``$ref`` that resolves to nothing, or a cycle of ``$ref`` that never descends."""
    graph: dict[int, list[Any]] = {}  # id(schema) -> the schemas it applies in place
    where: dict[int, str] = {}
    todo: list[tuple[Any, str]] = [(root, "#")]
    while todo:
        node, at = todo.pop()
        if not isinstance(node, dict) or id(node) in where:
            continue
        where[id(node)] = at
        graph[id(node)] = []
        ref = node.get("$ref")
        if isinstance(ref, str):
            target, problem = _resolve(root, ref)
            if problem is not None:
                return f"schema at {at}/$ref: {problem}"
            graph[id(node)].append(target)
            todo.append((target, ref))  # walked too where no keyword leads (a $ref's own)
        for sub, sub_at, in_place in _subschemas(node, at):
            if in_place:
                graph[id(node)].append(sub)
            todo.append((sub, sub_at))
    cycle = _cycle(graph)
    if cycle is None:
        return None
    return (
        f"schema at {where[cycle]}: a $ref cycle leads back here without descending into "
        "properties or items, so no value can ever be validated against it (a recursive "
        "schema is accepted when its recursion goes through properties or items)"
    )


def _cycle(graph: dict[int, list[Any]]) -> int | None:
    """The id of a schema on a cycle of in-place edges, or None (iterative DFS)."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for start in graph:
        if start in state:
            continue
        path: list[tuple[int, Iterator[Any]]] = [(start, iter(graph[start]))]
        state[start] = 1
        while path:
            node, successors = path[-1]
            nxt = next((s for s in successors if isinstance(s, dict)), None)
            if nxt is None:
                state[node] = 2
                path.pop()
            elif state.get(id(nxt)) == 1:
                return id(nxt)
            elif id(nxt) not in state and id(nxt) in graph:
                state[id(nxt)] = 1
                path.append((id(nxt), iter(graph[id(nxt)])))
    return None
