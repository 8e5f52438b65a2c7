"""Bedrock batch inference on MockLLMServer, with the S3 calls it needs, close enough for
boto3's ``bedrock`` and ``s3`` clients (``MockLLMServer.client_options("bedrock")`` points
them here through ``endpoint_urls``: the control plane at ``/bedrock``, S3 at ``/bedrock/s3``,
path style).

Control plane (https://docs.aws.amazon.com/bedrock/latest/APIReference/, rest-json):
``POST /model-invocation-job`` (CreateModelInvocationJob), ``GET /model-invocation-job/{arn}``
(GetModelInvocationJob: each moves a job one step, ``Submitted`` -> ``Validating`` ->
``InProgress`` -> ``Completed``, the records answered at the last one),
``POST /model-invocation-job/{arn}/stop`` (``Stopping``, then ``Stopped``).
S3 (https://docs.aws.amazon.com/AmazonS3/latest/API/): ``PUT /s3/{bucket}/{key}`` (PutObject,
``aws-chunked`` bodies included), ``GET /s3/{bucket}/{key}`` (GetObject),
``GET /s3/{bucket}?list-type=2&prefix=`` (ListObjectsV2, XML); buckets exist on first use.

Checked as the API does: SigV4 credentials, the job name and role ARN patterns, a model id, an
input location holding objects, an output location, a known ``modelInvocationType`` (only
``Converse`` jobs are answered here). Each JSONL line is a record: ``modelInput`` is answered as
a Converse request to the job's model would be, validated like one; the results go to
``{output}/{job id}/{input file}.out`` (``modelOutput``, or ``error: {"errorCode",
"errorMessage"}``) with a ``manifest.json.out`` of counts
(https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote
from xml.sax.saxutils import escape

from zerda.testing import _batches, _validate
from zerda.testing._script import ErrorReply, RecordedRequest, Reply

if TYPE_CHECKING:
    from zerda.testing._server import MockLLMServer

_ACCOUNT = "123456789012"
# https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html
_JOB_NAME = re.compile(r"[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63}")
_ROLE_ARN = re.compile(r"arn:aws(-[^:]+)?:iam::([0-9]{12})?:role/.+")
_S3_URI = re.compile(r"s3://([a-z0-9][-.a-z0-9]{1,61}[a-z0-9])(/.*)?")
_TYPES = ("InvokeModel", "Converse")
_XML = {"content-type": "application/xml"}


def handle(mock: MockLLMServer, wire: str, req: RecordedRequest, renderer: Any, host: str) -> Reply:
    """The reply to one batch API request (the batch protocol's ``wire`` and ``host`` are
    not needed here)."""
    if not _validate.has_header(req, "authorization"):
        return renderer.render_error(
            ErrorReply(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
        )
    if req.path.startswith("/s3/"):
        return _s3(mock._batches, req)
    parts = [
        unquote(p) for p in req.path.strip("/").split("/")
    ]  # model-invocation-job, [arn], [stop]
    if len(parts) == 1:
        return _create(mock._batches, req, renderer)
    with mock._batches.lock:
        job = mock._batches.jobs.get(parts[1].rsplit("/", 1)[-1])
    if job is None or job.wire != "bedrock":
        return renderer.render_error(ErrorReply(404, f"Could not find job {parts[1]}"))
    if parts[2:] == ["stop"]:
        if job.status in ("Submitted", "Validating", "Scheduled", "InProgress"):
            _set(job, "Stopping")
        return _batches._json(200, {})
    _step(mock, job, renderer)
    return _batches._json(200, job.native)


# --- control plane --------------------------------------------------------------------------


def _create(store: _batches.BatchStore, req: RecordedRequest, renderer: Any) -> Reply:
    body = _validate.body_of(req)
    problem = _job_problem(store, body)
    if problem is not None:
        return renderer.render_error(ErrorReply(400, problem))
    job_id = uuid.uuid4().hex[:12]
    arn = f"arn:aws:bedrock:us-east-1:{_ACCOUNT}:model-invocation-job/{job_id}"
    now = time.time()
    job = _batches._Job(
        job_id, "bedrock", req.provider, [], dict(req.headers), int(now), "Submitted"
    )
    job.native = {
        "jobArn": arn,
        "jobName": body["jobName"],
        "modelId": body["modelId"],
        "roleArn": body["roleArn"],
        "status": "Submitted",
        "submitTime": _batches._iso(now),
        "lastModifiedTime": _batches._iso(now),
        "inputDataConfig": body["inputDataConfig"],
        "outputDataConfig": body["outputDataConfig"],
        "timeoutDurationInHours": body.get("timeoutDurationInHours", 24),
        "jobExpirationTime": _batches._iso(now + 86400),
        "modelInvocationType": body.get("modelInvocationType", "InvokeModel"),
    }
    with store.lock:
        store.jobs[job_id] = job
    return _batches._json(200, {"jobArn": arn})


def _job_problem(store: _batches.BatchStore, body: dict[str, Any]) -> str | None:
    """What the API refuses in a CreateModelInvocationJob body, as its ValidationException."""
    if not isinstance(body.get("jobName"), str) or not _JOB_NAME.fullmatch(body["jobName"]):
        return f"1 validation error detected: Value '{body.get('jobName')}' at 'jobName' failed to satisfy constraint: Member must satisfy regular expression pattern: {_JOB_NAME.pattern}"
    if not isinstance(body.get("roleArn"), str) or not _ROLE_ARN.fullmatch(body["roleArn"]):
        return f"1 validation error detected: Value '{body.get('roleArn')}' at 'roleArn' failed to satisfy constraint: Member must satisfy regular expression pattern: {_ROLE_ARN.pattern}"
    if not body.get("modelId"):
        return "1 validation error detected: Value null at 'modelId' failed to satisfy constraint: Member must not be null"
    kind = body.get("modelInvocationType", "InvokeModel")
    if kind not in _TYPES:
        return f"1 validation error detected: Value '{kind}' at 'modelInvocationType' failed to satisfy constraint: Member must satisfy enum value set: [{', '.join(_TYPES)}]"
    if kind != "Converse":
        return "MockLLMServer: only Converse-type batch jobs are emulated (modelInvocationType='Converse')"
    source = _location(body, "inputDataConfig", "s3InputDataConfig")
    target = _location(body, "outputDataConfig", "s3OutputDataConfig")
    if source is None or target is None:
        return "The provided S3 URI is invalid: inputDataConfig and outputDataConfig need an s3Uri s3://bucket/prefix"
    if not _input_keys(store, *source):
        return f"The provided S3 input location s3://{source[0]}/{source[1]} holds no file"
    return None


def _location(body: dict[str, Any], config: str, member: str) -> tuple[str, str] | None:
    uri = ((body.get(config) or {}).get(member) or {}).get("s3Uri")
    match = _S3_URI.fullmatch(uri) if isinstance(uri, str) else None
    return None if match is None else (match.group(1), (match.group(2) or "/").lstrip("/"))


def _input_keys(store: _batches.BatchStore, bucket: str, prefix: str) -> list[str]:
    """The JSONL files of an input location: the object itself, or the ``.jsonl`` files
    under the prefix."""
    with store.lock:
        keys = sorted(k for b, k in store.objects if b == bucket and k.startswith(prefix))
    return [k for k in keys if k == prefix or k.endswith(".jsonl")]


def _set(job: _batches._Job, status: str, **fields: Any) -> None:
    job.status = status
    job.native["status"] = status
    job.native["lastModifiedTime"] = _batches._iso(time.time())
    job.native.update(fields)


def _step(mock: MockLLMServer, job: _batches._Job, renderer: Any) -> None:
    """One status request: Submitted -> Validating -> InProgress -> Completed (the records
    answered); Stopping -> Stopped (none answered)."""
    if job.status == "Submitted":
        _set(job, "Validating")
    elif job.status == "Validating":
        _set(job, "InProgress", totalRecordCount=_count_records(mock._batches, job))
    elif job.status == "Stopping":
        _set(job, "Stopped", endTime=_batches._iso(time.time()))
    elif job.status == "InProgress":
        counts = _run(mock, job, renderer)
        _set(job, "Completed", endTime=_batches._iso(time.time()), **counts)


def _inputs(store: _batches.BatchStore, job: _batches._Job) -> list[tuple[str, bytes]]:
    bucket, prefix = _location(job.native, "inputDataConfig", "s3InputDataConfig") or ("", "")
    keys = _input_keys(store, bucket, prefix)
    with store.lock:
        return [(k, store.objects[(bucket, k)]) for k in keys]


def _count_records(store: _batches.BatchStore, job: _batches._Job) -> int:
    return sum(len(_records(content)) for _, content in _inputs(store, job))


def _records(content: bytes) -> list[str]:
    return [line for line in content.decode("utf-8", "replace").splitlines() if line.strip()]


def _run(mock: MockLLMServer, job: _batches._Job, renderer: Any) -> dict[str, int]:
    """Answers every record, writes the result files; returns the job's counts."""
    store: _batches.BatchStore = mock._batches
    bucket, prefix = _location(job.native, "outputDataConfig", "s3OutputDataConfig") or ("", "")
    folder = f"{prefix.rstrip('/')}/{job.id}/" if prefix.strip("/") else f"{job.id}/"
    path = f"/model/{quote(str(job.native['modelId']), safe='')}/converse"
    total = errors = 0
    for key, content in _inputs(store, job):
        lines = [_answer_record(mock, job, path, line, renderer) for line in _records(content)]
        total += len(lines)
        errors += sum(1 for line in lines if "error" in line)
        name = key.rsplit("/", 1)[-1]
        _put(store, bucket, f"{folder}{name}.out", _batches.jsonl_bytes(lines))
    counts = {
        "totalRecordCount": total,
        "processedRecordCount": total,
        "successRecordCount": total - errors,
        "errorRecordCount": errors,
    }
    manifest = {**counts, "inputTokenCount": 0, "outputTokenCount": 0}
    _put(store, bucket, f"{folder}manifest.json.out", json.dumps(manifest).encode())
    return counts


