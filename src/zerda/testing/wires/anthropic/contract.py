"""The contract suite's data about Anthropic's Messages wire (``WireContract``)."""

from __future__ import annotations

from typing import Any

from zerda.testing._wire import WireContract


def call_ids(body: dict[str, Any]) -> list[str | None]:
    """The Messages API's rules: user first, roles alternate, no empty text, thinking only
    in assistant turns, every tool_use answered first thing in the next message."""
    messages = body["messages"]
    roles = [m["role"] for m in messages]
    assert roles[0] == "user"
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    ids: list[str | None] = []
    for i, message in enumerate(messages):
        blocks = message["content"]
        if isinstance(blocks, str):
            assert blocks.strip()
            continue
        for block in blocks:
            assert block["type"] != "text" or block["text"].strip()
            assert block["type"] not in ("thinking", "redacted_thinking") or (
                message["role"] == "assistant"
            )
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        if uses:
            reply = messages[i + 1]["content"]
            answered = [b["tool_use_id"] for b in reply[: len(uses)] if b["type"] == "tool_result"]
            assert answered == uses
        ids.extend(uses)
    return ids


# Anthropic always sends cache_read_input_tokens and cache_creation_input_tokens.
CONTRACT = WireContract(
    call_ids,
    {"stream": True},
    usage_counts=frozenset({"cache_read_tokens", "cache_write_tokens"}),
    usage_zeros={"cache_read_tokens": 0, "cache_write_tokens": 0},
)
