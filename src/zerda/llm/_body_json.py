"""A request body as the JSON bytes the SDKs write, written by msgspec when it is installed.

Anthropic's, Mistral's and Ollama's requests post Zerda's body as bytes (issue 12). Their
SDKs (httpx for Ollama) encode with ``json.dumps(ensure_ascii=False, separators=(",", ":"),
allow_nan=False)``; at 1,000 tool round trips (a 390 KB body) that is 4.5 ms of CPU per
call, a fifth of the whole call, where msgspec's encoder (https://jcristharif.com/msgspec/)
writes the same bytes in 0.7 ms. msgspec comes with those providers' extras; without it
the standard encoder writes the body, as before. (orjson is faster still, 0.4 ms, but
reserves six times a string's length while writing it: 127 MiB at its peak for a body
holding an 8 MiB image, against 16 MiB for msgspec and 21 MiB for the standard encoder.)

The two differ on what they accept, and Zerda keeps the standard encoder's rules:

- msgspec writes NaN and the infinities as ``null`` (the SDKs refuse them) and writes
  bytes, sets, UUIDs, dates, enums and dataclasses, which the standard encoder refuses.
  The body's ``messages`` come from the checked history, which refuses such values
  (:func:`zerda.llm.messages.json_problem`); the rest of the body (model, tools and their
  schemas, native fields), small, is written by the standard encoder first, which refuses
  them as the SDK would.
- A payload's text (an image's or a document's base64: :class:`zerda.llm.parts.Base64Text`,
  a str subclass, and :class:`zerda.llm.parts.DataURL`, a ``data:`` URL kept as its head
  and that text) is never written by an encoder: each is written as a placeholder, and the
  body is the pieces around them with the payload's own text between (:class:`Body`). The
  text is ASCII by construction, which JSON writes as it is, so the bytes are the same;
  no 11 MiB JSON string and no second copy of an 8 MiB image's text is made, and no CPU is
  spent scanning it for characters to escape. A fast path that can stream the pieces
  (:meth:`Body.chunks`) sends the text a slice at a time; the others join them
  (:func:`encode_body`). msgspec hands both types to its hook; the standard encoder, used
  without msgspec, writes a Base64Text as the string it is and hands the DataURL to its
  ``default``.
- Whatever else msgspec refuses (other subclasses of ``str``, ``int`` or ``float``, keys
  that are neither text nor numbers, lone surrogates) is written by the standard encoder,
  which writes it or refuses it as it always did.

The bytes are the same but for floats' exponents (``1e-07`` and ``1e+16`` are written
``1e-7`` and ``1e16``): the same numbers (tests/llm/test_body_json.py).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

from zerda.llm.parts import Base64Text, DataURL

# No circular check: a body is Zerda's own, built fresh from a checked history (which
# refuses cycles), so the C encoder need not track every container it enters.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_STANDARD_REFUSALS = (TypeError, ValueError, UnicodeEncodeError)


_UNLOADED: Any = object()
_FAST: Any = _UNLOADED  # msgspec's encoder once loaded; None without msgspec
_FAST_REFUSALS: tuple[type[BaseException], ...] = ()
_FAST_TYPE: Any = None  # msgspec.json.Encoder: one per body, with its payloads' hook


def _fast_encoder() -> Any:
    """msgspec's JSON encoder, imported with the first body, not with the provider modules
    (about 45 ms alone, 4-5 ms after an SDK's import: ``import zerda`` stays light); None
    without msgspec. No hook: msgspec refuses what it does not write itself (str
    subclasses among them), and a body holding such a value is written again with
    :class:`_Payloads` as the hook (:func:`_fast_pieces`)."""
    global _FAST, _FAST_REFUSALS, _FAST_TYPE
    if _FAST is _UNLOADED:
        try:
            import msgspec
        except ImportError:  # pragma: no cover - msgspec ships with the extras using this
            _FAST = None
        else:
            _FAST_REFUSALS = (*_STANDARD_REFUSALS, RecursionError, msgspec.EncodeError)
            _FAST = msgspec.json.Encoder()
            _FAST_TYPE = msgspec.json.Encoder
    return _FAST


def standard(value: Any) -> bytes | None:
    """``value`` as the standard encoder writes it; None when it refuses it."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except _STANDARD_REFUSALS:
        return None


# What an encoder writes in a payload's place: a string no JSON value of a request holds
# (random, per process), found again in the bytes it wrote.
PLACEHOLDER = f"zerda-payload-{os.urandom(16).hex()}"
_QUOTED = f'"{PLACEHOLDER}"'.encode()
_SLICE = 1 << 18  # a payload's text is sent 256 KiB at a time (Body.chunks)


class Body:
    """A request body's JSON bytes as pieces: bytes written by an encoder and, between
    them, each payload's ASCII text (a str, a byte per character), encoded only as it is
    sent. ``length`` is the number of bytes (the Content-Length)."""

    __slots__ = ("length", "pieces")

    def __init__(self, pieces: list[bytes | str]) -> None:
        self.pieces = pieces
        self.length = sum(len(piece) for piece in pieces)

    @property
    def spliced(self) -> bool:
        """Whether the body holds a payload's text (else it is one piece of bytes)."""
        return len(self.pieces) > 1

    def chunks(self) -> Iterator[bytes]:
        """The bytes in order, a payload's text encoded a slice at a time: sending an
        8 MiB image allocates a slice more, not a second copy of its 11 MiB of text."""
        for piece in self.pieces:
            if isinstance(piece, bytes):
                yield piece
                continue
            for start in range(0, len(piece), _SLICE):
                yield piece[start : start + _SLICE].encode()

    def joined(self) -> bytes:
        """The bytes as one object: the encoder's own when there is no payload, else
        written a slice at a time into one growing buffer, whose bytes ``getvalue()``
        hands over without a copy (CPython's BytesIO), so the text is never held twice (a
        join of the pieces would hold the encoded text and the result)."""
        first = self.pieces[0]
        if len(self.pieces) == 1 and isinstance(first, bytes):
            return first
        buffer = io.BytesIO()
        for chunk in self.chunks():
            buffer.write(chunk)
        return buffer.getvalue()


class SyncChunks:
    """``Body.chunks`` as the iterable an httpx ``content=`` takes (each iteration starts
    again, so a resent request sends the same bytes)."""

    __slots__ = ("body",)

    def __init__(self, body: Body) -> None:
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        return self.body.chunks()


class AsyncChunks:
    """``Body.chunks`` as the async iterable an async httpx client's ``content=`` takes
    (httpx reads anything iterable as a sync body: this has only ``__aiter__``)."""

    __slots__ = ("body",)

    def __init__(self, body: Body) -> None:
        self.body = body

    async def _chunks(self) -> AsyncIterator[bytes]:
        for chunk in self.body.chunks():
            yield chunk

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()


def _payload_text(value: Any) -> tuple[str, str] | None:
    """(head, text) of a payload written as it is: a :class:`~zerda.llm.parts.DataURL`'s
    head and text, a :class:`~zerda.llm.parts.Base64Text` alone; None for anything else
    (or text that is not ASCII, which JSON might escape: never so for checked data)."""
    if type(value) is DataURL:
        head, text = value.head, value.data
    elif type(value) is Base64Text:
        head, text = "", value
    else:
        return None
    if not (isinstance(text, str) and text.isascii() and head.isascii()):
        return None
    return head, text


class _Payloads:
    """The encoders' hook: a payload becomes the placeholder, kept in the order written;
    anything else is refused as the encoder would refuse it."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def __call__(self, value: Any) -> Any:
        payload = _payload_text(value)
        if payload is not None:
            self.found.append(payload)
            return PLACEHOLDER
        if type(value) is DataURL:  # not ASCII: written whole, escaped as JSON escapes it
            return str(value)
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def splice_payloads(written: bytes, found: list[tuple[str, str]]) -> Body | None:
    """The pieces of ``written`` around its placeholders, each payload's text between;
    None when they do not match the payloads (then the caller writes the body whole)."""
    if not found:
        return Body([written])
    around = written.split(_QUOTED)
    if len(around) != len(found) + 1:
        return None
    pieces: list[bytes | str] = [around[0]]
    for (head, text), after in zip(found, around[1:], strict=True):
        pieces += [b'"' + head.encode(), text, b'"', after]
    return Body(pieces)


def _standard_pieces(value: Any) -> Body | None:
    """``value`` written by the standard encoder, its DataURLs spliced in (None when it
    refuses a value)."""
    payloads = _Payloads()
    try:
        written = _hooked_standard(payloads).encode(value).encode("utf-8")
    except _STANDARD_REFUSALS:
        return None
    return splice_payloads(written, payloads.found) or _whole(value)


def _hooked_standard(hook: Any) -> json.JSONEncoder:
    return json.JSONEncoder(
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
        check_circular=False,
        default=hook,
    )


def _whole(value: Any) -> Body | None:
    """``value`` with every DataURL written as its string, in one piece."""
    try:
        return Body([_hooked_standard(_url_string).encode(value).encode("utf-8")])
    except _STANDARD_REFUSALS:
        return None


def _url_string(value: Any) -> str:
    if type(value) is DataURL:
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _fast_pieces(fast: Any, body: dict[str, Any]) -> Body | None:
    """``body`` written by msgspec: as it is when it holds no str subclass (no hook: the
    usual body, written at full speed), else again with the payloads' hook; the standard
    encoder's pieces when msgspec refuses a value."""
    try:
        return Body([fast.encode(body)])
    except _FAST_REFUSALS:
        pass
    payloads = _Payloads()
    try:
        written = _FAST_TYPE(enc_hook=payloads).encode(body)
    except _FAST_REFUSALS:
        return _standard_pieces(body)
    return splice_payloads(written, payloads.found) or _standard_pieces(body)


def body_pieces(body: dict[str, Any], checked: str = "messages") -> Body | None:
    """``body`` as the SDKs' JSON bytes, in pieces around its payloads' text; None when
    the standard encoder refuses a value (the caller then hands the body to the SDK's own
    encoder, which says what is wrong). ``body[checked]`` holds only values the history
    check let through."""
    fast = _FAST if _FAST is not _UNLOADED else _fast_encoder()
    if fast is None:
        return _standard_pieces(body)
    rest = {key: value for key, value in body.items() if key != checked}
    try:  # the rest as the standard encoder would take it (payloads aside)
        _hooked_standard(_Payloads()).encode(rest)
    except _STANDARD_REFUSALS:
        return None
    return _fast_pieces(fast, body)


def encode_body(body: dict[str, Any], checked: str = "messages") -> bytes | None:
    """``body`` as the SDKs' JSON bytes, as one object (:func:`body_pieces`, joined)."""
    pieces = body_pieces(body, checked)
    return None if pieces is None else pieces.joined()
