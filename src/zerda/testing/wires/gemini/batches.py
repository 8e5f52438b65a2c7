"""Gemini Batch Mode on MockLLMServer (https://ai.google.dev/api/batch-api), close enough for
google-genai's ``client.batches``.

``POST /v1beta/models/{model}:batchGenerateContent`` creates a job from inline requests
(``batch.inputConfig.requests.requests``, each ``{"request", "metadata"}``) and answers a
long-running Operation (``{"name": "batches/...", "metadata": GenerateContentBatch}``);
``GET /v1beta/batches/{id}`` moves it one step (``BATCH_STATE_PENDING`` ->
``BATCH_STATE_RUNNING`` -> ``BATCH_STATE_SUCCEEDED``, the items answered at the last one, in
``metadata.output.inlinedResponses.inlinedResponses``: per request its response or its
``error`` as a google.rpc.Status, with the request's metadata);
``POST /v1beta/batches/{id}:cancel`` cancels it.

Checked as the API does: the API key header, a ``displayName``, and an input config with
requests (a ``fileName`` input is refused: the mock holds no Files API); each item is
answered as a ``generateContent`` request to the job's model would be, validated like one.
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

_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
_OUTPUT_TYPE = f"{_TYPE}Output"
# google.rpc.Code by name (https://github.com/googleapis/googleapis/blob/master/google/rpc/code.proto).
_GRPC_CODES = {
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one batch API request (the batch protocol's ``wire`` and ``host`` are
    not needed here)."""
    # An upload's bytes go to the upload URL, which is their credential (no key header).
    uploading = req.path.startswith("/upload/") and "upload_id" in req.query
    if not uploading and not _validate.has_header(req, "x-goog-api-key", "authorization"):
        message = (
            "Method doesn't allow unregistered callers (callers without established identity)."
        )
        return renderer.render_error(ErrorReply(403, message))
    store: _batches.BatchStore = mock._batches
    if req.path.startswith("/upload/"):
        return _upload(store, req, renderer)
    version, _, rest = req.path.removeprefix("/download").strip("/").partition("/")
    if rest.startswith("files/"):
        return _file(store, rest, renderer)
    if rest.startswith("models/"):
        return _create(store, req, renderer, version, rest[len("models/") :].split(":")[0])
    name, _, verb = rest.partition(":")
    if name == "batches":
        with store.lock:
            data = [_operation(j) for j in store.jobs.values() if j.wire == "gemini"]
        return _batches._json(200, {"operations": data})
    with store.lock:
        job = store.jobs.get(name)
    if job is None or job.wire != "gemini":
        return renderer.render_error(ErrorReply(404, f"Batch {name} not found."))
    if verb == "cancel":
        if job.results is None:
            _set(job, "BATCH_STATE_CANCELLED")
        return _batches._json(200, {})
    _step(mock, job, renderer, version)
    return _batches._json(200, _operation(job))


# --- the Files API (resumable uploads, https://ai.google.dev/api/files) --------------------


def _upload(store: _batches.BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    """``start`` (the file's metadata) answers the upload URL; ``upload[, finalize]`` (the
    bytes, at ``X-Goog-Upload-Offset``) appends, and the last one answers the File."""
    command = req.headers.get("x-goog-upload-command", "")
    upload_id = req.query.get("upload_id")
    if command == "start":
        meta = _validate.body_of(req).get("file") or {}
        file_id = uuid.uuid4().hex[:12]
        with store.lock:
            store.files[f"upload:{file_id}"] = (dict(meta), b"")
        url = f"http://{req.headers.get('host', '')}/{req.provider}{req.path}?upload_id={file_id}"
        headers = {"x-goog-upload-url": url, "x-goog-upload-status": "active"}
        return Reply(200, {**_batches.JSON, **headers}, body=b"{}")
    with store.lock:
        found = store.files.pop(f"upload:{upload_id}", None)
    if found is None or "upload" not in command:
        return renderer.render_error(ErrorReply(400, f"Unknown upload: {upload_id}"))
    meta, content = found
    content += req.raw_body
    if "finalize" not in command:
        with store.lock:
            store.files[f"upload:{upload_id}"] = (meta, content)
        return Reply(200, {**_batches.JSON, "x-goog-upload-status": "active"}, body=b"{}")
    file = _store_file(store, f"files/{upload_id}", content, meta, source="UPLOADED")
    body = json.dumps({"file": file}).encode()
    return Reply(200, {**_batches.JSON, "x-goog-upload-status": "final"}, body=body)


def _store_file(
    store: _batches.BatchStore, name: str, content: bytes, meta: dict[str, Any], source: str
) -> dict[str, Any]:
    now = _batches._iso(time.time())
    file = {
        "name": name,
        # google-genai's start request spells them in snake_case.
        "displayName": meta.get("displayName") or meta.get("display_name") or name,
        "mimeType": meta.get("mimeType") or meta.get("mime_type") or "application/jsonl",
        "sizeBytes": str(len(content)),
        "createTime": now,
        "updateTime": now,
        "uri": f"https://generativelanguage.googleapis.com/v1beta/{name}",
        "state": "ACTIVE",
        "source": source,
    }
    if source == "GENERATED":
        file["downloadUri"] = f"{file['uri']}:download?alt=media"
    with store.lock:
        store.files[name] = (file, content)
    return file


def _file(store: _batches.BatchStore, rest: str, renderer: Any) -> Reply:
    name, _, verb = rest.partition(":")
    with store.lock:
        found = store.files.get(name)
    if found is None:
        return renderer.render_error(ErrorReply(404, f"File {name} not found."))
    if verb == "download":
        return Reply(200, {"content-type": "application/octet-stream"}, body=found[1])
    return _batches._json(200, found[0])


# --- jobs ----------------------------------------------------------------------------------


def _create(
    store: _batches.BatchStore, req: RecordedRequest, renderer: Any, version: str, model: str
) -> Reply:
    batch = _validate.body_of(req).get("batch")
    batch = batch if isinstance(batch, dict) else {}
    if not batch.get("displayName"):
        return renderer.render_error(
            ErrorReply(400, "* GenerateContentBatch.display_name: required")
        )
    raw = batch.get("inputConfig")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    requests = _requests(store, config)
    if isinstance(requests, ErrorReply):
        return renderer.render_error(requests)
    now = int(time.time())
    job_id = f"batches/{uuid.uuid4().hex[:20]}"
    items = [(str(i), entry) for i, entry in enumerate(requests)]
    job = _batches._Job(
        job_id, "gemini", req.provider, items, dict(req.headers), now, "BATCH_STATE_PENDING"
    )
    job.native = {
        "@type": _TYPE,
        "inputConfig": config,
        "model": f"models/{model}",
        "displayName": batch["displayName"],
        "createTime": _batches._iso(now),
        "updateTime": _batches._iso(now),
        "batchStats": {"requestCount": str(len(items)), "pendingRequestCount": str(len(items))},
        "state": "BATCH_STATE_PENDING",
        "name": job_id,
    }
    with store.lock:
        store.jobs[job_id] = job
    return _batches._json(200, _operation(job))


def _requests(store: _batches.BatchStore, config: dict[str, Any]) -> list[Any] | ErrorReply:
    """The job's requests (inline, or the lines of its input file), or the API's refusal."""
    requests = _validate.list_of((config.get("requests") or {}).get("requests"))
    if "fileName" in config:
        with store.lock:
            found = store.files.get(str(config["fileName"]))
        if found is None:
            return ErrorReply(404, f"File {config['fileName']} not found.")
        requests = _file_requests(found[1])
    if not requests:
        return ErrorReply(
            400, "* GenerateContentBatch.input_config: requests or file_name is required"
        )
    for index, entry in enumerate(requests):
        if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict):
            where = f"GenerateContentBatch.input_config.requests.requests[{index}].request"
            return ErrorReply(400, f"* {where}: required")
    return requests


