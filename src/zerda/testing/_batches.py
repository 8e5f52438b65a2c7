"""Batch APIs on MockLLMServer: the part every wire shares (the files and jobs store, the
answering of one item, the faults scripted on batch requests); each wire's own API is its
folder's ``batches.py`` (``zerda.testing.wires.<wire>.batches``), named by its
``MockWire.batches``.

Close enough for the real SDKs: job creation, status transitions, results files. Each status
request moves a job one step; the items are answered when the job ends, each as one request
to the wire's chat endpoint would be: checked by the wire's validation (a broken item is that
item's error, as the real APIs report it), answered from the queues, the default or
``respond_with``, and logged in ``server.requests`` like any request.

A wire's batch module exposes ``handle(mock, wire, req, renderer, host) -> Reply``, and may
expose ``render_fault(req, err) -> Reply | None``: a scripted error in the form a path of its
own answers errors (Bedrock's S3 answers XML), None for the renderer's error body.

``MockLLMServer.enqueue_batch_fault`` scripts what the job queues cannot (their items answer
the batch's requests): a batch API request that waits, then fails with the provider's error
(a 503 while a job is polled, an error body that echoes the key), or is answered as usual.
"""

from __future__ import annotations

import importlib
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from email.parser import BytesParser
from email.policy import HTTP
from types import ModuleType
from typing import TYPE_CHECKING, Any

from zerda.testing import _validate
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Responder, Script
from zerda.testing.wires import mock_wire

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

JSON = {"content-type": "application/json"}

_modules: dict[str, ModuleType] = {}
_modules_lock = threading.Lock()


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
    base: str = ""  # the path the items' endpoint is under (Groq's /openai)


@dataclass
class BatchFault:
    """A scripted batch API request (``MockLLMServer.enqueue_batch_fault``): the next one of
    ``provider`` (None: of any) whose path ``path`` matches (``re.search``; None: any path)
    waits ``delay`` seconds, then gets ``raw`` (a reply served as it is: a results file the
    provider broke), else ``error``, else the usual answer."""

    provider: str | None
    path: re.Pattern[str] | None
    delay: float = 0.0
    error: ErrorReply | None = None
    raw: Reply | None = None

    def matches(self, provider: str, path: str) -> bool:
        return self.provider in (None, provider) and (
            self.path is None or self.path.search(path) is not None
        )


class BatchStore:
    """Uploaded files, jobs and scripted faults of one server."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.jobs: dict[str, _Job] = {}
        self.objects: dict[tuple[str, str], bytes] = {}  # S3, for Bedrock: (bucket, key)
        self.faults: list[BatchFault] = []

    def clear(self) -> None:
        with self.lock:
            self.files.clear()
            self.jobs.clear()
            self.objects.clear()
            self.faults.clear()

    def add_fault(self, fault: BatchFault) -> None:
        with self.lock:
            self.faults.append(fault)

    def take_fault(self, provider: str, path: str) -> BatchFault | None:
        """The first queued fault for this request, taken off the queue."""
        with self.lock:
            for index, fault in enumerate(self.faults):
                if fault.matches(provider, path):
                    return self.faults.pop(index)
        return None


def is_batch_path(wire: str, path: str) -> bool:
    """Whether ``path`` is one of ``wire``'s batch API paths."""
    paths = mock_wire(wire).batch_paths
    return paths is not None and bool(paths.fullmatch(path))


def _module(wire: str) -> ModuleType:
    name = mock_wire(wire).batches
    if name is None:
        raise LookupError(f"MockLLMServer: wire {wire!r} has no batch API")
    with _modules_lock:
        if name not in _modules:
            _modules[name] = importlib.import_module(name)
        return _modules[name]


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one batch API request, from the wire's own batch module, unless a
    scripted fault takes it (after its delay)."""
    fault = mock._batches.take_fault(req.provider, req.path)
    if fault is not None and fault.delay > 0:
        mock._stopping.wait(fault.delay)  # stop() releases a waiting handler at once
    if fault is not None and fault.raw is not None:
        return fault.raw
    if fault is not None and fault.error is not None:
        return _fault_reply(_module(wire), req, renderer, fault.error)
    reply: Reply = _module(wire).handle(mock, wire, req, renderer, host)
    return reply


def _fault_reply(module: ModuleType, req: RecordedRequest, renderer: Any, err: ErrorReply) -> Reply:
    """A scripted error as the path answers errors: the wire's ``render_fault`` where it has
    one of its own, else the provider's error body; with ``Retry-After`` when asked."""
    render_fault = getattr(module, "render_fault", None)
    reply: Reply | None = render_fault(req, err) if render_fault is not None else None
    if reply is None:
        reply = renderer.render_error(err)
    if err.body is not None:
        reply = replace(reply, body=json.dumps(err.body).encode("utf-8"))
    if err.retry_after is not None:
        seconds = err.retry_after
        after = {"retry-after": f"{seconds:g}", "retry-after-ms": str(int(seconds * 1000))}
        reply = replace(reply, headers={**after, **reply.headers})
    return reply


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


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
