"""The request body's bytes (zerda.llm._body_json): msgspec writes what the SDKs' standard
encoder writes (``json.dumps(ensure_ascii=False, separators=(",", ":"), allow_nan=False)``),
and what that encoder refuses is refused, with msgspec installed or not."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import subprocess
import sys
import tracemalloc
import uuid
from typing import Any

import pytest

from zerda.llm import _body_json, parts

msgspec = pytest.importorskip("msgspec")


def standard(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@pytest.fixture(params=["msgspec", "standard"])
def encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with msgspec and without it (the module's fallback)."""
    if request.param == "standard":
        monkeypatch.setattr(_body_json, "_FAST", None)
    return str(request.param)


def body(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields}


SAME_BYTES: list[dict[str, Any]] = [
    body(),
    body(system='é \u2028 " \\ / \x00 \x1f \x7f \b\f\n\r\t 😀 中文'),
    body(max_tokens=2**64 - 1, min=-(2**63), temperature=0.7, top_p=1.0, zero=-0.0, small=5e-324),
    body(tools=[{"name": "f", "input_schema": {"type": "object", "properties": {}}}]),
    body(nested={"a": [1, [2, [3, {"b": None, "c": True, "d": False}]]], "e": [], "f": {}}),
    body(messages=[{"role": "tool", "content": [{"type": "text", "text": "x" * 100_000}]}]),
]


@pytest.mark.parametrize("value", SAME_BYTES)
def test_the_bytes_are_the_standard_encoders(encoder: str, value: dict[str, Any]) -> None:
    assert _body_json.encode_body(value) == standard(value)


def test_an_exponent_may_be_written_without_its_padding_the_same_number(encoder: str) -> None:
    value = body(small=1e-07, big=1e16, tiny=5e-324)
    written = _body_json.encode_body(value)
    assert written == (
        b'{"model":"m","messages":[{"role":"user","content":"hi"}],'
        + (
            b'"small":1e-7,"big":1e16,"tiny":5e-324}'
            if encoder == "msgspec"
            else b'"small":1e-07,"big":1e+16,"tiny":5e-324}'
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


TREATED_APART = {
    "an integer beyond 64 bits": body(seed=2**64),
    "keys that are not text": body(metadata={1: "a", None: "b", 2.5: "c", False: "d"}),
    "a str subclass": body(system=Text("hi")),
    "an int enum": body(max_tokens=Count.ONE),
    "such values in messages": body(messages=[{"role": "user", "content": Text("x"), 1: 2}]),
}


@pytest.mark.parametrize("value", TREATED_APART.values(), ids=TREATED_APART.keys())
def test_values_the_two_encoders_treat_apart_are_written_as_the_standard_one_writes_them(
    encoder: str, value: dict[str, Any]
) -> None:
    assert _body_json.encode_body(value) == standard(value)


def test_msgspec_writes_the_body_when_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast encoder is the one used (the standard one writes only the small rest)."""
    calls: list[Any] = []
    fast = _body_json._fast_encoder()
    spy = type("Spy", (), {"encode": staticmethod(lambda v: calls.append(v) or fast.encode(v))})
    monkeypatch.setattr(_body_json, "_FAST", spy)
    value = body(system="s")
    assert _body_json.encode_body(value) == standard(value)
    assert calls == [value]


class Overridden(str):
    def __str__(self) -> str:
        return "not the text"


def test_a_str_subclass_is_written_as_its_text(encoder: str) -> None:
    value = body(messages=[{"role": "user", "content": Overridden("the text")}])
    assert _body_json.encode_body(value) == standard(value)
    assert b'"the text"' in (_body_json.encode_body(value) or b"")


def _held_and_peak(value: dict[str, Any]) -> tuple[bytes | None, int, int]:
    """The bytes, and what encoding them left allocated and allocated at most."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        written = _body_json.encode_body(value)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return written, held - base, peak - base


def test_a_large_text_is_written_without_a_large_reservation(encoder: str) -> None:
    """A long text is written with a peak below three times its size (orjson reserved six
    times a string's length: 127 MiB for an 8 MiB image's body)."""
    text = "QUJD" * (1 << 20)  # 4 MiB
    value = body(messages=[{"role": "user", "content": [{"type": "text", "text": text}]}])
    written, _, peak = _held_and_peak(value)
    assert written == standard(value)
    assert peak < 3 * len(text), f"peak {peak / len(text):.1f}x the text"


@pytest.mark.parametrize("kind", ["Base64Text", "DataURL"])
def test_a_payloads_text_leaves_bytes_of_exactly_its_size(encoder: str, kind: str) -> None:
    """An image's base64 text (Zerda's str subclasses) goes to the standard encoder, whose
    bytes are exactly their length: msgspec's keep up to half as much again allocated
    until the body is sent."""
    text = parts.encode(b"\x89PNG" * (3 << 18))  # 4 MiB of base64
    data = text if kind == "Base64Text" else parts.DataURL(f"data:image/png;base64,{text}")
    value = body(messages=[{"role": "user", "content": [{"type": "image", "data": data}]}])
    written, held, _ = _held_and_peak(value)
    assert written == standard(value)
    assert held < 1.05 * len(data), f"{held / len(data):.2f}x the text still allocated"


def test_mistral_sends_an_image_as_a_data_url_the_standard_encoder_writes() -> None:
    from zerda.llm import create_interface, image

    llm = create_interface("mistral", model="mistral-small-latest", api_key="k")
    message = {"role": "user", "content": [image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)]}
    url = llm._native_request([message], {})["messages"][0]["content"][0]["image_url"]["url"]
    assert type(url) is parts.DataURL and url.startswith("data:image/png;base64,iVBORw0K")


def test_canary_msgspec_refuses_a_str_subclass() -> None:
    """What sends a payload's text to the standard encoder: if msgspec ever writes str
    subclasses itself, the rule above must be written another way."""
    with pytest.raises(TypeError):
        msgspec.json.Encoder().encode(parts.DataURL("data:,"))


def test_the_body_is_not_changed(encoder: str) -> None:
    value = body(metadata={1: "a"})
    before = json.dumps(value, sort_keys=True, default=str)
    _body_json.encode_body(value)
    assert json.dumps(value, sort_keys=True, default=str) == before


def test_msgspec_is_imported_with_the_first_body_not_with_the_provider_modules() -> None:
    code = (
        "import sys\n"
        "import zerda.llm.wires.anthropic.interface, zerda.llm.wires.mistral.interface\n"
        "import zerda.llm.wires.ollama.interface\n"
        "assert 'msgspec' not in sys.modules, 'imported with the modules'\n"
        "from zerda.llm import _body_json\n"
        "assert _body_json.encode_body({'messages': []}) == b'{\"messages\":[]}'\n"
        "assert 'msgspec' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
