"""The one canary over every fast path's table of private SDK names (DESIGN §22).

Each wire whose fast path uses private or undocumented SDK names lists them in its
``zerda.llm.wires.<wire>.fastpath`` module, as tuples of :class:`PrivateName` (``PRIVATE_NAMES``,
and any other ``*_NAMES`` table a wire keeps for a second row). This test finds every such
table, so a wire added later is covered with no change here, and asserts that the installed
SDKs have every name: when one fails, that SDK release changed what the fast path uses
(Zerda still works, through the documented call; the fast path needs updating).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import pickle
import pkgutil
import uuid
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest

import zerda.llm.wires
from zerda.llm import _fastpath, create_interface, registry
from zerda.llm._fastpath import PrivateName, fast_path_on, missing
from zerda.testing import MockLLMServer

# The tables this suite must find (others' are found the same way): a discovery that
# found nothing would pass every table vacuously.
KNOWN = {"openai", "openai_responses", "groq", "azure", "mistral", "ollama"}


def _is_table(name: str, value: Any) -> bool:
    return (
        name.endswith("NAMES")
        and isinstance(value, tuple)
        and bool(value)
        and all(isinstance(v, PrivateName) for v in value)
    )


def _tables() -> Iterator[tuple[str, str, tuple[PrivateName, ...]]]:
    """(wire folder, table name, table) of every wires/<wire>/fastpath.py; an empty table
    for a module that cannot be imported without its SDK."""
    for info in pkgutil.iter_modules(zerda.llm.wires.__path__):
        if not info.ispkg:
            continue
        name = f"zerda.llm.wires.{info.name}.fastpath"
        if importlib.util.find_spec(name) is None:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # a fastpath module that imports its SDK, not installed
            if (exc.name or "zerda").startswith("zerda"):
                raise
            yield info.name, f"<{exc.name} not installed>", ()
            continue
        for attribute, value in sorted(vars(module).items()):
            if _is_table(attribute, value):
                yield info.name, attribute, value


TABLES = list(_tables())


def test_every_known_table_is_found() -> None:
    assert {wire for wire, _, _ in TABLES} >= KNOWN


@pytest.mark.parametrize(("wire", "table", "names"), TABLES, ids=[f"{w}.{t}" for w, t, _ in TABLES])
def test_the_installed_sdk_has_every_name(
    wire: str, table: str, names: tuple[PrivateName, ...]
) -> None:
    sdk = names[0].module.split(".")[0] if names else table
    if not names or importlib.util.find_spec(sdk) is None:
        pytest.skip(f"{sdk} is not installed")
    absent = [f"{n.qualified}: {n.why}" for n in missing(names)]
    assert absent == [], f"{wire}/fastpath.py {table}: the installed {sdk} lacks {absent}"


# --- the decision ------------------------------------------------------------------------


def _fresh_wire() -> str:
    """A wire name no other test used: the decision is cached per table and process."""
    return f"test-{uuid.uuid4().hex[:8]}"


def test_a_missing_name_turns_the_fast_path_off_with_one_debug_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = _fresh_wire()
    table = (
        PrivateName("json", "dumps", "there"),
        PrivateName("json", "no_such_helper", "gone"),
    )
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        assert fast_path_on(wire, table) is False
        assert fast_path_on(wire, table) is False  # checked once: no second record
    records = [r for r in caplog.records if wire in r.getMessage()]
    assert len(records) == 1
    assert records[0].levelno == logging.DEBUG
    assert "json.no_such_helper" in records[0].getMessage()
    assert "json.dumps" not in records[0].getMessage()


def test_a_complete_table_keeps_it_on_and_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    wire = _fresh_wire()
    table = (PrivateName("json", "JSONDecoder.decode", "there"),)
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        assert fast_path_on(wire, table) is True
        assert fast_path_on(wire, table, wanted=False) is False  # fast_path=False wins
    assert [r for r in caplog.records if wire in r.getMessage()] == []


def test_a_missing_module_is_a_missing_name() -> None:
    assert missing([PrivateName("zerda_no_such_sdk", "Client.post", "gone")]) != []


class _Options(TypedDict, total=False):
    headers: dict[str, str]
    timeout: float


class _Holder:
    def __init__(self) -> None:
        self._client = object()


@pytest.mark.parametrize(
    ("name", "present"),
    [
        (PrivateName("json", "dumps", "", keywords=("obj", "indent")), True),
        (PrivateName("json", "dumps", "", keywords=("obj", "no_such_keyword")), False),
        (PrivateName("json", "JSONDecoder", "", keywords=("strict",)), True),  # a class's
        (PrivateName(__name__, "_Options", "", keywords=("headers", "timeout")), True),
        (PrivateName(__name__, "_Options", "", keywords=("extra_json",)), False),
        (PrivateName(__name__, "_Holder.__init__", "", assigns=("_client",)), True),
        (PrivateName(__name__, "_Holder.__init__", "", assigns=("_http",)), False),
        (PrivateName("json", "__name__", "", keywords=("x",)), False),  # no signature
    ],
)
def test_keywords_and_assigned_attributes_are_checked(name: PrivateName, present: bool) -> None:
    assert name.present() is present


@pytest.fixture(autouse=True)
def _no_cached_decision_leaks() -> Iterator[None]:
    yield
    _fastpath._table_usable.cache_clear()


@pytest.mark.parametrize("row", registry.NAMES)
def test_a_pickle_decides_again_where_it_is_loaded(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, row: str
) -> None:
    """Every row's fast-path decision is the shared base's, made on first use and again
    where a pickle is loaded: a worker whose SDK lacks a listed name uses the documented call."""
    pytest.importorskip(registry.get(row).sdk_module)
    llm = create_interface(row, model="m-1", **server.client_options(row))
    assert llm._fast is True
    cls = type(llm)
    gone = PrivateName("zerda", "no_such_sdk_name", "a test's missing name")
    monkeypatch.setattr(cls, "fast_path_names", (*cls.fast_path_names, gone))
    _fastpath._table_usable.cache_clear()
    loaded = pickle.loads(pickle.dumps(llm))
    assert loaded._fast is False and loaded.fast_path is True


@pytest.mark.parametrize("row", registry.NAMES)
def test_the_decision_is_made_on_first_use_not_in_the_constructor(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, row: str
) -> None:
    """Checking a table imports SDK modules (a Stainless SDK's ``resources.chat``) that
    building an interface does not need, so the constructor leaves it to first use: a name
    found missing after construction still turns the fast path off."""
    pytest.importorskip(registry.get(row).sdk_module)
    _fastpath._table_usable.cache_clear()
    llm = create_interface(row, model="m-1", **server.client_options(row))
    cls = type(llm)
    gone = PrivateName("zerda", "no_such_sdk_name", "a test's missing name")
    monkeypatch.setattr(cls, "fast_path_names", (*cls.fast_path_names, gone))
    assert llm._fast is False and llm.fast_path is True


def test_a_name_that_moved_is_found_where_older_releases_kept_it() -> None:
    moved = PrivateName(
        "json", "no_such_name", "a table that moved", formerly=(("json.decoder", "JSONDecoder"),)
    )
    import json.decoder

    assert moved.present() is True
    assert moved.resolve() is json.decoder.JSONDecoder
    gone = PrivateName("json", "no_such_name", "gone", formerly=(("json", "still_not_here"),))
    assert gone.present() is False
