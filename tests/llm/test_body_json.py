"""The request body's bytes (zerda.llm._body_json): orjson writes what the SDKs' standard
encoder writes (``json.dumps(ensure_ascii=False, separators=(",", ":"), allow_nan=False)``),
and what that encoder refuses is refused, with orjson installed or not."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import uuid
from typing import Any

import pytest

from zerda.llm import _body_json

orjson = pytest.importorskip("orjson")


def standard(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@pytest.fixture(params=["orjson", "standard"])
def encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with orjson and without it (the module's fallback)."""
    if request.param == "standard":
        monkeypatch.setattr(_body_json, "_orjson", None)
    return str(request.param)


def body(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields}


SAME_BYTES: list[dict[str, Any]] = [
    body(),
    body(system='é \u2028 " \\ / \x00 \x1f \x7f \b\f\n\r\t 😀 中文'),
    body(max_tokens=2**64 - 1, min=-(2**63), temperature=0.7, top_p=1.0, zero=-0.0, big=1e16),
    body(tools=[{"name": "f", "input_schema": {"type": "object", "properties": {}}}]),
    body(nested={"a": [1, [2, [3, {"b": None, "c": True, "d": False}]]], "e": [], "f": {}}),
    body(messages=[{"role": "tool", "content": [{"type": "text", "text": "x" * 100_000}]}]),
]


@pytest.mark.parametrize("value", SAME_BYTES)
def test_the_bytes_are_the_standard_encoders(encoder: str, value: dict[str, Any]) -> None:
    assert _body_json.encode_body(value) == standard(value)


def test_an_exponent_may_be_written_without_its_padding_the_same_number(encoder: str) -> None:
    value = body(small=1e-07, tiny=5e-324)
    written = _body_json.encode_body(value)
    assert written == (
        b'{"model":"m","messages":[{"role":"user","content":"hi"}],'
        + (
            b'"small":1e-7,"tiny":5e-324}'
            if encoder == "orjson"
            else b'"small":1e-07,"tiny":5e-324}'
        )
    )
    assert json.loads(written) == value


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


REFUSED = {
    "NaN": math.nan,
    "infinity": -math.inf,
    "a UUID": uuid.UUID(int=1),
    "an enum": Colour.RED,
    "a date": datetime.date(2026, 1, 1),
    "a dataclass": Point(1),
    "a set": {1},
    "bytes": b"x",
    "a lone surrogate": "\ud800",
}


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
def test_what_the_standard_encoder_refuses_outside_messages_is_refused(
    encoder: str, value: Any
) -> None:
    # None: the caller hands the body to the SDK's own encoder, which says what is wrong.
    assert _body_json.encode_body(body(metadata={"user_id": value})) is None


class Text(str):
    pass


class Count(enum.IntEnum):
    ONE = 1


FALLBACK = {
    "an integer beyond 64 bits": body(seed=2**64),
    "keys that are not text": body(metadata={1: "a", None: "b", 2.5: "c", False: "d"}),
    "a str subclass": body(system=Text("hi")),
    "an int enum": body(max_tokens=Count.ONE),
    "such values in messages": body(messages=[{"role": "user", "content": Text("x"), 1: 2}]),
}


@pytest.mark.parametrize("value", FALLBACK.values(), ids=FALLBACK.keys())
def test_what_orjson_refuses_is_written_by_the_standard_encoder(
    encoder: str, value: dict[str, Any]
) -> None:
    assert _body_json.encode_body(value) == standard(value)


def test_orjson_writes_the_body_when_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast encoder is the one used (the standard one writes only the small rest)."""
    calls: list[Any] = []
    monkeypatch.setattr(
        _body_json,
        "_orjson",
        type(
            "Spy",
            (),
            {
                "JSONEncodeError": orjson.JSONEncodeError,
                "dumps": staticmethod(
                    lambda v, option: calls.append(v) or orjson.dumps(v, option=option)
                ),
            },
        ),
    )
    value = body(system="s")
    assert _body_json.encode_body(value) == standard(value)
    assert calls == [value]


def test_the_body_is_not_changed(encoder: str) -> None:
    value = body(metadata={1: "a"})
    before = json.dumps(value, sort_keys=True, default=str)
    _body_json.encode_body(value)
    assert json.dumps(value, sort_keys=True, default=str) == before
