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

import importlib
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
    "list_of",
    "load_validator",
]
