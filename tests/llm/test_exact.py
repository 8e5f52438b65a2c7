"""zerda.llm._exact: digests that tell apart what Python tells apart by type and content."""

from __future__ import annotations

from collections import OrderedDict
from decimal import Decimal
from typing import Any

import pytest

from zerda.llm._exact import copy_json, fingerprint


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1], (1,)),
        (1, 1.0),
        (1, True),
        (1, "1"),
        (0.0, -0.0),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # dicts in their order
        ({1: "x"}, {"1": "x"}),
    ],
)
def test_values_of_other_types_or_order_differ(a: Any, b: Any) -> None:
    assert fingerprint(a) != fingerprint(b)


def test_equal_values_of_the_same_types_agree() -> None:
    value = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10}}}
    assert fingerprint(value) == fingerprint({**value}) is not None


@pytest.mark.parametrize(
    "value",
    [OrderedDict(a=1), {"a": Decimal(1)}, {"a": object()}, [type("S", (str,), {})("x")]],
    ids=["dict-subclass", "decimal", "object", "str-subclass"],
)
def test_a_value_holding_other_types_has_no_digest(value: Any) -> None:
    assert fingerprint(value) is None


def test_copy_json_is_an_equal_deep_copy() -> None:
    value = {"a": [{"b": 1.5, "c": None, "d": True}], "e": "é"}
    copied = copy_json(value)
    assert copied == value
    assert copied is not value and copied["a"] is not value["a"]
    assert copied["a"][0] is not value["a"][0]
