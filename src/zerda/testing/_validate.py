"""Request validation: the mock refuses what the real API refuses (DESIGN.md §17).

Each wire protocol has its own module, its folder's ``validate.py`` (named by the wire's
``MockWire.validator``), imported the first time a request for that wire arrives. A module
exposes one function::

    rules_for(req: RecordedRequest) -> Sequence[Rule]

returning the rules of the endpoint the request hit (chat completions, /api/chat,
converse...). A rule is a small function ``rule(req) -> Rejection | None``; the first rule
that returns a ``Rejection`` decides the answer, which the wire's renderer turns into the
provider's own error body (``render_error``). Every rule's docstring cites where the real
behaviour was seen: a recording under ``shared/fixtures/recorded`` or the provider's
documentation or a public report quoting the real error body.

A wire with no validation module is not validated. New endpoints (the OpenAI Responses API,
embeddings...) add their rules in their wire's ``rules_for``.
"""

from __future__ import annotations

import functools
import importlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from zerda.testing._script import ErrorReply, RecordedRequest
from zerda.testing.wires import mock_wire


@dataclass(frozen=True)
class Rejection:
    """A broken rule: the status, message and error fields the real API answers with."""

    status: int
    message: str
    error_type: str | None = None  # None: the renderer's type for the status
    fields: dict[str, Any] | None = None  # merged into the provider's error object
    rule: str = ""  # the rule's name, for the request log and for tests
    body: Any = None  # the whole error body, where the provider's shape differs here

    def to_error(self) -> ErrorReply:
        return ErrorReply(
            self.status, self.message, self.error_type, fields=self.fields, body=self.body
        )


Rule = Callable[[RecordedRequest], "Rejection | None"]

# How deep a rule walks a nested structure (schemas, bodies) before giving up on it: a body
# nested a thousand levels must never crash the handler (issue 16).
MAX_DEPTH = 64

_modules: dict[str, ModuleType | None] = {}
_lock = threading.Lock()


def load_validator(wire: str) -> ModuleType | None:
    """The wire's validation module (``zerda.testing.wires.<wire>.validate``), or None when
    the wire has no validation."""
    with _lock:
        if wire not in _modules:
            name = mock_wire(wire).validator
            if name is None:
                _modules[wire] = None
                return None
            try:
                _modules[wire] = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    raise
                _modules[wire] = None
        return _modules[wire]


def check(wire: str, req: RecordedRequest) -> Rejection | None:
    """The first rule ``req`` breaks on ``wire``, or None when the request is valid."""
    module = load_validator(wire)
    if module is None:
        return None
    rules: Sequence[Rule] = module.rules_for(req)
    for rule in rules:
        rejection = rule(req)
        if rejection is not None:
            return rejection if rejection.rule else _named(rejection, rule)
    return None


def _named(rejection: Rejection, rule: Rule) -> Rejection:
    return replace(rejection, rule=getattr(rule, "__name__", "rule"))


# -- helpers shared by the wire modules -----------------------------------------------------


def body_of(req: RecordedRequest) -> dict[str, Any]:
    """The request body as a dict ({} when it is not a JSON object; a rule checks that)."""
    return req.body if isinstance(req.body, dict) else {}


def list_of(value: Any) -> list[Any]:
    """``value`` when it is a list, else []."""
    return value if isinstance(value, list) else []


def dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, item) for the dict items of a list."""
    for index, item in enumerate(list_of(value)):
        if isinstance(item, dict):
            yield index, item


def has_header(req: RecordedRequest, *names: str) -> bool:
    """Whether any of the headers is present and not empty (values are redacted in the
    log, so only presence can be checked)."""
    return any(req.headers.get(name, "").strip() for name in names)


def base64_size(data: str) -> int:
    """How many bytes base64 ``data`` decodes to, without decoding it."""
    text = data.strip()
    return len(text) * 3 // 4 - (len(text) - len(text.rstrip("=")))


def bearer_present(req: RecordedRequest) -> bool:
    """An ``Authorization`` header (its value is redacted, so presence only)."""
    return has_header(req, "authorization")


def number(value: Any) -> float | None:
    """``value`` when it is a JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def shown(value: float) -> str:
    """A number as the APIs print it: ``3`` for 3.0, ``2.5`` for 2.5."""
    return str(int(value)) if value == int(value) else str(value)


# The first bytes of each image format the APIs take (PNG, JPEG, GIF and WebP signatures:
# https://www.w3.org/TR/png/#5PNG-file-signature, ISO/IEC 10918-1 SOI marker,
# https://www.w3.org/Graphics/GIF/spec-gif89a.txt, https://developers.google.com/speed/webp/docs/riff_container).
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
)


def image_format(data: Any) -> str | None:
    """``png`` / ``jpeg`` / ``gif`` / ``webp`` from base64 ``data``'s first bytes, or None
    when they are none of those (or not base64): only a recognised format is compared."""
    if not isinstance(data, str):
        return None
    import base64
    import binascii

    head = data.strip()[:24]
    try:
        raw = base64.b64decode(head[: len(head) // 4 * 4], validate=True)
    except (binascii.Error, ValueError):
        return None
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "webp"
    return next((kind for magic, kind in _SIGNATURES if raw.startswith(magic)), None)


def schema_error(schema: Any) -> tuple[str, str] | None:
    """(JSON pointer, message) of the first way ``schema`` breaks the JSON Schema
    metaschema (draft 2020-12, which the APIs name: Anthropic's "It must match JSON Schema
    draft 2020-12", https://docs.anthropic.com/en/docs/build-with-claude/tool-use), or None.
    A schema nested deeper than ``MAX_DEPTH`` is not walked."""
    if not isinstance(schema, dict) or _depth(schema, 0) > MAX_DEPTH:
        return None
    try:
        key = json.dumps(schema)  # the schema as it came (key order kept): the cache's key
    except (TypeError, ValueError):  # not JSON data (a request built in-process)
        return _schema_error(schema)
    return _cached_schema_error(key)


@functools.lru_cache(maxsize=1024)
def _cached_schema_error(key: str) -> tuple[str, str] | None:
    """A test session sends the same few tool schemas thousands of times: checking one
    against the metaschema was most of the strict mock's CPU per request."""
    return _schema_error(json.loads(key))


def _schema_error(schema: dict[str, Any]) -> tuple[str, str] | None:
    from jsonschema.exceptions import best_match

    error = best_match(_metaschema_validator().iter_errors(schema))
    if error is None:
        return None
    pointer = "".join(f"/{part}" for part in error.absolute_path)
    return pointer, error.message


@functools.cache
def _metaschema_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


def _depth(value: Any, depth: int) -> int:
    if depth > MAX_DEPTH:
        return depth
    if isinstance(value, dict):
        return max((_depth(v, depth + 1) for v in value.values()), default=depth)
    if isinstance(value, list):
        return max((_depth(v, depth + 1) for v in value), default=depth)
    return depth


__all__ = [
    "MAX_DEPTH",
    "Rejection",
    "Rule",
    "base64_size",
    "bearer_present",
    "body_of",
    "check",
    "dicts",
    "has_header",
    "image_format",
    "list_of",
    "load_validator",
    "number",
    "schema_error",
    "shown",
]
