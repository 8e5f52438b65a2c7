"""The mock's layout (issue 30, STYLE.md "Third round"): everything about a wire lives in its
folder ``zerda/testing/wires/<wire>/``; the server, its handler and the shared batch module
name no wire, so a new wire is one new folder and no branch elsewhere."""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

import zerda.testing
from zerda.llm import registry
from zerda.testing import _batches, _cassette, _counting, _server, _validate, wires
from zerda.testing._wire import MockWire, WireContract

TESTING = Path(zerda.testing.__file__).parent
# The modules every wire goes through: none may know one by name.
NEUTRAL = [_server, _batches, _cassette, _validate, _counting, wires]


def _wire_words() -> set[str]:
    """Every registry wire, as written (``openai-responses``) and as a module (``openai_responses``)."""
    return {form for w in registry.wires() for form in (w, w.replace("-", "_"))}


def named_wires(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal or identifier in ``source`` that is a wire's name
    or holds one as a word (``f"/v1/{x}"`` is fine; ``if wire == "groq"``, ``"/openai/v1"``
    and ``_render_openai`` are not)."""
    words = _wire_words()
    strings = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in strings:
            parts = set(re.split(r"[^A-Za-z0-9_-]+", token.string.lower()))
        elif token.type == tokenize.NAME:
            name = token.string.lower()
            parts = {name, name.strip("_"), *re.findall(r"[a-z0-9]+", name)}
        else:
            continue
        if parts & words:
            found.append((token.start[0], token.string))
    return found


def _code_only(source: str) -> str:
    """``source`` without its docstrings (prose may speak of wires; code may not)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                end = body[0].end_lineno or body[0].lineno
                drop.update(range(body[0].lineno - 1, end))
    return "".join("\n" if i in drop else line for i, line in enumerate(lines))


@pytest.mark.parametrize("module", NEUTRAL, ids=lambda m: m.__name__)
def test_neutral_modules_name_no_wire(module: object) -> None:
    source = Path(module.__file__).read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert named_wires(_code_only(source)) == []


@pytest.mark.parametrize(
    "line",
    [
        'if wire == "openai":\n    pass\n',
        "if wire in ('groq', 'mistral'):\n    pass\n",
        'x = _ROUTES["anthropic-vertex"]\n',
        "from zerda.testing import _render_openai\n",
        "def _bedrock_options(base):\n    return base\n",
        'name = "zerda.testing.wires.azure_responses.render"\n',
    ],
)
def test_the_check_finds_a_wire_name(line: str) -> None:
    """The check is real: any of these, added to the server, would fail it."""
    assert named_wires(_code_only(_server_source() + line)) != []


def test_the_check_passes_wire_free_code() -> None:
    assert named_wires('path = f"/v1/{name}"\nwire = wire_of(provider)\n') == []


def _server_source() -> str:
    return Path(_server.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("wire", registry.wires())
def test_every_wire_has_its_folder_and_declaration(wire: str) -> None:
    folder = TESTING / "wires" / wire.replace("-", "_")
    assert (folder / "__init__.py").is_file()
    assert (folder / "validate.py").is_file()
    declared = importlib.import_module(wires.module_name(wire)).WIRE
    assert isinstance(declared, MockWire)
    assert isinstance(declared.contract, WireContract)
    assert declared.routes
    assert wires.mock_wire(wire) is declared
    assert hasattr(importlib.import_module(declared.renderer), "render")
    if declared.renderer != f"{wires.module_name(wire)}.render":
        # A shared renderer is another wire's (its folder says so), never a stray module.
        assert declared.renderer.startswith(f"{wires.__name__}.")
        assert not (folder / "render.py").exists()
    if declared.batches is not None:
        assert declared.batch_paths is not None
        assert hasattr(importlib.import_module(declared.batches), "handle")


def test_no_flat_per_wire_modules_are_left() -> None:
    """The per-wire modules live in the wires' folders, not beside the server."""
    flat = sorted(p.name for p in TESTING.glob("_*.py") if named_wires(p.stem))
    assert flat == []


def test_every_wire_folder_is_a_registry_wire() -> None:
    folders = {p.parent.name for p in (TESTING / "wires").glob("*/__init__.py")}
    assert folders == {w.replace("-", "_") for w in registry.wires()}
