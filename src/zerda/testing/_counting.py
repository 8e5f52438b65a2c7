"""The count MockLLMServer's token-counting endpoints answer (``MockWire.count_paths``).

Deterministic, so a test can state it: a script's ``usage["input_tokens"]`` when the answer
queued for the request gives one, else :func:`request_tokens` of the request's body, about
four characters a token of its JSON. No wire is named here: each wire's renderer puts the
count in its own answer (``render_count``).
"""

from __future__ import annotations

import json
from typing import Any

from zerda.testing._script import Script

__all__ = ["CHARS_PER_TOKEN", "request_tokens", "script_tokens"]

CHARS_PER_TOKEN = 4


def request_tokens(body: Any) -> int:
    """The mock's count of a request: the characters of its body as compact JSON with
    sorted keys, over :data:`CHARS_PER_TOKEN`, rounded up (at least 1)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


def script_tokens(script: Script, body: Any) -> int:
    """The count to answer: the script's ``usage["input_tokens"]``, else the request's."""
    given = (script.usage or {}).get("input_tokens")
    return int(given) if given is not None else request_tokens(body)
