"""Anthropic's Message Batches API on MockLLMServer (``/v1/messages/batches``), close enough
for the anthropic SDK's ``client.messages.batches``.

Each status request moves a job one step: ``in_progress``, ``in_progress`` -> ``ended``, the
items answered at the last one (each as a ``/v1/messages`` request). Checked at creation, as
the API does: the credentials header, a non-empty ``requests`` list of at most 100,000, each
``custom_id`` unique and ``^[a-zA-Z0-9_-]{1,64}$``, ``params`` an object.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from zerda.testing import _validate
from zerda.testing._batches import BatchStore, _answer_item, _iso, _Job, _json, _new_id
from zerda.testing._script import ErrorReply, RecordedRequest, Reply

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ANTHROPIC_MAX = 100_000


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one Message Batches request (``host``: where the results URL points)."""
    if not _validate.has_header(req, "x-api-key", "authorization"):
        return renderer.render_error(
            ErrorReply(401, "x-api-key header is required", "authentication_error")
        )
    store: BatchStore = mock._batches
    rest = req.path.strip("/").split("/")[3:]  # v1, messages, batches, [id], [results|cancel]
    if not rest and req.method == "POST":
        return _anthropic_create(store, wire, req, renderer)
    if not rest:
        with store.lock:
            data = [j.native for j in store.jobs.values() if j.wire == wire]
        return _json(200, {"data": data, "has_more": False, "first_id": None, "last_id": None})
    with store.lock:
        job = store.jobs.get(rest[0])
    if job is None or job.wire != wire:
        return renderer.render_error(
            ErrorReply(404, f"batch {rest[0]} not found", "not_found_error")
        )
    if rest[1:] == ["results"]:
        if job.results is None:
            message = f"Batch {job.id} has not ended yet; results are available once it has."
            return renderer.render_error(ErrorReply(400, message))
        body = "".join(json.dumps(line) + "\n" for line in job.results).encode()
        return Reply(200, {"content-type": "application/binary"}, body=body)
    if rest[1:] == ["cancel"]:
        job.native["processing_status"] = "canceling"
        job.native["cancel_initiated_at"] = _iso(time.time())
        job.status = "canceling"
    else:
        _anthropic_step(mock, job, renderer, host)
    return _json(200, job.native)


def _anthropic_create(store: BatchStore, wire: str, req: RecordedRequest, renderer: Any) -> Reply:
    items = _items(_validate.body_of(req).get("requests"))
    if isinstance(items, ErrorReply):
        return renderer.render_error(items)
    now = time.time()
    job = _Job(
        _new_id("msgbatch_"), wire, req.provider, items, dict(req.headers), int(now), "in_progress"
    )
    job.native = {
        "id": job.id,
        "type": "message_batch",
        "processing_status": "in_progress",
        "request_counts": {
            "processing": len(items),
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        },
        "ended_at": None,
        "created_at": _iso(now),
        "expires_at": _iso(now + 86400),
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": None,
    }
    with store.lock:
        store.jobs[job.id] = job
    return _json(200, job.native)


def _items(requests: Any) -> list[tuple[str, Any]] | ErrorReply:
    """(custom_id, params) of a create request's ``requests``, or the error the API answers."""
    if not isinstance(requests, list) or not requests:
        return ErrorReply(400, "requests: List should have at least 1 item after validation, not 0")
    if len(requests) > _ANTHROPIC_MAX:
        return ErrorReply(400, f"requests: at most {_ANTHROPIC_MAX} requests per batch")
    items: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for index, entry in enumerate(requests):
        cid = entry.get("custom_id") if isinstance(entry, dict) else None
        if not isinstance(cid, str) or not _ANTHROPIC_ID.fullmatch(cid):
            message = (
                f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
            return ErrorReply(400, message)
        if cid in seen:
            return ErrorReply(400, f"Duplicate custom_id: {cid}")
        params = entry.get("params")
        if not isinstance(params, dict):
            return ErrorReply(400, f"requests.{index}.params: Field required")
        seen.add(cid)
        items.append((cid, params))
    return items


def _anthropic_step(mock: MockLLMServer, job: _Job, renderer: Any, host: str) -> None:
    """One status request: the first still in_progress, the next ended with the items
    answered (at once when canceling)."""
    if job.results is not None:
        return
    canceled = job.status == "canceling"
    job.polls += 1
    if job.polls == 1 and not canceled:
        return
    results: list[dict[str, Any]] = []
    counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    for cid, params in job.items:
        if canceled:
            results.append({"custom_id": cid, "result": {"type": "canceled"}})
            counts["canceled"] += 1
            continue
        status, answer = _answer_item(mock, job, "/v1/messages", params, renderer)
        if status == 200:
            results.append({"custom_id": cid, "result": {"type": "succeeded", "message": answer}})
            counts["succeeded"] += 1
        else:
            results.append({"custom_id": cid, "result": {"type": "errored", "error": answer}})
            counts["errored"] += 1
    job.results = results
    job.status = "ended"
    job.native.update(
        processing_status="ended",
        request_counts=counts,
        ended_at=_iso(time.time()),
        results_url=f"http://{host}/{job.provider}/v1/messages/batches/{job.id}/results",
    )
