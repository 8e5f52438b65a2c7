"""Bedrock batch inference (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference.html),
for ``llm.batch``.

The requests go in a JSONL file that Zerda writes to S3 (``PutObject``), one line per request:
``{"recordId", "modelInput"}``. The job is a model invocation job of the ``Converse`` type
(``create_model_invocation_job(modelInvocationType="Converse", ...)``), so ``modelInput`` is
the request body of the Converse API, the one ``converse`` sends, less ``modelId``: "If you
use the Converse type, the format must match the request body of the Converse API"
(https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html). Blobs
(image, document bytes) are base64 text there, as in Converse's JSON.

A job is ``Submitted``, ``Validating``, ``Scheduled``, ``InProgress`` or ``Stopping`` until it
is ``Completed``, ``PartiallyCompleted``, ``Failed``, ``Stopped`` or ``Expired``
(API_ModelInvocationJobSummary). Its results are ``{output s3Uri}/{job id}/{input file}.out``
(https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html), per line
``{"recordId", "modelInput", "modelOutput"}`` (a Converse response) or ``"error":
{"errorCode", "errorMessage"}`` in place of ``modelOutput``; their order is not the input's.
"""

from __future__ import annotations

import base64
import functools
import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from zerda.llm.batch import BatchStatus, ItemOutcome, State, not_ended, read_result_lines
from zerda.llm.errors import InvalidRequestError, error_from_status
from zerda.llm.wires.openai.batch import jsonl

if TYPE_CHECKING:
    from zerda.llm.wires.bedrock.interface import AWSInterface

T = TypeVar("T")

INVOCATION_TYPE = "Converse"
# Options of llm.batch that are Zerda's, not create_model_invocation_job's.
_OWN_OPTIONS = ("role_arn", "input_s3_uri", "output_s3_uri", "job_name")
_S3_URI = re.compile(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(/.*)?")
# https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html
_JOB_NAME = re.compile(r"[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63}")

# The blob members of a Converse response (API_runtime_ContentBlock, ReasoningContentBlock).
_BLOBS = frozenset({"redactedContent", "bytes"})

_STATES: dict[str, State] = {
    "Completed": "ended",
    "PartiallyCompleted": "ended",
    "Failed": "failed",
    "Stopped": "cancelled",
    "Expired": "expired",
}


def map_batch_file(items: list[tuple[str, dict[str, Any]]]) -> bytes:
    """The JSONL input file."""
    return jsonl({"recordId": cid, "modelInput": _map_input(native)} for cid, native in items)


def _map_input(native: dict[str, Any]) -> dict[str, Any]:
    """The Converse request body: the job names the model; the timeout is the call's own."""
    body = {k: v for k, v in native.items() if k not in ("modelId", "timeout")}
    return _jsonable(body)


def _jsonable(value: Any) -> Any:
    """``value`` with its bytes as base64 text (boto3 takes bytes; JSON bodies carry base64)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Zerda's options, the rest for create_model_invocation_job), the first checked."""
    own = {k: options[k] for k in _OWN_OPTIONS if k in options}
    rest = {k: v for k, v in options.items() if k not in _OWN_OPTIONS}
    for name in ("role_arn", "input_s3_uri", "output_s3_uri"):
        if not isinstance(own.get(name), str) or not own[name]:
            raise InvalidRequestError(
                f"batch: bedrock needs {name}= (batch inference reads its input from S3 and "
                "writes its output there, under an IAM service role: role_arn, "
                "input_s3_uri and output_s3_uri); nothing was sent"
            )
    for name in ("input_s3_uri", "output_s3_uri"):
        s3_location(name, own[name])
    own.setdefault("job_name", f"zerda-batch-{uuid.uuid4().hex[:16]}")
    if not isinstance(own["job_name"], str) or not _JOB_NAME.fullmatch(own["job_name"]):
        raise InvalidRequestError(
            f"batch: bedrock refuses the job_name {own['job_name']!r}: 1-63 letters, digits, "
            "'-', '+' and '.', starting with a letter or digit; nothing was sent"
        )
    return own, rest


def s3_location(name: str, uri: str) -> tuple[str, str]:
    """(bucket, key prefix) of an ``s3://bucket/prefix/`` option."""
    match = _S3_URI.fullmatch(uri)
    if match is None:
        raise InvalidRequestError(
            f"batch: {name}={uri!r} is not an S3 location: s3://bucket/prefix/"
        )
    return match.group(1), (match.group(2) or "/").lstrip("/")


def input_key(prefix: str, job_name: str) -> str:
    """The input file's key: the job's name, in the ``input_s3_uri`` folder."""
    folder = prefix if not prefix or prefix.endswith("/") else prefix + "/"
    return f"{folder}{job_name}.jsonl"


def map_batch_job(
    model: str | None, own: dict[str, Any], input_uri: str, rest: dict[str, Any]
) -> dict[str, Any]:
    """``create_model_invocation_job``'s arguments (``rest``: ``timeoutDurationInHours``,
    ``tags``, ``vpcConfig``...)."""
    return {
        "jobName": own["job_name"],
        "roleArn": own["role_arn"],
        "modelId": model,
        "modelInvocationType": INVOCATION_TYPE,
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": input_uri, "s3InputFormat": "JSONL"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": own["output_s3_uri"]}},
        **rest,
    }


