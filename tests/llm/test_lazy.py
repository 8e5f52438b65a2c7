"""Names loaded on first access (zerda.llm._lazy): the defining module's very object, kept
in the module after the first access, loaded with the collector paused; an unknown name is
an AttributeError, as for any module."""

from __future__ import annotations

import gc
import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import zerda.llm
from zerda.llm import _lazy, base


@pytest.fixture
def owner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """A module ``lazy_owner`` whose ``answer`` lives in ``lazy_source`` (not loaded yet),
    which notes whether the collector was enabled while it loaded."""
    (tmp_path / "lazy_source.py").write_text(
        "import gc\ncollector_enabled = gc.isenabled()\nanswer = object()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = types.ModuleType("lazy_owner")
    module.__getattr__ = _lazy.attributes("lazy_owner", {"answer": "lazy_source"})  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "lazy_owner", module)
    monkeypatch.delitem(sys.modules, "lazy_source", raising=False)
    was = gc.isenabled()
    gc.enable()
    yield module
    (gc.enable if was else gc.disable)()
    sys.modules.pop("lazy_source", None)


def test_a_lazy_name_loads_its_module_on_first_access_and_is_kept(
    owner: types.ModuleType,
) -> None:
    assert "lazy_source" not in sys.modules
    first = owner.answer
    source = sys.modules["lazy_source"]
    assert first is source.answer
    assert owner.__dict__["answer"] is first  # kept: the next access is a plain read
    assert source.collector_enabled is False  # loaded with the collector paused
    assert gc.isenabled()  # and resumed after


def test_from_import_of_a_lazy_name(owner: types.ModuleType) -> None:
    from lazy_owner import answer  # type: ignore[import-not-found]

    assert answer is sys.modules["lazy_source"].answer


def test_an_unknown_name_is_an_attribute_error(owner: types.ModuleType) -> None:
    with pytest.raises(AttributeError, match="^module 'lazy_owner' has no attribute 'other'$"):
        owner.other  # noqa: B018
    assert "lazy_source" not in sys.modules


def test_a_lazy_module_loads_on_first_attribute_read_and_takes_its_place(
    owner: types.ModuleType,
) -> None:
    owner.source = _lazy.module("lazy_source", "lazy_owner", "source")
    assert "lazy_source" not in sys.modules
    assert repr(owner.source) == "<module 'lazy_source', not loaded yet>"
    answer = owner.source.answer
    source = sys.modules["lazy_source"]
    assert answer is source.answer
    assert owner.source is source  # the global holds the module now: plain reads after
    assert source.collector_enabled is False  # loaded with the collector paused
    assert gc.isenabled()


def test_a_lazy_modules_missing_attribute_is_the_modules_error(owner: types.ModuleType) -> None:
    owner.source = _lazy.module("lazy_source", "lazy_owner", "source")
    with pytest.raises(AttributeError, match="'lazy_source' has no attribute 'other'"):
        owner.source.other  # noqa: B018
    assert owner.source is sys.modules["lazy_source"]


@pytest.mark.parametrize(
    ("module", "table"),
    [(zerda.llm, zerda.llm._LAZY), (base, base._LAZY)],
    ids=["zerda.llm", "zerda.llm.base"],
)
def test_every_lazy_name_is_its_defining_modules_object(
    module: types.ModuleType, table: dict[str, str]
) -> None:
    for name, source in table.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), name
    assert set(zerda.llm.__all__) <= set(dir(zerda.llm)) | set(zerda.llm._LAZY)


def test_bedrocks_media_tables_are_read_from_its_interface_module() -> None:
    from zerda.llm.wires.bedrock import interface, map

    for name in ("_AUDIO_FORMATS", "_DOCUMENT_FORMATS", "_IMAGE_FORMATS", "DEFAULT_MAX_TOKENS"):
        assert getattr(interface, name) is getattr(map, name), name
    assert interface._map_media is map._map_media


def test_ollamas_mapping_is_read_from_its_interface_module() -> None:
    from zerda.llm.wires.ollama import interface, map

    for name in interface._MAPPED:
        assert getattr(interface, name) is getattr(map, name), name