def _file_requests(content: bytes) -> list[Any]:
    """The lines of an input file (``{"key", "request"}``); one that is not JSON is kept as
    ``None``, which the creation refuses like a request without ``request``."""
    lines: list[Any] = []
    for line in content.decode("utf-8", "replace").splitlines():
        if line.strip():
            try:
                lines.append(json.loads(line))
            except ValueError:
                lines.append(None)
    return lines


def _operation(job: _batches._Job) -> dict[str, Any]:
    """The job as the long-running Operation the API answers with."""
    operation: dict[str, Any] = {"name": job.id, "metadata": job.native}
    if job.status in ("BATCH_STATE_SUCCEEDED", "BATCH_STATE_CANCELLED"):
        operation["done"] = True
        output = job.native.get("output")
        if output is not None:
            operation["response"] = {"@type": _OUTPUT_TYPE, **output}
    return operation


def _set(job: _batches._Job, state: str) -> None:
    job.status = state
    job.native["state"] = state
    job.native["updateTime"] = _batches._iso(time.time())
    if state in ("BATCH_STATE_SUCCEEDED", "BATCH_STATE_CANCELLED"):
        job.native["endTime"] = job.native["updateTime"]


def _step(mock: MockLLMServer, job: _batches._Job, renderer: Any, version: str) -> None:
    """One status request: PENDING -> RUNNING -> SUCCEEDED (the items answered)."""
    if job.status == "BATCH_STATE_PENDING":
        _set(job, "BATCH_STATE_RUNNING")
    elif job.status == "BATCH_STATE_RUNNING":
        _finish(mock, job, renderer, version)
        _set(job, "BATCH_STATE_SUCCEEDED")


def _finish(mock: MockLLMServer, job: _batches._Job, renderer: Any, version: str) -> None:
    path = f"/{version}/{job.native['model']}:generateContent"
    responses: list[dict[str, Any]] = []
    for _, entry in job.items:
        status, answer = _batches._answer_item(mock, job, path, entry["request"], renderer)
        response: dict[str, Any] = (
            {"response": answer} if status == 200 else {"error": _status(answer)}
        )
        for name in ("metadata", "key"):  # inline requests carry metadata, file lines a key
            if entry.get(name) is not None:
                response = {name: entry[name], **response}
        responses.append(response)
    failed = sum(1 for r in responses if "error" in r)
    job.results = responses
    if "fileName" in job.native["inputConfig"]:
        name = f"files/batch-{job.id.split('/')[-1]}"
        _store_file(mock._batches, name, _batches.jsonl_bytes(responses), {}, "GENERATED")
        job.native["output"] = {"responsesFile": name}
    else:
        job.native["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
    job.native["batchStats"] = {
        "requestCount": str(len(responses)),
        "successfulRequestCount": str(len(responses) - failed),
        "failedRequestCount": str(failed),
    }


def _status(body: Any) -> dict[str, Any]:
    """An HTTP error body ``{"error": {"code", "message", "status"}}`` as the google.rpc.Status
    a batch item carries: its ``code`` is the gRPC code of ``status``."""
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    return {
        "code": _GRPC_CODES.get(str(error.get("status")), 2),
        "message": str(error.get("message") or "unknown error"),
    }
