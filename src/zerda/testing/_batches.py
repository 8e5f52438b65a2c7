"""Batch APIs on MockLLMServer: OpenAI's files + /v1/batches and Anthropic's Message Batches
here; Mistral's, Gemini's and Bedrock's (with the S3 calls it needs) in ``_batches_<wire>.py``.

Close enough for the real SDKs: job creation, status transitions, results files. Each status
request moves a job one step (OpenAI: ``validating`` -> ``in_progress`` -> ``completed``;
Anthropic: ``in_progress``, ``in_progress`` -> ``ended``); the items are answered when the job ends, each as
one request to the wire's chat endpoint would be: checked by the wire's validation (a broken
item is that item's error, as the real APIs report it), answered from the queues, the
default or ``respond_with``, and logged in ``server.requests`` like any request.

What is checked at creation, as the APIs do: the credentials header; OpenAI: the file's
``purpose`` is ``batch``, the job names an uploaded file, a supported ``endpoint`` and the
``24h`` window, and every line is JSON with a unique ``custom_id``, ``method: POST`` and the
job's ``url`` (else the job ``failed`` with its ``errors``, as OpenAI reports them);
Anthropic: a non-empty ``requests`` list of at most 100,000, each ``custom_id`` unique and
``^[a-zA-Z0-9_-]{1,64}$``, ``params`` an object.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any

from zerda.testing import _validate
from zerda.testing._script import (
    ErrorReply,
    RecordedRequest,
    Reply,
    Responder,
    Script,
)

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

JSON = {"content-type": "application/json"}
_OPENAI_ENDPOINTS = ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions")
_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ANTHROPIC_MAX = 100_000

OPENAI_PATHS = re.compile(r"/v1/(files(/[^/]+(/content)?)?|batches(/[^/]+(/cancel)?)?)")
# Groq serves the same API under /openai (https://console.groq.com/docs/batch).
_PREFIXES = {"openai": "", "groq": "/openai"}
ANTHROPIC_PATHS = re.compile(r"/v1/messages/batches(/[^/]+(/results|/cancel)?)?")


@dataclass
class _Job:
    id: str
    wire: str
    provider: str
    items: list[tuple[str, Any]]  # (custom_id, native body)
    headers: dict[str, str]
    created: int
    status: str
    native: dict[str, Any] = field(default_factory=dict)
    results: list[dict[str, Any]] | None = None
    polls: int = 0


class BatchStore:
    """Uploaded files and jobs of one server."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.jobs: dict[str, _Job] = {}
        self.objects: dict[tuple[str, str], bytes] = {}  # S3, for Bedrock: (bucket, key)

    def clear(self) -> None:
        with self.lock:
            self.files.clear()
            self.jobs.clear()
            self.objects.clear()


def _wire_module(wire: str) -> Any:
    """The module serving ``wire``'s batch API, for the wires with their own module."""
    from zerda.testing import _batches_bedrock, _batches_gemini, _batches_mistral

    modules = {"mistral": _batches_mistral, "gemini": _batches_gemini, "bedrock": _batches_bedrock}
    return modules.get(wire)


