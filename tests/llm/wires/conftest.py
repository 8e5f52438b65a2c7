"""Fixtures shared by the wire tests: one mock server per module, and the fast-path
decisions (cached once per table and process) forgotten around every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zerda.llm import _fastpath
from zerda.testing import MockLLMServer


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_decisions() -> Iterator[None]:
    """The per-table decision is cached per process: a test that fakes a missing name must
    not leave its answer to the next one."""
    _fastpath._table_usable.cache_clear()
    yield
    _fastpath._table_usable.cache_clear()
