"""Gemini Batch Mode (https://ai.google.dev/gemini-api/docs/batch-mode), for ``llm.batch``.

The requests travel inline: ``client.batches.create(model=..., src=[InlinedRequest...])``,
each ``{"contents", "config", "metadata": {"key": caller id}}``; google-genai turns them into
``POST /v1beta/models/{model}:batchGenerateContent`` with ``batch.inputConfig.requests``
(https://ai.google.dev/api/batch-api#method:-models.batchgeneratecontent), converting each
config as ``generate_content`` would (system instruction, tools and tool config move into
the request). Inline requests suit batches up to 20 MB; the file input (a JSONL uploaded with
the Files API) is not mapped.

A job is ``JOB_STATE_PENDING`` / ``RUNNING`` until ``SUCCEEDED``, ``FAILED``, ``CANCELLED`` or
``EXPIRED`` (google-genai renames the API's ``BATCH_STATE_*``); a finished job holds its
answers in ``dest.inlined_responses``: per request a ``GenerateContentResponse`` or an
``error`` (a google.rpc.Status, whose ``code`` is a gRPC code), with the request's metadata.
"""

from __future__ import annotations

from typing import Any

from zerda.llm.batch import BatchStatus, ItemOutcome, State, not_ended
from zerda.llm.errors import InvalidRequestError, error_from_status

# google-genai's JobState values (types.JobState).
_STATES: dict[str, State] = {
    "JOB_STATE_SUCCEEDED": "ended",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "ended",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}

# google.rpc.Code -> HTTP status (https://cloud.google.com/apis/design/errors#handling_errors).
_GRPC_STATUS = {
    1: 499,
    2: 500,
    3: 400,
    4: 504,
    5: 404,
    6: 409,
    7: 403,
    8: 429,
    9: 400,
    10: 409,
    11: 400,
    12: 501,
    13: 500,
    14: 503,
    15: 500,
    16: 401,
}


def map_batch_requests(items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The inline requests: each generate_content request, its caller id in ``metadata``."""
    return [
        {
            "contents": native["contents"],
            "config": _map_config(native["config"]),
            "metadata": {"key": cid},
        }
        for cid, native in items
    ]


def _map_config(config: Any) -> Any:
    """The request's config less ``http_options``: a per-call timeout means nothing to a job."""
    return config.model_copy(update={"http_options": None})


def map_batch_job(
    items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
) -> dict[str, Any]:
    """``batches.create``'s ``config``: the API requires a ``display_name``
    (https://ai.google.dev/api/batch-api#GenerateContentBatch); ``options`` go over it."""
    return {"display_name": f"zerda batch of {len(items)} requests", **options}


def map_batch_status(job: Any) -> BatchStatus:
    native = str(getattr(job.state, "value", job.state))
    responses = _responses(job)
    failed = sum(1 for r in responses if r.error is not None)
    return BatchStatus(
        id=str(job.name),
        state=_STATES.get(native, "in_progress"),
        native_status=native,
        total=len(responses),
        succeeded=len(responses) - failed,
        failed=failed,
    )


def _responses(job: Any) -> list[Any]:
    dest = job.dest
    return list(getattr(dest, "inlined_responses", None) or [])


def map_batch_output(job: Any, provider: str) -> dict[str, ItemOutcome]:
    """caller id -> the GenerateContentResponse, or the item's error."""
    if map_batch_status(job).state == "in_progress":
        raise not_done(job)
    outcomes: dict[str, ItemOutcome] = {}
    for entry in _responses(job):
        key = (entry.metadata or {}).get("key")
        if isinstance(key, str):
            outcomes[key] = _map_entry(entry, provider)
    return outcomes


def _map_entry(entry: Any, provider: str) -> ItemOutcome:
    if entry.error is None and entry.response is not None:
        return ("ok", entry.response)
    error = entry.error
    status = _GRPC_STATUS.get(getattr(error, "code", None) or 2, 500)
    message = str(getattr(error, "message", None) or "the batch returned no response")
    return ("error", error_from_status(status, message, provider))


def not_done(job: Any) -> InvalidRequestError:
    return not_ended(str(job.name), str(getattr(job.state, "value", job.state)))
