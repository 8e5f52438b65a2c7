"""The contract suite's data about Gemini's wire (``WireContract``)."""

from __future__ import annotations

from typing import Any

from zerda.testing._wire import WireContract
from zerda.testing.wires.gemini.render import THOUGHT_SIGNATURE


def call_ids(body: dict[str, Any]) -> list[str | None]:
    """Gemini's rules: roles user/model; every model turn with calls is followed by ONE user
    content answering each call (same names, ids matching when sent); the turn's first call
    carries a thought signature (Gemini 3 refuses a history without one)."""
    contents = body["contents"]
    ids: list[str | None] = []
    for i, content in enumerate(contents):
        assert content["role"] in ("user", "model") and content["parts"]
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if not calls:
            continue
        assert content["role"] == "model"
        first = next(p for p in content["parts"] if "functionCall" in p)
        assert first.get("thoughtSignature")
        answer = contents[i + 1]
        assert answer["role"] == "user"
        replies = [p["functionResponse"] for p in answer["parts"] if "functionResponse" in p]
        assert [r["name"] for r in replies] == [c["name"] for c in calls]
        assert [r.get("id") for r in replies] == [c.get("id") for c in calls]
        ids.extend(c.get("id") for c in calls)
    return ids


# google.rpc codes by HTTP status (https://cloud.google.com/apis/design/errors#handling_errors);
# statuses outside that table (a proxy's 408, 413, 422) come as UNKNOWN.
GOOGLE_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "UNKNOWN",
    409: "ABORTED",
    413: "UNKNOWN",
    422: "UNKNOWN",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def call_data(n: int) -> dict[str, Any] | None:
    """Gemini thinking models sign a turn's first call (the mock does as they do)."""
    return {"gemini": {"thought_signatures": [THOUGHT_SIGNATURE] + [None] * (n - 1)}} if n else None


# Streams go to streamGenerateContent with the same body.
CONTRACT = WireContract(
    call_ids,
    error_codes=GOOGLE_CODES,
    error_message="{code}: {message}",
    sdk_errors="google.genai",
    # No cache writes; thoughtsTokenCount is the reasoning (added to the output).
    usage_counts=frozenset({"cache_read_tokens", "reasoning_tokens"}),
    call_data=call_data,
)
