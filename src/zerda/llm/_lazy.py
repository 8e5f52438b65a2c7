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
