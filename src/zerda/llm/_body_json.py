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
  :class:`zerda.llm.parts.DataURL`, subclasses of ``str``) is refused by msgspec and the
  body written by the standard encoder: msgspec's bytes keep up to half their length again
  allocated until the body is sent (Mistral's peak for an 8 MiB image: 1.50x the raw
  SDK's, 1.33x with the standard encoder, whose bytes are exactly their length). So is
  whatever else msgspec refuses (subclasses of ``int`` or ``float``, keys that are neither
  text nor numbers, lone surrogates): the standard encoder writes it or refuses it as it
  always did.

The bytes are the same but for floats' exponents (``1e-07`` and ``1e+16`` are written
``1e-7`` and ``1e16``): the same numbers (tests/llm/test_body_json.py).
"""

from __future__ import annotations

import json
from typing import Any

# No circular check: a body is Zerda's own, built fresh from a checked history (which
# refuses cycles), so the C encoder need not track every container it enters.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_STANDARD_REFUSALS = (TypeError, ValueError, UnicodeEncodeError)


_UNLOADED: Any = object()
_FAST: Any = _UNLOADED  # msgspec's encoder once loaded; None without msgspec
_FAST_REFUSALS: tuple[type[BaseException], ...] = ()


def _fast_encoder() -> Any:
    """msgspec's JSON encoder, imported with the first body, not with the provider modules
    (about 45 ms alone, 4-5 ms after an SDK's import: ``import zerda`` stays light); None
    without msgspec. No hook: msgspec refuses what it does not write itself (str
    subclasses among them)."""
    global _FAST, _FAST_REFUSALS
    if _FAST is _UNLOADED:
        try:
            import msgspec
        except ImportError:  # pragma: no cover - msgspec ships with the extras using this
            _FAST = None
        else:
            _FAST_REFUSALS = (*_STANDARD_REFUSALS, RecursionError, msgspec.EncodeError)
            _FAST = msgspec.json.Encoder()
    return _FAST


def standard(value: Any) -> bytes | None:
    """``value`` as the standard encoder writes it; None when it refuses it."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except _STANDARD_REFUSALS:
        return None


def encode_body(body: dict[str, Any], checked: str = "messages") -> bytes | None:
    """``body`` as the SDKs' JSON bytes; None when the standard encoder refuses a value
    (the caller then hands the body to the SDK's own encoder, which says what is wrong).
    ``body[checked]`` holds only values the history check let through."""
    fast = _FAST if _FAST is not _UNLOADED else _fast_encoder()
    if fast is None:
        return standard(body)
    rest = {key: value for key, value in body.items() if key != checked}
    if standard(rest) is None:
        return None
    try:
        return fast.encode(body)  # type: ignore[no-any-return]
    except _FAST_REFUSALS:
        return standard(body)
