"""The provider contract (contract.py), run for every row of the registry: a row added to
``zerda.llm.registry`` runs it with no change here."""

from __future__ import annotations

import pytest

from tests.llm.providers.contract import WIRES, ProviderContract
from zerda.llm import registry


@pytest.fixture(scope="module", params=registry.NAMES)
def provider(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


class TestContract(ProviderContract):
    pass


def test_every_wire_has_its_contract_data() -> None:
    """A row on a new wire protocol says, in its mock folder's contract data (read into
    contract.WIRES), what that wire does its own way."""
    missing = sorted(set(registry.wires()) - set(WIRES))
    assert missing == [], f"add zerda/testing/wires/<wire>/ (WIRE.contract) for {missing}"
