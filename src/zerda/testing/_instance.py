"""A small, deterministic value that a JSON Schema accepts, for MockLLMServer's model-like
answers (``_modellike.py``): a tool call's arguments, a structured answer.

It reads the schemas Zerda and the providers send: JSON Schema (``$ref`` into ``$defs`` /
``definitions``, ``allOf``, ``anyOf``, ``oneOf``, ``const``, ``enum``, type lists, string
formats, length and number bounds, ``multipleOf``, ``minItems`` / ``maxItems``,
``prefixItems``, ``uniqueItems``, ``minProperties``) and Gemini's OpenAPI ``Schema`` (types
in capitals, ``nullable``, int64 bounds sent as strings). An object gets its required
properties (and optional ones only where ``minProperties`` asks), an enum its first value, a
string ``"example"`` (or a value of its ``format``). It never raises: what it cannot read
becomes ``None``, and a schema it cannot satisfy gets its best effort, which a strict server
then reports as the client's own error would be.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["instance"]

_MAX_DEPTH = 24  # a recursive schema whose recursion is required stops here
_TEXT = "example"
# A value for each string format JSON Schema names (draft 2020-12, "Defined Formats").
_FORMATS = {
    "date-time": "2025-01-01T00:00:00Z",
    "date": "2025-01-01",
    "time": "00:00:00Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com",
    "uri-reference": "https://example.com",
    "iri": "https://example.com",
    "iri-reference": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "regex": ".*",
    "json-pointer": "/example",
}
# Tried in turn against a string's "pattern" when the usual value does not match it.
_PATTERN_TRIES = (_TEXT, "a", "A", "0", "1", "a1", "A1", "abc", "ABC", "example-1", "")


def instance(schema: Any) -> Any:
    """A value ``schema`` accepts (its ``$ref`` resolved within ``schema`` itself)."""
    return _value(schema, schema, 0)


def _value(schema: Any, root: Any, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None  # ``true`` / ``{}``-like schemas accept null; the rest is out of reach
    schema = _resolved(schema, root, depth)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            rest = {k: v for k, v in schema.items() if k != key}
            return _value(
                {**rest, **_resolved(_first_option(schema[key]), root, depth)}, root, depth + 1
            )
    return _typed(schema, _type_of(schema), root, depth)


def _resolved(schema: dict[str, Any], root: Any, depth: int) -> dict[str, Any]:
    """``schema`` with its ``$ref`` followed and its ``allOf`` merged in (its own keys win)."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _pointer(root, ref)
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if isinstance(target, dict) and depth <= _MAX_DEPTH:
            schema = {**_resolved(target, root, depth + 1), **rest}
        else:
            schema = rest
    parts = schema.get("allOf")
    if isinstance(parts, list):
        merged: dict[str, Any] = {}
        for part in parts:
            if isinstance(part, dict):
                merged = _merge(merged, _resolved(part, root, depth + 1))
        schema = _merge(merged, {k: v for k, v in schema.items() if k != "allOf"})
    return schema


