"""The OpenAI Batch API (https://platform.openai.com/docs/guides/batch), for ``llm.batch``.

The requests go in a JSONL file uploaded with ``purpose="batch"``, one line per request:
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; the job is
``POST /v1/batches`` on that file. A finished job names an output file (the requests that
got an answer, each line ``{"custom_id", "response": {"status_code", "body"}}``) and an error
file (requests that failed: a non-200 ``response``, or ``error: {"code", "message"}``).
"""

from __future__ import annotations

import json
from typing import Any

from zerda.llm.batch import BatchStatus, ItemOutcome, State
from zerda.llm.errors import InvalidRequestError, UnknownError, error_from_status

ENDPOINT = "/v1/chat/completions"

# https://platform.openai.com/docs/api-reference/batch/object: status values.
_STATES: dict[str, State] = {
    "validating": "in_progress",
    "in_progress": "in_progress",
    "finalizing": "in_progress",
    "cancelling": "in_progress",
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


def map_batch_file(items: list[tuple[str, dict[str, Any]]]) -> bytes:
    """The JSONL input file."""
    lines = [
        json.dumps(
            {"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": native},
            ensure_ascii=False,
        )
        for cid, native in items
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def map_batch_status(batch: Any) -> BatchStatus:
    counts = getattr(batch, "request_counts", None)
    native = str(batch.status)
    return BatchStatus(
        id=batch.id,
        state=_STATES.get(native, "in_progress"),
        native_status=native,
        total=int(getattr(counts, "total", 0) or 0),
        succeeded=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
    )


def map_batch_output(text: str, provider: str) -> dict[str, ItemOutcome]:
    """custom_id -> the chat completion body, or the item's error, from output/error files."""
    outcomes: dict[str, ItemOutcome] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            cid = entry["custom_id"]
        except (ValueError, KeyError, TypeError):
            continue  # not a result line: the ids it would answer get "no result" errors
        outcomes[str(cid)] = _map_entry(entry, provider)
    return outcomes


def _map_entry(entry: dict[str, Any], provider: str) -> ItemOutcome:
    error = entry.get("error")
    raw = entry.get("response")
    response: dict[str, Any] = raw if isinstance(raw, dict) else {}
    status = response.get("status_code")
    body = response.get("body")
    if isinstance(error, dict) and error:
        message = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
        return ("error", UnknownError(message, provider=provider))
    if status == 200 and isinstance(body, dict):
        return ("ok", body)
    detail = body.get("error") if isinstance(body, dict) else None
    text = detail.get("message") if isinstance(detail, dict) else None
    return ("error", error_from_status(status, str(text or f"HTTP {status}"), provider))


def not_done(batch: Any) -> InvalidRequestError:
    return InvalidRequestError(
        f"batch {batch.id} is {batch.status}: results exist once it has ended (job.wait())"
    )
