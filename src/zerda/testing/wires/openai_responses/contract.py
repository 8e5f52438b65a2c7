"""The contract suite's data about OpenAI's Responses wire (``WireContract``)."""

from __future__ import annotations

import json
from typing import Any

from zerda.testing._wire import WireContract


def call_ids(body: dict[str, Any]) -> list[str | None]:
    """The Responses API's rules: the system prompt is ``instructions``, never an input
    message; every ``function_call_output`` answers a ``function_call`` before it by its
    ``call_id``; every call is answered before the next message; arguments are JSON text."""
    ids: list[str | None] = []
    open_ids: list[str] = []
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "function_call_output":
            assert item["call_id"] in open_ids, item
            open_ids.remove(item["call_id"])
        elif kind == "function_call":
            json.loads(item["arguments"])
            open_ids.append(item["call_id"])
            ids.append(item["call_id"])
        elif kind == "message":
            assert item["role"] in ("user", "assistant"), item
            assert open_ids == [], f"unanswered calls before {item}"
    assert open_ids == []
    return ids


# Responses streams carry usage in response.completed: nothing more to ask for. The
# API always sends input_tokens_details.cached_tokens and
# output_tokens_details.reasoning_tokens.
CONTRACT = WireContract(
    call_ids,
    {"stream": True},
    sdk_errors="openai",
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "reasoning_tokens": 0},
)