def _answer_record(
    mock: MockLLMServer, job: _batches._Job, path: str, line: str, renderer: Any
) -> dict[str, Any]:
    try:
        entry = json.loads(line)
    except ValueError:
        entry = None
    if not isinstance(entry, dict) or not isinstance(entry.get("modelInput"), dict):
        error = {
            "errorCode": 400,
            "errorMessage": "The record is not JSON with a modelInput object",
        }
        return {"recordId": _record_id(entry), "error": error}
    record = {"recordId": _record_id(entry), "modelInput": entry["modelInput"]}
    status, answer = _batches._answer_item(mock, job, path, entry["modelInput"], renderer)
    if status == 200:
        return {**record, "modelOutput": answer}
    message = answer.get("message") if isinstance(answer, dict) else None
    return {
        **record,
        "error": {"errorCode": status, "errorMessage": str(message or f"HTTP {status}")},
    }


def _record_id(entry: Any) -> str:
    """The record's id; "If you omit the recordId field, Amazon Bedrock adds it in the output"."""
    given = entry.get("recordId") if isinstance(entry, dict) else None
    return str(given) if given is not None else uuid.uuid4().hex[:11].upper()


# --- S3 -------------------------------------------------------------------------------------


def _s3(store: _batches.BatchStore, req: RecordedRequest) -> Reply:
    bucket, _, key = req.path[len("/s3/") :].partition("/")
    bucket, key = unquote(bucket), unquote(key)
    if req.method == "PUT" and key:
        content = _decoded(req)
        _put(store, bucket, key, content)
        return Reply(200, {"etag": _etag(content), "content-length": "0"}, body=b"")
    if req.method == "GET" and key:
        with store.lock:
            found = store.objects.get((bucket, key))
        if found is None:
            return _s3_error(404, "NoSuchKey", "The specified key does not exist.", key)
        headers = {"content-type": "application/octet-stream", "etag": _etag(found)}
        return Reply(200, {**headers, "last-modified": _http_date()}, body=found)
    if req.method == "GET" and req.query.get("list-type") == "2":
        return _list(store, bucket, req.query)
    return _s3_error(405, "MethodNotAllowed", "The specified method is not allowed.", key)


