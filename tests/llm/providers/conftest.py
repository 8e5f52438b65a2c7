"""Fixtures shared by the provider test files."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def botocore_validations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The parameters of every walk of botocore's validator during the test (Zerda's memo
    of requests already validated starts empty)."""
    import botocore.validate

    from zerda.llm.wires.bedrock import fastpath

    checked: list[Any] = []
    original = botocore.validate.validate_parameters

    def spy(params: Any, shape: Any) -> None:
        checked.append(params)
        original(params, shape)

    monkeypatch.setattr(botocore.validate, "validate_parameters", spy)
    monkeypatch.setattr(fastpath, "_VALIDATED", {})
    return checked
