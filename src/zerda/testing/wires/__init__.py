"""One folder per wire protocol on MockLLMServer: ``wires/<wire>/`` (``-`` written ``_``).

Each folder's ``__init__`` declares ``WIRE``, a :class:`~zerda.testing._wire.MockWire`;
beside it ``render.py`` (unless it renders as another wire, which its ``WIRE`` names),
``validate.py``, ``batches.py`` where the wire has a batch API, and ``contract.py`` (the
provider contract suite's data). The wires served are the registry's
(``zerda.llm.registry.wires()``); nothing outside a wire's folder names it.
"""

from __future__ import annotations

import importlib
import threading

from zerda.llm import registry
from zerda.testing._wire import MockWire

_loaded: dict[str, MockWire] = {}
_lock = threading.Lock()


def module_name(wire: str) -> str:
    """The package holding ``wire``'s folder: ``zerda.testing.wires.<wire, - as _>``."""
    return f"{__name__}.{wire.replace('-', '_')}"


def mock_wire(wire: str) -> MockWire:
    """``wire``'s declared :class:`MockWire`, imported once."""
    found = _loaded.get(wire)
    if found is not None:
        return found
    with _lock:
        if wire not in _loaded:
            declared = importlib.import_module(module_name(wire)).WIRE
            if not isinstance(declared, MockWire):
                raise TypeError(f"{module_name(wire)}.WIRE is not a MockWire")
            _loaded[wire] = declared
        return _loaded[wire]


def load_all() -> dict[str, MockWire]:
    """Every registry wire's :class:`MockWire` (a missing folder fails here, at once)."""
    return {wire: mock_wire(wire) for wire in registry.wires()}


__all__ = ["load_all", "mock_wire", "module_name"]
