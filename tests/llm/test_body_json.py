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


def with_strings(value: Any) -> bytes:
    """What an SDK given the body's data URLs as strings writes."""
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str
    ).encode()


def image_body(kind: str) -> tuple[dict[str, Any], str]:
    """A body holding a 4 MiB image's base64 text, as a Base64Text or a DataURL."""
    text = parts.encode(b"\x89PNG" * (3 << 18))
    data: Any = text if kind == "Base64Text" else parts.DataURL("image/png", text)
    content = [{"type": "text", "text": "What?"}, {"type": "image", "data": data}]
    return body(messages=[{"role": "user", "content": content}], system="s"), text


@pytest.mark.parametrize("kind", ["Base64Text", "DataURL"])
def test_a_payload_is_written_as_the_standard_encoder_writes_its_string(
    encoder: str, kind: str
) -> None:
    value, _ = image_body(kind)
    expected = with_strings(value)
    assert _body_json.encode_body(value) == expected
    pieces = _body_json.body_pieces(value)
    assert pieces is not None and pieces.length == len(expected)
    assert b"".join(pieces.chunks()) == expected == pieces.joined()


SPLICED = [("msgspec", "Base64Text"), ("msgspec", "DataURL"), ("standard", "DataURL")]


@pytest.mark.parametrize(("encoder", "kind"), SPLICED, indirect=["encoder"])
def test_a_payloads_text_is_a_piece_of_the_body_not_a_copy(encoder: str, kind: str) -> None:
    """No encoder writes the text: it is the part's own string, between the bytes written
    around it (the standard encoder writes a Base64Text, a str, itself)."""
    value, text = image_body(kind)
    pieces = _body_json.body_pieces(value)
    assert pieces is not None and pieces.spliced
    assert [p for p in pieces.pieces if isinstance(p, str)] == [text]
    assert next(p for p in pieces.pieces if isinstance(p, str)) is text
    assert sum(len(p) for p in pieces.pieces if isinstance(p, bytes)) < 200


def _peak_of(work: Any) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        work()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("encoder", "kind"), SPLICED, indirect=["encoder"])
def test_writing_and_sending_a_payload_allocates_a_slice_not_a_copy(
    encoder: str, kind: str
) -> None:
    """Counted, not timed: the pieces' chunks hold a slice of the text at a time (256 KiB
    here, a tenth of it with room to spare), where writing the body whole allocated the
    JSON text and its bytes (twice the text); joining them, once the text."""
    value, text = image_body(kind)

    def send() -> None:
        pieces = _body_json.body_pieces(value)
        assert pieces is not None
        for _ in pieces.chunks():
            pass

    assert _peak_of(send) < 0.25 * len(text)
    joined = _peak_of(lambda: _body_json.body_pieces(value).joined())  # type: ignore[union-attr]
    assert joined < 1.25 * len(text)


def test_a_text_holding_the_placeholder_is_written_as_it_is(encoder: str) -> None:
    value, _ = image_body("DataURL")
    value["system"] = _body_json.PLACEHOLDER
    value["metadata"] = {"note": f'"{_body_json.PLACEHOLDER}"'}
    assert _body_json.encode_body(value) == with_strings(value)


def test_a_data_url_is_the_string_it_stands_for() -> None:
    text = parts.encode(b"\x89PNG\r\n\x1a\n")
    url = parts.DataURL("image/png", text)
    assert str(url) == f"data:image/png;base64,{text}" == url
    assert url != f"data:image/jpeg;base64,{text}" and url != str(url) + "="
    assert url == parts.DataURL("image/png", str(text)) and len(url) == len(str(url))
    assert hash(url) == hash(str(url)) and "characters" in repr(url)


def test_with_urls_makes_data_urls_strings_in_place() -> None:
    url = parts.DataURL("image/png", parts.encode(b"\x89PNG"))
    loop: dict[str, Any] = {"n": 1}
    loop["self"] = loop  # a caller's native value may contain itself
    kwargs = {"messages": [{"content": [{"image_url": {"url": url}}, url]}], "x": loop}
    assert parts.with_urls(kwargs) is kwargs
    content = kwargs["messages"][0]["content"]  # type: ignore[index]
    assert type(content[0]["image_url"]["url"]) is str and type(content[1]) is str
    assert content[1] == str(url) and kwargs["x"] is loop


def test_mistral_maps_an_image_to_a_data_url_of_the_parts_own_text() -> None:
    """The fast path's body holds the part's text (no data URL built); a batch line, which
    is JSON data, gets the URL as a string."""
    from zerda.llm import create_interface, image

    llm = create_interface("mistral", model="mistral-small-latest", api_key="k")
    part = image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    message = {"role": "user", "content": [part]}
    _, native = llm._checked_request([message], {})
    url = native["messages"][0]["content"][0]["image_url"]["url"]
    assert type(url) is parts.DataURL and url.data is part["data"]
    line = llm._native_request([message], {})["messages"][0]["content"][0]["image_url"]["url"]
    assert type(line) is str and line.startswith("data:image/png;base64,iVBORw0K")


def test_canary_msgspec_hands_a_str_subclass_to_its_hook() -> None:
    """What splices a payload's text: msgspec refuses a str subclass without a hook (the
    usual body is written hookless, at full speed) and hands it to its hook otherwise. If
    msgspec ever writes str subclasses itself, the rule must be written another way."""
    text = parts.encode(b"abc")
    with pytest.raises(TypeError):
        msgspec.json.Encoder().encode({"a": text})
    seen: list[Any] = []
    hooked = msgspec.json.Encoder(enc_hook=lambda v: seen.append(v) or "x")
    assert hooked.encode({"a": text}) == b'{"a":"x"}' and seen == [text]


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
