"""OpenAI's Batch API on MockLLMServer: ``/v1/files`` and ``/v1/batches``, close enough for
the openai SDK's ``client.files`` and ``client.batches`` (Groq serves the same API under
``/openai``: https://console.groq.com/docs/batch, its folder says so).

Each status request moves a job one step: ``validating`` -> ``in_progress`` -> ``completed``,
the items answered at the last one. Checked at creation, as the API does: the bearer
credentials; the file's ``purpose`` is ``batch``, the job names an uploaded file, a supported
``endpoint`` and the ``24h`` window, and every line is JSON with a unique ``custom_id``,
``method: POST`` and the job's ``url`` (else the job ``failed`` with its ``errors``, as OpenAI
reports them).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

from zerda.testing import _validate
from zerda.testing._batches import BatchStore, _answer_item, _Job, _json, _new_id, stored_file
from zerda.testing._batches import _multipart as multipart
from zerda.testing._script import ErrorReply, RecordedRequest, Reply

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

_OPENAI_ENDPOINTS = ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions")


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one files or batches request (``host``: not needed, results are files)."""
    if not _validate.bearer_present(req):
        return renderer.render_error(ErrorReply(401, "Missing bearer authentication."))
    store: BatchStore = mock._batches
    # The wire's own prefix (Groq's /openai) comes before /v1.
    prefix = req.path[: req.path.index("/v1/")]
    path = req.path[len(prefix) :]
    parts = path.strip("/").split("/")  # v1, files|batches, [id], [content|cancel]
    kind, rest = parts[1], parts[2:]
    if kind == "files":
        if not rest and req.method == "POST":
            return _openai_upload(store, req, renderer)
        return stored_file(store, rest, renderer, f"No such File object: {rest[:1]}")
    if not rest and req.method == "POST":
        return _openai_create(store, wire, prefix, req, renderer)
    if not rest:
        with store.lock:
            data = [j.native for j in store.jobs.values() if j.wire == wire]
        return _json(200, {"object": "list", "data": data, "has_more": False})
    with store.lock:
        job = store.jobs.get(rest[0])
    if job is None or job.wire != wire:
        return renderer.render_error(ErrorReply(404, f"No batch found with id '{rest[0]}'."))
    if rest[1:] == ["cancel"]:
        _openai_set(job, "cancelled", cancelled_at=int(time.time()))
    else:
        _openai_step(mock, store, job, renderer)
    return _json(200, job.native)


