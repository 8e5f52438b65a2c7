"""Fast paths, contained (DESIGN §22): the private SDK names a wire's fast path relies on, and
the one decision whether an interface may take it.

Each wire that posts its own body through an SDK's lower layer lists every private or
undocumented name it uses in one table, ``PRIVATE_NAMES`` in its ``fastpath`` module, as
:class:`PrivateName` rows; one canary test walks every table. An interface built with
``fast_path=False``, or running on an installed SDK that lacks a listed name, uses the SDK's
documented call instead: slower, never broken. The missing name is found once per table and
process, and said once in a DEBUG log.

Part of the provider-neutral core: it imports no SDK until a table is checked, and no wire.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import Sequence
from typing import Any

from zerda.llm._record import record

logger = logging.getLogger("zerda")


@record
class PrivateName:
    """One private or undocumented name: ``module`` is imported, then ``path`` (dotted
    attributes, e.g. ``"BaseClient._request_raw"``) is read from it. ``why`` says what the
    fast path does with it, for the canary's message and the docs. ``keywords``: the
    parameters the callable (or class) found there must take, or the keys of a TypedDict;
    ``assigns``: the instance attributes the function found there (an ``__init__``) sets,
    which no class attribute shows."""

    module: str
    path: str
    why: str
    keywords: tuple[str, ...] = ()
    assigns: tuple[str, ...] = ()
    # Where older releases kept the same object, as (module, path) pairs, tried in order
    # when ``module.path`` is absent (a name that moved between releases).
    formerly: tuple[tuple[str, str], ...] = ()

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.path}"

    def present(self) -> bool:
        return self.resolve() is not _ABSENT

    def resolve(self) -> Any:
        """The object the name stands for (its first place that has it), else ``_ABSENT``."""
        for module, path in ((self.module, self.path), *self.formerly):
            obj = _lookup(module, path)
            if obj is _ABSENT:
                continue
            if set(self.keywords) <= _keywords(obj) and set(self.assigns) <= _assigned(obj):
                return obj
        return _ABSENT


_ABSENT = object()


def _lookup(module: str, path: str) -> Any:
    try:
        obj: Any = importlib.import_module(module)
    except ImportError:
        return _ABSENT
    for attribute in path.split("."):
        if not hasattr(obj, attribute):
            return _ABSENT
        obj = getattr(obj, attribute)
    return obj


def _keywords(obj: Any) -> set[str]:
    """A TypedDict's keys, else the parameters of a callable (none if it has no signature)."""
    keys = getattr(obj, "__required_keys__", None)
    if keys is not None:
        return set(keys) | set(obj.__optional_keys__)
    try:
        return set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return set()


def _assigned(obj: Any) -> set[str]:
    """The attribute names a function's code uses (``self.x = ...`` among them)."""
    code = getattr(inspect.unwrap(obj), "__code__", None)
    return set(code.co_names) if code is not None else set()


def missing(names: Sequence[PrivateName]) -> list[PrivateName]:
    """The names of ``names`` that the installed SDKs lack (the canary asserts none)."""
    return [name for name in names if not name.present()]


@functools.lru_cache(maxsize=64)
def _table_usable(wire: str, names: tuple[PrivateName, ...]) -> bool:
    absent = missing(names)
    if absent:
        logger.debug(
            "zerda: the %s fast path is off: the installed SDK lacks %s; using its documented call",
            wire,
            ", ".join(n.qualified for n in absent),
        )
    return not absent


def fast_path_on(wire: str, names: Sequence[PrivateName], wanted: bool = True) -> bool:
    """Whether an interface takes ``wire``'s fast path: it asked for it (``fast_path=True``,
    the default) and the installed SDK has every name of the wire's table. Checked once per
    table and process; the first check that finds a name missing logs it at DEBUG."""
    return wanted and _table_usable(wire, tuple(names))
