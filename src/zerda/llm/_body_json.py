"""A request body as the JSON bytes the SDKs write, written by orjson when it is installed.

Anthropic's, Mistral's and Ollama's requests post Zerda's body as bytes (issue 12). Their
SDKs (httpx for Ollama) encode with ``json.dumps(ensure_ascii=False, separators=(",", ":"),
allow_nan=False)``; at 1,000 tool round trips (a 390 KB body) that is 5.6 ms of CPU per
call, a fifth of the whole call, where orjson (https://github.com/ijl/orjson) writes the
same bytes in 0.4 ms. orjson comes with those providers' extras; without it the standard
encoder writes the body, as before.

The two differ on what they accept, and Zerda keeps the standard encoder's rules:

- orjson writes NaN and the infinities as ``null`` (the SDKs refuse them) and writes UUIDs
  and enums, which the standard encoder refuses. The body's ``messages`` come from the
  checked history, which refuses such values (:func:`zerda.llm.messages.json_problem`);
  the rest of the body (model, tools and their schemas, native fields), small, is written
  by the standard encoder first, which refuses them as the SDK would.
- Whatever orjson refuses (integers beyond 64 bits, keys that are not text, lone
  surrogates, subclasses, dates, dataclasses: see the passthrough options below) goes to
  the standard encoder, which writes it or refuses it as it always did.

The bytes are the same but for some floats' exponents (``1e-07`` is written ``1e-7``):
the same number (tests/llm/test_body_json.py).
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson ships with the extras that use this module
    _orjson = None  # type: ignore[assignment]

# No circular check: a body is Zerda's own, built fresh from a checked history (which
# refuses cycles), so the C encoder need not track every container it enters.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
# Subclasses of str, int, dict and list, dates and dataclasses are refused by orjson with
# these options, not written its own way: the standard encoder then decides, as before.
_OPTIONS = (
    _orjson.OPT_PASSTHROUGH_SUBCLASS
    | _orjson.OPT_PASSTHROUGH_DATETIME
    | _orjson.OPT_PASSTHROUGH_DATACLASS
    if _orjson is not None
    else 0
)
_STANDARD_REFUSALS = (TypeError, ValueError, UnicodeEncodeError)


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
    if _orjson is None:
        return standard(body)
    rest = {key: value for key, value in body.items() if key != checked}
    if standard(rest) is None:
        return None
    try:
        return _orjson.dumps(body, option=_OPTIONS)
    except _orjson.JSONEncodeError:
        return standard(body)
