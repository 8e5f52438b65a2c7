"""The contract suite's data about Ollama's wire (``WireContract``)."""

from __future__ import annotations

from typing import Any

from zerda.testing._wire import WireContract


def call_ids(body: dict[str, Any]) -> list[str | None]:
    """Ollama's rules: known roles, a system message only first, calls with a name and object arguments,
    each tool result naming the call it answers (in order) and carrying its id if any."""
    messages = body["messages"]
    assert all(m["role"] != "system" for m in messages[1:])
    ids: list[str | None] = []
    pending: list[dict[str, Any]] = []
    for m in messages:
        assert m["role"] in ("system", "user", "assistant", "tool")
        assert isinstance(m["content"], str)
        if m["role"] == "tool":
            call = pending.pop(0)
            assert m["tool_name"] == call["function"]["name"]
            assert m.get("tool_call_id") == call.get("id")
            continue
        assert not pending, "a call without its result"
        if m["role"] == "assistant":
            pending = list(m.get("tool_calls", []))
            for call in pending:
                assert isinstance(call["function"]["name"], str) and call["function"]["name"]
                assert isinstance(call["function"]["arguments"], dict)
                ids.append(call.get("id"))
    assert not pending
    return ids


# ollama's documented ``Client.chat()`` models (``Message.ToolCall``: ``function`` only, and
# ``Message`` without ``tool_call_id``) drop tool-call ids both ways, so with the fast path off
# the ids a round trip asserts are not there (docs/providers/ollama.md, "Fast path").
CONTRACT = WireContract(call_ids, {"stream": True}, documented_call_keeps_ids=False)
