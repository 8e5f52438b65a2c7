"""pytest plugin: the ``mock_llm_server`` fixture (a fresh MockLLMServer per test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zerda.testing._server import MockLLMServer


@pytest.fixture
def mock_llm_server() -> Iterator[MockLLMServer]:
    """A running MockLLMServer, stopped after the test."""
    with MockLLMServer() as server:
        yield server
