"""The import directions of docs/architecture.md, read from the source by AST (every import
statement counts: at the top, inside functions, under ``TYPE_CHECKING``, and each module
bound on first use by ``_lazy.module``):

- the provider-neutral core imports neither the registry, nor a wire, nor the interface;
- the registry imports the core's vocabulary and no wire: a row names its class as a
  ``"module:Class"`` string that ``ProviderSpec.interface_class`` imports;
- nothing but the wires themselves (and the ``zerda.llm.providers`` alias shims) imports a
  wire module.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import zerda
from zerda.llm import registry

SRC = Path(zerda.__file__).resolve().parent
ROOT = SRC.parent

# The provider-neutral core: the history format, tools, names and ids, streams, structured
# output, request preparation, errors, retries, usage, the schema walkers, the traits
# vocabulary and the fast-path switch. reasoning.py is not here: it reads the model-family
# profiles (zerda.llm.registry.profiles); the core names its Plan for types only.
CORE = (
    "zerda.llm.messages",
    "zerda.llm.parts",
    "zerda.llm.tools",
    "zerda.llm.executable",
    "zerda.llm._names",
    "zerda.llm._ids",
    "zerda.llm._stream",
    "zerda.llm._structured",
    "zerda.llm._request",
    "zerda.llm.errors",
    "zerda.llm._retry",
    "zerda.llm.usage",
    "zerda.llm._schema_walk",
    "zerda.llm._schema_check",
    "zerda.llm._strict_schema",
    "zerda.llm._gemini_schema",
    "zerda.llm._traits",
    "zerda.llm._record",
    "zerda.llm._timeout",
    "zerda.llm._lazy",
    "zerda.llm._exact",
    "zerda.llm._stack",
    "zerda.llm._fastpath",
    "zerda.llm._body_json",
    "zerda.llm._signatures",
    "zerda.llm._estimate",
    "zerda.llm._tool_output",
    "zerda.llm._cost",
    "zerda.llm.types",
)
ABOVE_CORE = (
    "zerda.llm.registry",
    "zerda.llm.wires",
    "zerda.llm.providers",
    "zerda.llm.base",
    "zerda.llm.interface",
)
WIRES = "zerda.llm.wires"
SHIMS = "zerda.llm.providers"  # zerda.llm.providers.<name>: the documented alias modules


def module_path(name: str) -> Path:
    base = SRC.parent.joinpath(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in the file at ``path``."""
    yield from imports_in(path.read_text(), module_name(path), path.name == "__init__.py")


def imports_in(text: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in ``text`` (the source of ``module``); ``from a
    import b`` yields ``a`` and ``a.b`` (b may be a module), relative imports resolved."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            yield node.lineno, source
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}"
        elif _is_lazy_module(node):
            assert isinstance(node, ast.Call) and isinstance(node.args[0], ast.Constant)
            yield node.lineno, str(node.args[0].value)


def _is_lazy_module(node: ast.AST) -> bool:
    """``_lazy.module("a.b", ...)``: module ``a.b``, imported by the first attribute read."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "module"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "_lazy"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def sources(package: str) -> list[Path]:
    return sorted(module_path(package).parent.rglob("*.py"))


@pytest.mark.parametrize("name", CORE)
def test_the_core_imports_no_registry_wire_or_interface(name: str) -> None:
    path = module_path(name)
    wrong = [
        f"{path.name}:{line} imports {m}" for line, m in imported(path) if within(m, ABOVE_CORE)
    ]
    assert not wrong, wrong


def test_every_core_module_exists() -> None:
    # A module renamed or cut away must leave this list too (else its rule checks nothing).
    for name in CORE:
        assert module_path(name).is_file(), name
        importlib.import_module(name)


# What the registry may import of Zerda: the core's vocabulary and the records it is written
# in, the collector's pause (a wire's modules load with it paused), itself, and the
# interface's base class for the return type of ProviderSpec.interface_class.
REGISTRY_MAY_IMPORT = (
    "zerda.llm._traits",
    "zerda.llm._record",
    "zerda.llm._gc",
    "zerda.llm.registry",
    "zerda.llm.base",
)


def test_the_registry_imports_the_core_vocabulary_and_no_wire() -> None:
    wrong = []
    for path in sources("zerda.llm.registry"):
        for line, m in imported(path):
            if m == "zerda.llm" or not within(m, ("zerda",)):
                continue  # "from zerda.llm import registry" names the package
            if within(m, (WIRES, SHIMS)) or not within(m, REGISTRY_MAY_IMPORT):
                wrong.append(f"{path.name}:{line} imports {m}")
    assert not wrong, wrong


def test_rows_name_their_class_by_string_under_the_wires() -> None:
    # ProviderSpec.interface_class is the registry's one way to a wire.
    for spec in registry.REGISTRY.values():
        module, _, cls = spec.cls.partition(":")
        assert within(module, (WIRES,)) and cls, spec.cls


def test_only_the_wires_and_their_alias_shims_import_a_wire() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        name = module_name(path)
        if within(name, (WIRES, SHIMS)):
            continue
        for line, m in imported(path):
            # zerda.llm.providers itself (create_interface) is no wire; its submodules are.
            if within(m, (WIRES,)) or (
                m.startswith(SHIMS + ".") and m != f"{SHIMS}.create_interface"
            ):
                wrong.append(f"{path.relative_to(SRC)}:{line} imports {m}")
    assert not wrong, wrong


def test_the_reader_finds_imports_where_they_hide() -> None:
    # The rules above are only as good as imports_in(): lazy, TYPE_CHECKING and relative
    # imports all count.
    text = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from zerda.llm.registry import Traits\n"
        "def f():\n    from . import base\n    import zerda.llm.wires.openai.interface\n"
        "    from .wires.gemini import sdk\n"
        "_map = _lazy.module('zerda.llm.wires.bedrock.map', __name__, '_map')\n"
    )
    found = {m for _, m in imports_in(text, "zerda.llm._probe", is_package=False)}
    assert {
        "zerda.llm.registry",
        "zerda.llm.base",
        "zerda.llm.wires.openai.interface",
        "zerda.llm.wires.gemini.sdk",
        "zerda.llm.wires.bedrock.map",
    } <= found
