"""Mistral's Files and Batch APIs on MockLLMServer (https://docs.mistral.ai/api/endpoint/batch,
https://docs.mistral.ai/api/endpoint/files), close enough for the ``mistralai`` SDK.

``POST /v1/files`` (multipart: ``file``, ``purpose``), ``GET /v1/files/{id}[/content]``,
``POST /v1/batch/jobs``, ``GET /v1/batch/jobs/{id}`` (each moves a job one step:
``QUEUED`` -> ``RUNNING`` -> ``SUCCESS``, the items answered at the last one),
``POST /v1/batch/jobs/{id}/cancel`` (``CANCELLATION_REQUESTED``, then ``CANCELLED``).

Checked as the API does: the file's ``purpose`` is one of Mistral's, the job names a
supported ``endpoint``, a ``model`` (or an ``agent_id``) and uploaded input files; a line that
is not JSON, has no ``custom_id`` or no ``body`` object, or repeats a ``custom_id``, fails the
job with its ``errors`` (``{"message", "count"}``). Each item is answered as a request to the
job's endpoint with the job's model would be, validated like one.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from zerda.testing import _batches, _validate
from zerda.testing._script import ErrorReply, RecordedRequest, Reply

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

# https://docs.mistral.ai/api/endpoint/files: FilePurpose; /endpoint/batch: APIEndpoint.
_PURPOSES = ("fine-tune", "batch", "ocr", "agentic_safety")
_ENDPOINTS = (
    "/v1/chat/completions",
    "/v1/embeddings",
    "/v1/fim/completions",
    "/v1/moderations",
    "/v1/chat/moderations",
    "/v1/ocr",
    "/v1/classifications",
    "/v1/chat/classifications",
    "/v1/conversations",
    "/v1/audio/transcriptions",
)


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one batch API request (the batch protocol's ``wire`` and ``host`` are
    not needed here)."""
    if not _validate.bearer_present(req):
        return renderer.render_error(
            ErrorReply(401, "Unauthorized", body={"detail": "Unauthorized"})
        )
    store: _batches.BatchStore = mock._batches
    parts = req.path.strip("/").split("/")  # v1, files | batch, [id | jobs], ...
    if parts[1] == "files":
        return _files(store, req, renderer, parts[2:])
    rest = parts[3:]  # v1, batch, jobs, [id], [cancel]
    if not rest and req.method == "POST":
        return _create(store, req, renderer)
    if not rest:
        with store.lock:
            data = [j.native for j in store.jobs.values() if j.wire == "mistral"]
        return _batches._json(200, {"object": "list", "data": data, "total": len(data)})
    with store.lock:
        job = store.jobs.get(rest[0])
    if job is None or job.wire != "mistral":
        return renderer.render_error(ErrorReply(404, f"Batch job {rest[0]} not found"))
    if rest[1:] == ["cancel"]:
        if job.status in ("QUEUED", "RUNNING"):
            _set(job, "CANCELLATION_REQUESTED")
    else:
        _step(mock, job, renderer)
    return _batches._json(200, job.native)


def _files(
    store: _batches.BatchStore, req: RecordedRequest, renderer: Any, rest: list[str]
) -> Reply:
    if not rest and req.method == "POST":
        return _upload(store, req, renderer)
    return _batches.stored_file(store, rest, renderer, f"File {rest[:1]} not found")


