"""The contract suite's data about OpenAI's Chat Completions wire (``WireContract``)."""

from __future__ import annotations

import json
from typing import Any

from zerda.testing._wire import WireContract


def call_ids(body: dict[str, Any]) -> list[str | None]:
    """Chat Completions' rules: one system message, first; every tool message answers one
    call of the assistant turn before it; every call answered before the conversation goes
    on; arguments are JSON text."""
    messages = body["messages"]
    assert [m["role"] for m in messages].count("system") <= 1
    assert all(m["role"] != "system" for m in messages[1:])
    ids: list[str | None] = []
    open_ids: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, m
            open_ids.remove(m["tool_call_id"])
            continue
        assert open_ids == [], f"unanswered calls before {m}"
        for call in m.get("tool_calls") or []:
            json.loads(call["function"]["arguments"])
            open_ids.append(call["id"])
            ids.append(call["id"])
    assert open_ids == []
    return ids


# Without include_usage OpenAI streams carry no usage.
STREAM_FIELDS = {"stream": True, "stream_options": {"include_usage": True}}
# OpenAI always sends prompt_tokens_details.cached_tokens and
# completion_tokens_details.reasoning_tokens.
CONTRACT = WireContract(
    call_ids,
    STREAM_FIELDS,
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "reasoning_tokens": 0},
)
