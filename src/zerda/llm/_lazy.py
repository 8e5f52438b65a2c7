"""A module's names loaded on first access (PEP 562's module ``__getattr__``).

Building an interface (``import zerda.llm``, ``create_interface(...)``, its SDK client) loads
only what building needs; the names a module re-exports for what comes later (the request
checks, a wire's request and response mapping) are loaded by the first access, with the
collector paused as for any of Zerda's modules (:mod:`zerda.llm._gc`), and kept in the
module, so later accesses are plain attribute reads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from zerda.llm import _gc


def attributes(owner: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``owner``: ``sources`` maps each lazy name to the module
    that defines it."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - PEP 562's name
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {owner!r} has no attribute {name!r}")
        import importlib

        with _gc.paused():
            value = getattr(importlib.import_module(source), name)
        setattr(sys.modules[owner], name, value)
        return value

    return __getattr__


class _Module:
    """Stands in a module's global for a module not loaded yet (see :func:`module`)."""

    __slots__ = ("_binding", "_name", "_owner")

    def __init__(self, name: str, owner: str, binding: str) -> None:
        self._name = name
        self._owner = owner
        self._binding = binding

    def __getattr__(self, attr: str) -> Any:
        import importlib

        with _gc.paused():
            loaded = importlib.import_module(self._name)
        setattr(sys.modules[self._owner], self._binding, loaded)
        return getattr(loaded, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, not loaded yet>"


def module(name: str, owner: str, binding: str) -> Any:
    """What module ``owner`` binds to its global ``binding`` for module ``name``, loaded by
    the first attribute read (with the collector paused), which puts the module itself in
    that global: later reads are plain global and attribute reads. A function-level
    ``from name import x`` costs about a microsecond on every call once the module is
    loaded; a request's path ran a dozen of them. Bound under ``if not TYPE_CHECKING``,
    beside the real import for the type checker::

        if TYPE_CHECKING:
            from zerda.llm import _request
        else:
            _request = _lazy.module("zerda.llm._request", __name__, "_request")
    """
    return _Module(name, owner, binding)