def _upload(store: _batches.BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    fields = _batches._multipart(req)
    if "file" not in fields:
        return renderer.render_error(ErrorReply(422, "file: Field required"))
    purpose = fields.get("purpose", (None, b"fine-tune"))[1].decode()
    if purpose not in _PURPOSES:
        expected = ", ".join(repr(p) for p in _PURPOSES)
        return renderer.render_error(ErrorReply(422, f"purpose: Input should be {expected}"))
    filename, content = fields["file"]
    return _batches._json(200, _store_file(store, filename or "upload", content, purpose))


def _store_file(
    store: _batches.BatchStore,
    filename: str,
    content: bytes,
    purpose: str,
    kind: str = "batch_request",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": purpose,
        "sample_type": kind,
        "source": "upload" if kind == "batch_request" else "mistral",
        "num_lines": content.count(b"\n"),
        "mimetype": "application/jsonl",
        "signature": None,
    }
    with store.lock:
        store.files[meta["id"]] = (meta, content)
    return meta


def _create(store: _batches.BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    body = _validate.body_of(req)
    endpoint, model = body.get("endpoint"), body.get("model")
    if endpoint not in _ENDPOINTS:
        expected = ", ".join(repr(e) for e in _ENDPOINTS)
        return renderer.render_error(ErrorReply(422, f"endpoint: Input should be {expected}"))
    if not model and not body.get("agent_id"):
        return renderer.render_error(ErrorReply(400, "Either model or agent_id must be provided"))
    files = _validate.list_of(body.get("input_files"))
    with store.lock:
        found = [store.files.get(f) for f in files if isinstance(f, str)]
    if not files or len(found) != len(files) or None in found:
        return renderer.render_error(ErrorReply(404, f"Input files not found: {files}"))
    content = b"".join(f[1] for f in found if f is not None)
    items, errors = _lines(content)
    job = _batches._Job(
        str(uuid.uuid4()),
        "mistral",
        req.provider,
        items,
        dict(req.headers),
        int(time.time()),
        "QUEUED",
    )
    job.native = _native(job, body, len(items))
    if errors:
        job.native["errors"] = errors
        _set(job, "FAILED", completed_at=job.created)
    with store.lock:
        store.jobs[job.id] = job
    return _batches._json(200, job.native)


def _native(job: _batches._Job, body: dict[str, Any], total: int) -> dict[str, Any]:
    return {
        "id": job.id,
        "object": "batch",
        "input_files": body.get("input_files"),
        "metadata": body.get("metadata"),
        "endpoint": body.get("endpoint"),
        "model": body.get("model"),
        "agent_id": body.get("agent_id"),
        "output_file": None,
        "error_file": None,
        "errors": [],
        "outputs": None,
        "status": "QUEUED",
        "created_at": job.created,
        "total_requests": total,
        "completed_requests": 0,
        "succeeded_requests": 0,
        "failed_requests": 0,
        "started_at": None,
        "completed_at": None,
    }


def _lines(content: bytes) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    """The items of the input files, or the errors that fail the job."""
    items: list[tuple[str, Any]] = []
    problems: dict[str, int] = {}
    seen: set[str] = set()
    for number, line in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        problem = _line_problem(line, number, seen)
        if problem is None:
            entry = json.loads(line)
            seen.add(entry["custom_id"])
            items.append((entry["custom_id"], entry["body"]))
        else:
            problems[problem] = problems.get(problem, 0) + 1
    if not items and not problems:
        problems["The input files hold no request"] = 1
    return items, [{"message": m, "count": n} for m, n in problems.items()]


def _line_problem(line: str, number: int, seen: set[str]) -> str | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return f"Line {number} is not valid JSON"
    cid = entry.get("custom_id") if isinstance(entry, dict) else None
    if not isinstance(cid, str) or not cid:
        return f"Line {number}: custom_id is required"
    if cid in seen:
        return f"Line {number}: custom_id {cid!r} is not unique"
    if not isinstance(entry.get("body"), dict):
        return f"Line {number}: body must be an object"
    return None


def _set(job: _batches._Job, status: str, **times: int) -> None:
    job.status = status
    job.native["status"] = status
    job.native.update(times)


def _step(mock: MockLLMServer, job: _batches._Job, renderer: Any) -> None:
    """One status request: QUEUED -> RUNNING -> SUCCESS (items answered);
    CANCELLATION_REQUESTED -> CANCELLED (none answered)."""
    now = int(time.time())
    if job.status == "QUEUED":
        _set(job, "RUNNING", started_at=now)
    elif job.status == "CANCELLATION_REQUESTED":
        _set(job, "CANCELLED", completed_at=now)
    elif job.status == "RUNNING":
        _finish(mock, job, renderer)
        _set(job, "SUCCESS", completed_at=now)


def _finish(mock: MockLLMServer, job: _batches._Job, renderer: Any) -> None:
    out: list[dict[str, Any]] = []
    err: list[dict[str, Any]] = []
    endpoint, model = str(job.native["endpoint"]), job.native["model"]
    for cid, body in job.items:
        request = {"model": model, **body} if model else body
        status, answer = _batches._answer_item(mock, job, endpoint, request, renderer)
        line = {
            "id": f"batch-{job.id}-{uuid.uuid4().hex[:8]}",
            "custom_id": cid,
            "response": {"status_code": status, "body": answer},
            "error": None,
        }
        (out if status == 200 else err).append(line)
    store: _batches.BatchStore = mock._batches
    for key, lines, kind in (
        ("output_file", out, "batch_result"),
        ("error_file", err, "batch_error"),
    ):
        if lines:
            content = "".join(json.dumps(line) + "\n" for line in lines).encode()
            name = f"{job.id}_{key}.jsonl"
            job.native[key] = _store_file(store, name, content, "batch", kind)["id"]
    job.native.update(
        completed_requests=len(out) + len(err),
        succeeded_requests=len(out),
        failed_requests=len(err),
    )