def _put(store: _batches.BatchStore, bucket: str, key: str, content: bytes) -> None:
    with store.lock:
        store.objects[(bucket, key)] = content


def _decoded(req: RecordedRequest) -> bytes:
    """The object's bytes: botocore sends ``aws-chunked`` bodies (chunks, then trailing
    checksums) when it computes a checksum while streaming
    (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html)."""
    if "aws-chunked" not in req.headers.get("content-encoding", ""):
        return req.raw_body
    data, out = req.raw_body, bytearray()
    while data:
        head, _, data = data.partition(b"\r\n")
        size = int(head.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2 :]
    return bytes(out)


def _list(store: _batches.BatchStore, bucket: str, query: dict[str, str]) -> Reply:
    prefix = query.get("prefix", "")
    with store.lock:
        found = sorted(
            (k, v) for (b, k), v in store.objects.items() if b == bucket and k.startswith(prefix)
        )
    encode = query.get("encoding-type") == "url"
    name = (lambda k: quote(k, safe="/")) if encode else escape
    contents = "".join(
        f"<Contents><Key>{name(k)}</Key><LastModified>{_batches._iso(time.time())}</LastModified>"
        f"<ETag>{escape(_etag(v))}</ETag><Size>{len(v)}</Size><StorageClass>STANDARD</StorageClass></Contents>"
        for k, v in found
    )
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>{escape(bucket)}</Name><Prefix>{name(prefix)}</Prefix><KeyCount>{len(found)}</KeyCount>"
        f"<MaxKeys>1000</MaxKeys>{'<EncodingType>url</EncodingType>' if encode else ''}"
        f"<IsTruncated>false</IsTruncated>{contents}</ListBucketResult>"
    )
    return Reply(200, dict(_XML), body=body.encode())


# S3's error codes by status (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
_S3_CODES = {400: "InvalidRequest", 403: "AccessDenied", 404: "NoSuchKey", 503: "SlowDown"}


def render_fault(req: RecordedRequest, err: ErrorReply) -> Reply | None:
    """A scripted error (``MockLLMServer.enqueue_batch_fault``) on an S3 path as S3 answers
    errors, in XML; None on the control plane, which answers the runtime's JSON errors."""
    if not req.path.startswith("/s3/"):
        return None
    code = err.error_type or _S3_CODES.get(err.status, "InternalError")
    return _s3_error(err.status, code, err.message, unquote(req.path[len("/s3/") :]))


def _s3_error(status: int, code: str, message: str, key: str) -> Reply:
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{escape(message)}</Message><Key>{escape(key)}</Key>"
        f"<RequestId>{uuid.uuid4().hex[:16].upper()}</RequestId></Error>"
    )
    return Reply(status, dict(_XML), body=body.encode())


def _etag(content: bytes) -> str:
    return f'"{hashlib.md5(content).hexdigest()}"'  # noqa: S324 - S3's ETag is an MD5


def _http_date() -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