def is_batch_path(wire: str, path: str) -> bool:
    if wire == "anthropic":
        return bool(ANTHROPIC_PATHS.fullmatch(path))
    module = _wire_module(wire)
    if module is not None:
        return bool(module.PATHS.fullmatch(path))
    prefix = _PREFIXES.get(wire)
    return (
        prefix is not None
        and path.startswith(prefix)
        and bool(OPENAI_PATHS.fullmatch(path[len(prefix) :]))
    )


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one batch API request."""
    module = _wire_module(wire)
    if module is not None:
        return module.handle(mock, req, renderer)
    if wire in _PREFIXES:
        if not _validate.bearer_present(req):
            return renderer.render_error(ErrorReply(401, "Missing bearer authentication."))
        return _openai(mock, wire, req, renderer)
    if not _validate.has_header(req, "x-api-key", "authorization"):
        return renderer.render_error(
            ErrorReply(401, "x-api-key header is required", "authentication_error")
        )
    return _anthropic(mock, req, renderer, host)


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {**JSON, **(headers or {})}, body=json.dumps(body).encode())


def jsonl_bytes(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


# --- answering the items, as the chat endpoint would ------------------------------------


def _answer_item(
    mock: MockLLMServer, job: _Job, path: str, body: Any, renderer: Any
) -> tuple[int, Any]:
    """(status, JSON body) for one item, validated and answered like a request to ``path``."""
    raw = json.dumps(body).encode()
    req = RecordedRequest(job.provider, "POST", path, {}, dict(job.headers), body, raw)
    mock._record(req)
    if mock.strict:
        rejection = _validate.check(job.wire, req)
        if rejection is not None:
            req.rejected_by = rejection.rule
            return _rendered(renderer.render_error(rejection.to_error()))
    item: Any = mock._next(job.provider)
    if isinstance(item, Responder):
        from zerda.testing._server import answer_from

        item = answer_from(item, req)
    if isinstance(item, ErrorReply):
        return _rendered(renderer.render_error(item))
    if isinstance(item, Script):
        return _rendered(renderer.render(item, req))
    kind = "nothing" if item is None else type(item).__name__
    what = "is queued" if item is None else "cannot answer a batch item"
    message = f"MockLLMServer: {kind} {what} for {job.provider} batch item {path}"
    return _rendered(renderer.render_error(ErrorReply(400, message)))


def _rendered(reply: Reply) -> tuple[int, Any]:
    try:
        return reply.status, json.loads(reply.body or b"null")
    except ValueError:
        return reply.status, None


def stored_file(store: BatchStore, rest: list[str], renderer: Any, missing: str) -> Reply:
    """GET files/{id} (its metadata) or files/{id}/content (its bytes), as OpenAI's and
    Mistral's files APIs answer; ``missing`` is the API's 404 message."""
    with store.lock:
        found = store.files.get(rest[0]) if rest else None
    if found is None:
        return renderer.render_error(ErrorReply(404, missing))
    meta, content = found
    if rest[1:] == ["content"]:
        return Reply(200, {"content-type": "application/octet-stream"}, body=content)
    return _json(200, meta)


# --- OpenAI ------------------------------------------------------------------------------


def _openai(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any) -> Reply:
    store: BatchStore = mock._batches
    path = req.path[len(_PREFIXES[wire]) :]
    parts = path.strip("/").split("/")  # v1, files|batches, [id], [content|cancel]
    kind, rest = parts[1], parts[2:]
    if kind == "files":
        if not rest and req.method == "POST":
            return _openai_upload(store, req, renderer)
        return stored_file(store, rest, renderer, f"No such File object: {rest[:1]}")
    if not rest and req.method == "POST":
        return _openai_create(store, wire, req, renderer)
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


def _multipart(req: RecordedRequest) -> dict[str, tuple[str | None, bytes]]:
    """name -> (filename, bytes) of a multipart/form-data body."""
    ctype = req.headers.get("content-type", "")
    head = f"Content-Type: {ctype}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + req.raw_body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    if not message.is_multipart():
        return fields
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str):
            data = payload if isinstance(payload, bytes) else b""
            fields[name] = (part.get_filename(), data)
    return fields


def _openai_upload(store: BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    fields = _multipart(req)
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


def _openai_create(store: BatchStore, wire: str, req: RecordedRequest, renderer: Any) -> Reply:
    body = _validate.body_of(req)
    file_id, endpoint = body.get("input_file_id"), body.get("endpoint")
    if endpoint not in _OPENAI_ENDPOINTS:
        message = f"Invalid value: '{endpoint}'. Supported values are: {', '.join(map(repr, _OPENAI_ENDPOINTS))}."
        return renderer.render_error(ErrorReply(400, message, fields={"param": "endpoint"}))
    if body.get("completion_window") != "24h":
        message = f"Invalid value: '{body.get('completion_window')}'. Supported values are: '24h'."
        return renderer.render_error(
            ErrorReply(400, message, fields={"param": "completion_window"})
        )
    with store.lock:
        found = store.files.get(file_id) if isinstance(file_id, str) else None
    if found is None:
        return renderer.render_error(
            ErrorReply(
                400, f"Invalid 'input_file_id': '{file_id}'.", fields={"param": "input_file_id"}
            )
        )
    if found[0]["purpose"] != "batch":
        return renderer.render_error(
            ErrorReply(400, f"File {file_id} was not uploaded with purpose 'batch'.")
        )
    items, errors = _openai_lines(found[1], str(endpoint))
    now = int(time.time())
    job = _Job(_new_id("batch_"), wire, req.provider, items, dict(req.headers), now, "validating")
    job.native = {
        "id": job.id,
        "object": "batch",
        "endpoint": endpoint,
        "errors": None,
        "input_file_id": file_id,
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
    if errors:
        job.native["errors"] = {"object": "list", "data": errors}
        _openai_set(job, "failed", failed_at=now)
    with store.lock:
        store.jobs[job.id] = job
    return _json(200, job.native)


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
            path = _PREFIXES[job.wire] + str(job.native["endpoint"])
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


# --- Anthropic ---------------------------------------------------------------------------


def _anthropic(mock: MockLLMServer, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    store: BatchStore = mock._batches
    rest = req.path.strip("/").split("/")[3:]  # v1, messages, batches, [id], [results|cancel]
    if not rest and req.method == "POST":
        return _anthropic_create(store, req, renderer)
    if not rest:
        with store.lock:
            data = [j.native for j in store.jobs.values() if j.wire == "anthropic"]
        return _json(200, {"data": data, "has_more": False, "first_id": None, "last_id": None})
    with store.lock:
        job = store.jobs.get(rest[0])
    if job is None or job.wire != "anthropic":
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


def _anthropic_create(store: BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    requests = _validate.body_of(req).get("requests")
    if not isinstance(requests, list) or not requests:
        return renderer.render_error(
            ErrorReply(400, "requests: List should have at least 1 item after validation, not 0")
        )
    if len(requests) > _ANTHROPIC_MAX:
        return renderer.render_error(
            ErrorReply(400, f"requests: at most {_ANTHROPIC_MAX} requests per batch")
        )
    items: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for index, entry in enumerate(requests):
        cid = entry.get("custom_id") if isinstance(entry, dict) else None
        if not isinstance(cid, str) or not _ANTHROPIC_ID.fullmatch(cid):
            message = (
                f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
            return renderer.render_error(ErrorReply(400, message))
        if cid in seen:
            return renderer.render_error(ErrorReply(400, f"Duplicate custom_id: {cid}"))
        params = entry.get("params")
        if not isinstance(params, dict):
            return renderer.render_error(
                ErrorReply(400, f"requests.{index}.params: Field required")
            )
        seen.add(cid)
        items.append((cid, params))
    now = time.time()
    job = _Job(
        _new_id("msgbatch_"),
        "anthropic",
        req.provider,
        items,
        dict(req.headers),
        int(now),
        "in_progress",
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


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
