"""Anthropic Message Batches (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing),
for ``llm.batch``.

One ``POST /v1/messages/batches`` carries every request as ``{"custom_id", "params"}``
(``params``: the body of ``messages.create``). A job is ``in_progress`` until it has
``ended`` (``canceling`` while a cancel is under way); its results (JSONL, read by the SDK's
``batches.results``) hold per request ``succeeded`` (a Message), ``errored`` (an error body),
``canceled`` or ``expired``.
"""

from __future__ import annotations

import re
from typing import Any

from zerda.llm.batch import BatchStatus, ItemOutcome, not_ended
from zerda.llm.errors import (
    InvalidRequestError,
    TimeoutError,
    UnknownError,
    ZerdaError,
    error_class_for_status,
)

# https://docs.anthropic.com/en/api/creating-message-batches: custom_id.
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")

# Anthropic's error types -> HTTP statuses (https://docs.anthropic.com/en/api/errors).
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def check_ids(items: list[tuple[str, dict[str, Any]]]) -> None:
    for index, (cid, _) in enumerate(items):
        if not CUSTOM_ID.fullmatch(cid):
            raise InvalidRequestError(
                f"batch requests[{index}]: anthropic refuses the id {cid!r}: batch ids there "
                "are 1-64 characters: letters, digits, '_' and '-'"
            )


def map_batch_requests(items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"custom_id": cid, "params": native} for cid, native in items]


def map_batch_status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    native = str(batch.processing_status)
    failed = counts.errored + counts.canceled + counts.expired
    total = counts.processing + counts.succeeded + failed
    return BatchStatus(
        id=batch.id,
        state="ended" if native == "ended" else "in_progress",
        native_status=native,
        total=total,
        succeeded=counts.succeeded,
        failed=failed,
    )


def map_batch_entry(entry: Any, provider: str) -> tuple[str, ItemOutcome]:
    result = entry.result
    kind = result.type
    if kind == "succeeded":
        return entry.custom_id, ("ok", result.message)
    return entry.custom_id, ("error", _item_error(result, kind, provider))


def _item_error(result: Any, kind: str, provider: str) -> ZerdaError:
    if kind == "expired":
        return TimeoutError(
            "the batch expired before this request was processed", provider=provider
        )
    if kind == "canceled":
        return UnknownError(
            "the batch was canceled before this request was processed", provider=provider
        )
    inner = getattr(getattr(result, "error", None), "error", None)
    error_type = str(getattr(inner, "type", "api_error"))
    message = str(getattr(inner, "message", "") or error_type)
    status = _ERROR_STATUS.get(error_type)
    return error_class_for_status(status)(message, status_code=status, provider=provider)


def not_done(batch: Any) -> InvalidRequestError:
    return not_ended(batch.id, str(batch.processing_status))
