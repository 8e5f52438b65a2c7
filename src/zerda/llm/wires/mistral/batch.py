"""Mistral batch inference (https://docs.mistral.ai/capabilities/batch), for ``llm.batch``.

The requests go in a JSONL file uploaded with ``files.upload(purpose="batch")``, one line per
request: ``{"custom_id", "body"}``, ``body`` the request ``chat.complete`` would send, less
``model`` ("The model field inside body is optional when you specify the model at job
creation time"). The job is ``batch.jobs.create(input_files=[...], endpoint=
"/v1/chat/completions", model=...)`` (https://docs.mistral.ai/api/endpoint/batch). A job is
``QUEUED``, ``RUNNING``, then ``SUCCESS``, ``FAILED``, ``TIMEOUT_EXCEEDED`` or ``CANCELLED``
(``CANCELLATION_REQUESTED`` on the way); when it has ended it names an ``output_file`` and an
``error_file``, whose lines have OpenAI's shape (``{"custom_id", "response": {"status_code",
"body"}, "error"}``) and are read by ``_batch_openai.map_batch_output`` (bytes that are not
UTF-8 replaced, a broken line its own id's error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zerda.llm.batch import BatchStatus, ItemOutcome, State, not_ended
from zerda.llm.errors import InvalidRequestError
from zerda.llm.wires.openai.batch import ENDPOINT, jsonl, map_batch_output

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

# The Speakeasy SDK's per-call options (not body fields) that ``_native_request`` may hold.
_CALL_OPTIONS = frozenset({"timeout_ms", "http_headers", "retries", "server_url"})

# https://docs.mistral.ai/api/endpoint/batch: BatchJobStatus.
_STATES: dict[str, State] = {
    "QUEUED": "in_progress",
    "RUNNING": "in_progress",
    "CANCELLATION_REQUESTED": "in_progress",
    "SUCCESS": "ended",
    "FAILED": "failed",
    "TIMEOUT_EXCEEDED": "expired",
    "CANCELLED": "cancelled",
}


def map_batch_file(items: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The JSONL input file, as ``files.upload``'s ``file`` argument."""
    content = jsonl({"custom_id": cid, "body": _map_body(native)} for cid, native in items)
    return {"file_name": "batch.jsonl", "content": content, "content_type": "application/jsonl"}


def _map_body(native: dict[str, Any]) -> dict[str, Any]:
    """The request body of one line: the job names the model; call options stay out."""
    return {k: v for k, v in native.items() if k != "model" and k not in _CALL_OPTIONS}


def map_batch_job(file_id: str, model: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """``batch.jobs.create``'s arguments (``options``: ``metadata``, ``timeout_hours``...)."""
    return {"input_files": [file_id], "endpoint": ENDPOINT, "model": model, **options}


def map_batch_status(job: Any) -> BatchStatus:
    native = str(job.status)
    return BatchStatus(
        id=job.id,
        state=_STATES.get(native, "in_progress"),
        native_status=native,
        total=int(job.total_requests or 0),
        succeeded=int(job.succeeded_requests or 0),
        failed=int(job.failed_requests or 0),
    )


def result_files(job: Any) -> list[str]:
    """The output and error files of an ended job; a job not ended has no results yet."""
    if map_batch_status(job).state == "in_progress":
        raise not_done(job)
    return [f for f in (job.output_file, job.error_file) if isinstance(f, str) and f]


def not_done(job: Any) -> InvalidRequestError:
    return not_ended(job.id, str(job.status))


# --- the native calls (BatchProtocol), over an interface's SDK clients ---------------------


class MistralBatch:
    """The batch jobs API's calls (``files``, ``batch.jobs``) for a Mistral interface: its
    :class:`~zerda.llm.interface.batch.BatchProtocol`. Result files are the OpenAI batch
    format, read by ``_batch_openai.map_batch_output``."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.llm = llm

    def submit(self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]) -> str:
        client = self.llm.client
        file = client.files.upload(file=map_batch_file(items), purpose="batch")
        job_args = map_batch_job(file.id, self.llm.model, options)
        return str(client.batch.jobs.create(**job_args).id)

    async def submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        client = self.llm.async_client
        file = await client.files.upload_async(file=map_batch_file(items), purpose="batch")
        job_args = map_batch_job(file.id, self.llm.model, options)
        return str((await client.batch.jobs.create_async(**job_args)).id)

    def poll(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.batch.jobs.get(job_id=batch_id))

    async def poll_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self.llm.async_client.batch.jobs.get_async(job_id=batch_id))

    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        client = self.llm.client
        texts = []
        for file_id in result_files(client.batch.jobs.get(job_id=batch_id)):
            response = client.files.download(file_id=file_id)  # a streamed httpx.Response
            try:
                texts.append(response.read().decode("utf-8", "replace"))
            finally:
                response.close()
        return map_batch_output("\n".join(texts), self.llm.provider)

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        client = self.llm.async_client
        texts = []
        for file_id in result_files(await client.batch.jobs.get_async(job_id=batch_id)):
            response = await client.files.download_async(file_id=file_id)
            try:
                texts.append((await response.aread()).decode("utf-8", "replace"))
            finally:
                await response.aclose()
        return map_batch_output("\n".join(texts), self.llm.provider)

    def cancel(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.batch.jobs.cancel(job_id=batch_id))

    async def cancel_async(self, batch_id: str) -> BatchStatus:
        job = await self.llm.async_client.batch.jobs.cancel_async(job_id=batch_id)
        return map_batch_status(job)
