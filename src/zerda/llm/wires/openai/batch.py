"""The OpenAI Batch API (https://platform.openai.com/docs/guides/batch), for ``llm.batch``.

The requests go in a JSONL file uploaded with ``purpose="batch"``, one line per request:
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; the job is
``POST /v1/batches`` on that file. A finished job names an output file (the requests that
got an answer, each line ``{"custom_id", "response": {"status_code", "body"}}``) and an error
file (requests that failed: a non-200 ``response``, or ``error: {"code", "message"}``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from zerda.llm.batch import BatchStatus, ItemOutcome, State, not_ended
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
    return jsonl(
        {"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": native}
        for cid, native in items
    )


def jsonl(lines: Iterable[dict[str, Any]]) -> bytes:
    """JSON Lines (https://jsonlines.org): one JSON object per line, UTF-8, each line ended."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


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
    """One result line (OpenAI's and Mistral's shape): the answer when its response is a
    200, else the error its response or its ``error`` gives."""
    error = entry.get("error")
    raw = entry.get("response")
    response: dict[str, Any] = raw if isinstance(raw, dict) else {}
    status = response.get("status_code")
    body = response.get("body")
    if status == 200 and isinstance(body, dict):
        return ("ok", body)
    if status is None and isinstance(error, dict) and error:
        message = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
        return ("error", UnknownError(message, provider=provider))
    return ("error", error_from_status(status, _error_text(body, status), provider))


def _error_text(body: Any, status: Any) -> str:
    """The message of an error body: OpenAI nests it (``{"error": {"message"}}``), Mistral
    does not (``{"object": "error", "message"}``)."""
    detail = body.get("error") if isinstance(body, dict) else None
    text = detail.get("message") if isinstance(detail, dict) else None
    if text is None and isinstance(body, dict):
        text = body.get("message")
    return str(text or f"HTTP {status}")


def not_done(batch: Any) -> InvalidRequestError:
    return not_ended(batch.id, str(batch.status))
