"""The provider contract (contract.py), run for every row of the registry: a row added to
``zerda.llm.registry`` runs it with no change here."""

from __future__ import annotations

import pytest

from tests.llm.providers.contract import ProviderContract
from zerda.llm.registry import NAMES


@pytest.fixture(scope="module", params=NAMES)
def provider(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


class TestContract(ProviderContract):
    pass