def _openai_upload(store: BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    fields = multipart(req)
    purpose = fields.get("purpose", (None, b""))[1].decode()
    if "file" not in fields:
        return renderer.render_error(ErrorReply(400, "Missing required parameter: 'file'."))
    if purpose not in ("batch", "assistants", "fine-tune", "vision", "user_data", "evals"):
        return renderer.render_error(
            ErrorReply(
                400,
                f"'{purpose}' is not one of ['fine-tune', 'assistants', 'batch', 'user_data', 'responses', 'vision', 'evals'] - 'purpose'",
            )
        )
    filename, content = fields["file"]
    meta: dict[str, Any] = {
        "id": _new_id("file-"),
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": filename or "upload",
        "purpose": purpose,
        "status": "processed",
        "status_details": None,
    }
    with store.lock:
        store.files[meta["id"]] = (meta, content)
    return _json(200, meta)


def _openai_create(
    store: BatchStore, wire: str, prefix: str, req: RecordedRequest, renderer: Any
) -> Reply:
    body = _validate.body_of(req)
    found = _input_file(store, body)
    if isinstance(found, ErrorReply):
        return renderer.render_error(found)
    endpoint = str(body.get("endpoint"))
    items, errors = _openai_lines(found[1], endpoint)
    now = int(time.time())
    job = _Job(_new_id("batch_"), wire, req.provider, items, dict(req.headers), now, "validating")
    job.base = prefix
    job.native = _native_job(job.id, body, now)
    if errors:
        job.native["errors"] = {"object": "list", "data": errors}
        _openai_set(job, "failed", failed_at=now)
    with store.lock:
        store.jobs[job.id] = job
    return _json(200, job.native)


def _input_file(
    store: BatchStore, body: dict[str, Any]
) -> tuple[dict[str, Any], bytes] | ErrorReply:
    """The job's input file (its metadata and bytes), or the error the API answers."""
    file_id, endpoint = body.get("input_file_id"), body.get("endpoint")
    if endpoint not in _OPENAI_ENDPOINTS:
        message = f"Invalid value: '{endpoint}'. Supported values are: {', '.join(map(repr, _OPENAI_ENDPOINTS))}."
        return ErrorReply(400, message, fields={"param": "endpoint"})
    if body.get("completion_window") != "24h":
        message = f"Invalid value: '{body.get('completion_window')}'. Supported values are: '24h'."
        return ErrorReply(400, message, fields={"param": "completion_window"})
    with store.lock:
        found = store.files.get(file_id) if isinstance(file_id, str) else None
    if found is None:
        message = f"Invalid 'input_file_id': '{file_id}'."
        return ErrorReply(400, message, fields={"param": "input_file_id"})
    if found[0]["purpose"] != "batch":
        return ErrorReply(400, f"File {file_id} was not uploaded with purpose 'batch'.")
    return found


def _native_job(job_id: str, body: dict[str, Any], now: int) -> dict[str, Any]:
    """A new job as the API shows it (``validating``)."""
    return {
        "id": job_id,
        "object": "batch",
        "endpoint": body.get("endpoint"),
        "errors": None,
        "input_file_id": body.get("input_file_id"),
        "completion_window": "24h",
        "status": "validating",
        "output_file_id": None,
        "error_file_id": None,
        "created_at": now,
        "in_progress_at": None,
        "expires_at": now + 86400,
        "finalizing_at": None,
        "completed_at": None,
        "failed_at": None,
        "expired_at": None,
        "cancelling_at": None,
        "cancelled_at": None,
        "request_counts": {"total": 0, "completed": 0, "failed": 0},
        "metadata": body.get("metadata"),
    }


def _openai_lines(
    content: bytes, endpoint: str
) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    """The items of an input file, or the errors that fail the job (as OpenAI's
    ``errors.data``: code, message, line)."""
    items: list[tuple[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            errors.append(
                _line_error(
                    "invalid_json_line", "This line is not parseable as valid JSON.", number
                )
            )
            continue
        cid = entry.get("custom_id") if isinstance(entry, dict) else None
        if not isinstance(cid, str) or not cid:
            errors.append(_line_error("missing_custom_id", "Missing 'custom_id'.", number))
        elif cid in seen:
            errors.append(
                _line_error("duplicate_custom_id", f"The custom_id '{cid}' is not unique.", number)
            )
        elif entry.get("method") != "POST":
            errors.append(_line_error("invalid_method", "Only POST is supported.", number))
        elif entry.get("url") != endpoint:
            message = (
                f"The URL provided for this request does not match the batch endpoint {endpoint}."
            )
            errors.append(_line_error("mismatched_url", message, number))
        else:
            seen.add(cid)
            items.append((cid, entry.get("body")))
    if not items and not errors:
        errors.append(_line_error("empty_file", "The batch input file is empty.", None))
    return items, errors


def _line_error(code: str, message: str, line: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}


def _openai_set(job: _Job, status: str, **times: int) -> None:
    job.status = status
    job.native["status"] = status
    job.native.update(times)


def _openai_step(mock: MockLLMServer, store: BatchStore, job: _Job, renderer: Any) -> None:
    """One status request: validating -> in_progress -> completed (items answered)."""
    now = int(time.time())
    if job.status == "validating":
        job.native["request_counts"] = {"total": len(job.items), "completed": 0, "failed": 0}
        _openai_set(job, "in_progress", in_progress_at=now)
    elif job.status == "in_progress":
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for cid, body in job.items:
            path = job.base + str(job.native["endpoint"])
            status, answer = _answer_item(mock, job, path, body, renderer)
            line = {
                "id": _new_id("batch_req_"),
                "custom_id": cid,
                "response": {"status_code": status, "request_id": uuid.uuid4().hex, "body": answer},
                "error": None,
            }
            (out if status == 200 else err).append(line)
        for key, lines in (("output_file_id", out), ("error_file_id", err)):
            if lines:
                job.native[key] = _store_result_file(store, job, lines)
        job.native["request_counts"] = {
            "total": len(job.items),
            "completed": len(out),
            "failed": len(err),
        }
        _openai_set(job, "completed", finalizing_at=now, completed_at=now)


def _store_result_file(store: BatchStore, job: _Job, lines: list[dict[str, Any]]) -> str:
    content = "".join(json.dumps(line) + "\n" for line in lines).encode()
    meta: dict[str, Any] = {
        "id": _new_id("file-"),
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": f"{job.id}_output.jsonl",
        "purpose": "batch_output",
        "status": "processed",
        "status_details": None,
    }
    with store.lock:
        store.files[meta["id"]] = (meta, content)
    return str(meta["id"])