def map_batch_status(job: dict[str, Any]) -> BatchStatus:
    native = str(job.get("status"))
    return BatchStatus(
        id=str(job["jobArn"]),
        state=_STATES.get(native, "in_progress"),
        native_status=native,
        total=int(job.get("totalRecordCount") or 0),
        succeeded=int(job.get("successRecordCount") or 0),
        failed=int(job.get("errorRecordCount") or 0),
    )


def output_prefix(job: dict[str, Any]) -> tuple[str, str]:
    """(bucket, key prefix) of an ended job's result files: its job id's folder in the
    output location; a job not ended has no results yet."""
    if map_batch_status(job).state == "in_progress":
        raise not_done(job)
    uri = job["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"]
    bucket, prefix = s3_location("output_s3_uri", uri)
    job_id = str(job["jobArn"]).rsplit("/", 1)[-1]
    folder = prefix if not prefix or prefix.endswith("/") else prefix + "/"
    return bucket, f"{folder}{job_id}/"


def is_result_file(key: str) -> bool:
    """An output file (``<input>.jsonl.out``), not ``manifest.json.out``."""
    return key.endswith(".jsonl.out")


def map_batch_output(text: str, provider: str) -> dict[str, ItemOutcome]:
    """recordId -> the Converse response, or the record's error (a broken line is its own
    record's error: :func:`zerda.llm.batch.read_result_lines`)."""
    return read_result_lines(text, "recordId", provider, lambda e: _map_entry(e, provider))


def _map_entry(entry: dict[str, Any], provider: str) -> ItemOutcome:
    output = entry.get("modelOutput")
    error = entry.get("error")
    if isinstance(output, dict) and not error:
        return ("ok", _blobs_as_bytes(output))
    error = error if isinstance(error, dict) else {}
    code = error.get("errorCode")
    status = code if isinstance(code, int) and not isinstance(code, bool) else None
    message = str(error.get("errorMessage") or "the batch returned no output for this record")
    return ("error", error_from_status(status, message, provider))


def _blobs_as_bytes(value: Any) -> Any:
    """A Converse response from JSON in the shape boto3 gives (and ``_map_response`` reads):
    its blobs (``redactedContent``, a content block's ``bytes``) as bytes, not base64 text
    (binascii.Error, a ValueError, for text that is not base64: the record is malformed)."""
    if isinstance(value, list):
        return [_blobs_as_bytes(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        k: base64.b64decode(v, validate=True)
        if k in _BLOBS and isinstance(v, str)
        else _blobs_as_bytes(v)
        for k, v in value.items()
    }


def not_done(job: dict[str, Any]) -> InvalidRequestError:
    return not_ended(str(job["jobArn"]), str(job.get("status")))


# --- the native calls (BatchProtocol), over an interface's service clients -----------------


class BedrockBatch:
    """Model invocation jobs' calls (``bedrock`` control plane, ``s3``) for a Bedrock
    interface: its :class:`~zerda.llm.interface.batch.BatchProtocol`. boto3 has no async
    client: the async calls run the sync ones in the interface's thread pool."""

    def __init__(self, llm: AWSInterface) -> None:
        self.llm = llm

    def submit(self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]) -> str:
        own, rest = split_options(options)
        bucket, prefix = s3_location("input_s3_uri", own["input_s3_uri"])
        key = input_key(prefix, own["job_name"])
        body = map_batch_file(items)
        self.llm._service_client("s3").put_object(
            Bucket=bucket, Key=key, Body=body, ContentType="application/jsonl"
        )
        args = map_batch_job(self.llm.model, own, f"s3://{bucket}/{key}", rest)
        job = self.llm._service_client("bedrock").create_model_invocation_job(**args)
        return str(job["jobArn"])

    def _job(self, batch_id: str) -> dict[str, Any]:
        bedrock = self.llm._service_client("bedrock")
        return dict(bedrock.get_model_invocation_job(jobIdentifier=batch_id))

    def poll(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self._job(batch_id))

    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        bucket, prefix = output_prefix(self._job(batch_id))
        s3 = self.llm._service_client("s3")
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        texts = [
            s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8", "replace")
            for key in keys
            if is_result_file(key)
        ]
        return map_batch_output("\n".join(texts), self.llm.provider)

    def cancel(self, batch_id: str) -> BatchStatus:
        self.llm._service_client("bedrock").stop_model_invocation_job(jobIdentifier=batch_id)
        return self.poll(batch_id)

    async def _in_pool(self, call: Callable[..., T], *args: Any) -> T:
        import asyncio  # loaded by now: this runs on an event loop

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.llm._pool, functools.partial(call, *args))

    async def submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        return await self._in_pool(self.submit, items, options)

    async def poll_async(self, batch_id: str) -> BatchStatus:
        return await self._in_pool(self.poll, batch_id)

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        return await self._in_pool(self.fetch, batch_id)

    async def cancel_async(self, batch_id: str) -> BatchStatus:
        return await self._in_pool(self.cancel, batch_id)