def _merge(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """Two object schemas as one: properties and required lists joined, other keys of
    ``more`` over ``base``'s."""
    out = {**base, **more}
    props = {**(base.get("properties") or {}), **(more.get("properties") or {})}
    if props:
        out["properties"] = props
    required = [*(base.get("required") or []), *(more.get("required") or [])]
    if required:
        out["required"] = list(dict.fromkeys(r for r in required if isinstance(r, str)))
    return out


def _pointer(root: Any, ref: str) -> Any:
    """The schema a local ``$ref`` (``#/$defs/Name``) points to; None for another document."""
    if not ref.startswith("#"):
        return None
    node = root
    for token in ref[1:].split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _first_option(options: list[Any]) -> dict[str, Any]:
    """The first option of an anyOf / oneOf that is not just null (Optional[X] gives X)."""
    for option in options:
        if isinstance(option, dict) and _type_of(option) != "null":
            return option
    first = options[0]
    return first if isinstance(first, dict) else {}


def _type_of(schema: dict[str, Any]) -> str:
    """The schema's type, lower-cased (Gemini writes ``OBJECT``); the first that is not
    null of a list; else what its keywords imply."""
    kind = schema.get("type")
    if isinstance(kind, list):
        named = [k for k in kind if isinstance(k, str)]
        kind = next((k for k in named if k.lower() != "null"), named[0] if named else None)
    if isinstance(kind, str):
        return kind.lower()
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return "string"


def _typed(schema: dict[str, Any], kind: str, root: Any, depth: int) -> Any:
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        return _array(schema, root, depth)
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _object(schema: dict[str, Any], root: Any, depth: int) -> dict[str, Any]:
    props = _member(schema, "properties", dict)
    required = [r for r in _member(schema, "required", list) if isinstance(r, str)]
    wanted = max(len(required), _count(schema.get("minProperties")) or 0)
    names = list(dict.fromkeys([*required, *props]))[:wanted]
    extra = schema.get("additionalProperties")
    fallback = extra if isinstance(extra, dict) else {}
    return {name: _value(props.get(name, fallback), root, depth + 1) for name in names}


def _array(schema: dict[str, Any], root: Any, depth: int) -> list[Any]:
    prefix = _member(schema, "prefixItems", list)
    items = schema.get("items")
    size = max(_count(schema.get("minItems")) or 0, len(prefix))
    if not schema.get("uniqueItems"):
        size = max(size, 1)  # one item shows the item's shape
    high = _count(schema.get("maxItems"))
    if high is not None:
        size = min(size, high)
    out: list[Any] = []
    for i in range(size):
        sub = prefix[i] if i < len(prefix) else items
        out.append(_varied(_value(sub if isinstance(sub, dict) else {}, root, depth + 1), i))
    return out


def _member(schema: dict[str, Any], key: str, kind: type) -> Any:
    """``schema[key]`` when it is a ``kind`` (dict or list), else an empty one."""
    value = schema.get(key)
    return value if isinstance(value, kind) else kind()


def _varied(value: Any, i: int) -> Any:
    """The i-th item made different from the ones before it (for ``uniqueItems``)."""
    if i == 0:
        return value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value + i
    if isinstance(value, str):
        return f"{value}{i}"
    return value


def _count(value: Any) -> int | None:
    """A non-negative count (``minItems`` ...) or None; Gemini sends int64 counts as strings."""
    if isinstance(value, bool):
        return None
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return None


def _bound(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    """1 where the bounds allow it, else a value inside them, a multiple of ``multipleOf``
    where one is asked."""
    low, low_open = _limit(schema, "minimum", "exclusiveMinimum", max)
    high, high_open = _limit(schema, "maximum", "exclusiveMaximum", min)
    of = _bound(schema.get("multipleOf"))
    if integer:
        if low is not None:
            low = math.floor(low) + 1 if low_open else math.ceil(low)
        if high is not None:
            high = math.ceil(high) - 1 if high_open else math.floor(high)
        value = max(1, low) if low is not None else 1
        value = min(value, high) if high is not None else value
        return int(_multiple(value, of, high))
    return _multiple(_inside(low, low_open, high, high_open), of, high)


def _inside(low: float | None, low_open: bool, high: float | None, high_open: bool) -> float:
    """1.0 when it lies within the bounds, else their middle, or a value next to the one."""
    above_low = low is None or low < 1 or (low == 1 and not low_open)
    below_high = high is None or high > 1 or (high == 1 and not high_open)
    if above_low and below_high:
        return 1.0
    if low is not None and high is not None:
        return (low + high) / 2
    if low is not None:
        return low + 1 if low_open else low
    assert high is not None  # 1.0 passes every bound that is absent
    return high - 1 if high_open else high


def _limit(
    schema: dict[str, Any], inclusive: str, exclusive: str, tighter: Any
) -> tuple[float | None, bool]:
    """A bound and whether it is open: ``minimum`` / ``exclusiveMinimum`` (a number since
    draft 6, a flag on ``minimum`` in draft 4), the tighter of the two."""
    bound, flag = _bound(schema.get(inclusive)), schema.get(exclusive)
    if flag is True:
        return bound, bound is not None
    open_bound = _bound(flag)
    if open_bound is None:
        return bound, False
    if bound is None or tighter(bound, open_bound) == open_bound:
        return open_bound, True
    return bound, False


def _multiple(value: float, of: float | None, high: float | None) -> float:
    """The first multiple of ``of`` at or above ``value`` (below it when that passes ``high``)."""
    if not of or of <= 0:
        return value
    up = math.ceil(value / of) * of
    return up if high is None or up <= high else math.floor(value / of) * of


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    text = _FORMATS.get(fmt, _TEXT) if isinstance(fmt, str) else _TEXT
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        text = _matching(pattern, text)
    low = _count(schema.get("minLength")) or 0
    high = _count(schema.get("maxLength"))
    if len(text) < low:
        text += "x" * (low - len(text))
    if high is not None and len(text) > high:
        text = text[:high]
    return text


def _matching(pattern: str, usual: str) -> str:
    """The usual value when ``pattern`` finds it, else one written from the pattern, else
    the first try it finds (JSON Schema patterns are ECMA 262 regexes, searched unanchored;
    Python reads the common ones)."""
    try:
        regex = re.compile(pattern)
    except (re.error, RecursionError):
        return usual
    for text in (usual, _from_regex(pattern), *_PATTERN_TRIES):
        if text is not None and regex.search(text):
            return text
    return usual


def _from_regex(pattern: str) -> str | None:
    """A string the regex matches, written from its parse tree (the standard library's own
    parser, ``re._parser``, ``sre_parse`` before Python 3.11); None when it cannot."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # Python 3.10
        import sre_parse as parser
    try:
        return _written(parser.parse(pattern))
    except Exception:  # an unusual construct: the tries take over
        return None


# A character for each class the regex parser names (\d, \w, \s and their negations).
_CATEGORY = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
}


def _written(nodes: Any) -> str:
    """The shortest text the parsed nodes accept, branch by first branch."""
    out = []
    for op, arg in nodes:
        name = op.name
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if arg != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_in_set(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = arg
            out.append(_written(sub) * low)
        elif name == "SUBPATTERN":
            out.append(_written(arg[-1]))
        elif name == "BRANCH":
            out.append(_written(arg[1][0]))
        elif name not in ("AT",):  # anchors add nothing; look-arounds and groups refs fail
            raise ValueError(name)
    return "".join(out)


def _in_set(items: Any) -> str:
    """One character of a ``[...]`` set (its first member; for ``[^...]`` a common character
    outside it)."""
    if items and items[0][0].name == "NEGATE":
        members = items[1:]
        for char in "a0A_- ":
            if not any(_member_of(char, op.name, arg) for op, arg in members):
                return char
        raise ValueError("negated set")
    op, arg = items[0]
    if op.name == "LITERAL":
        return chr(arg)
    if op.name == "RANGE":
        return chr(arg[0])
    if op.name == "CATEGORY":
        return _CATEGORY[arg.name]
    raise ValueError(op.name)


def _member_of(char: str, name: str, arg: Any) -> bool:
    if name == "LITERAL":
        return ord(char) == arg
    if name == "RANGE":
        return bool(arg[0] <= ord(char) <= arg[1])
    if name == "CATEGORY":
        return re.fullmatch(_CATEGORY_REGEX.get(arg.name, "(?!)"), char) is not None
    return False


_CATEGORY_REGEX = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
}
