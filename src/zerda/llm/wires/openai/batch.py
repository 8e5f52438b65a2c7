"""The OpenAI Batch API (https://platform.openai.com/docs/guides/batch), for ``llm.batch``.

The requests go in a JSONL file uploaded with ``purpose="batch"``, one line per request:
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; the job is
``POST /v1/batches`` on that file. A finished job names an output file (the requests that
got an answer, each line ``{"custom_id", "response": {"status_code", "body"}}``) and an error
file (requests that failed: a non-200 ``response``, or ``error: {"code", "message"}``).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from zerda.llm.batch import (
    BatchStatus,
    ItemOutcome,
    State,
    http_status,
    not_ended,
    read_result_lines,
)
from zerda.llm.errors import InvalidRequestError, UnknownError, error_from_status, excerpt

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

ENDPOINT = "/v1/chat/completions"

# https://platform.openai.com/docs/api-reference/batch/object: status values.
_STATES: dict[str, State] = {
    "validating": "in_progress",
    "in_progress": "in_progress",
    "finalizing": "in_progress",
    "cancelling": "in_progress",
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


def map_batch_file(items: list[tuple[str, dict[str, Any]]]) -> bytes:
    """The JSONL input file."""
    return jsonl(
        {"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": native}
        for cid, native in items
    )


def jsonl(lines: Iterable[dict[str, Any]]) -> bytes:
    """JSON Lines (https://jsonlines.org): one JSON object per line, UTF-8, each line ended."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


def map_batch_status(batch: Any) -> BatchStatus:
    counts = getattr(batch, "request_counts", None)
    native = str(batch.status)
    return BatchStatus(
        id=batch.id,
        state=_STATES.get(native, "in_progress"),
        native_status=native,
        total=int(getattr(counts, "total", 0) or 0),
        succeeded=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
    )


def map_batch_output(text: str, provider: str) -> dict[str, ItemOutcome]:
    """custom_id -> the chat completion body, or the item's error, from output/error files
    (a broken line is its own id's error: :func:`zerda.llm.batch.read_result_lines`)."""
    return read_result_lines(text, "custom_id", provider, lambda e: _map_entry(e, provider))


def _map_entry(entry: dict[str, Any], provider: str) -> ItemOutcome:
    """One result line (OpenAI's and Mistral's shape): the answer when its response is a
    200 with a body, else the error its response or its ``error`` gives; a line that is
    neither (no status, a status that is not a number, a 200 without a body) raises."""
    error = entry.get("error")
    raw = entry.get("response")
    response: dict[str, Any] = raw if isinstance(raw, dict) else {}
    body = response.get("body")
    if response.get("status_code") is None and isinstance(error, dict) and error:
        message = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
        return ("error", UnknownError(message, provider=provider))
    status = http_status(response.get("status_code"))
    if status != 200:
        return ("error", error_from_status(status, _error_text(body, status), provider))
    if not isinstance(body, dict):
        raise ValueError(f"a 200 whose body is {excerpt(body)}, not a chat completion")
    return ("ok", body)


def _error_text(body: Any, status: Any) -> str:
    """The message of an error body: OpenAI nests it (``{"error": {"message"}}``), Mistral
    does not (``{"object": "error", "message"}``)."""
    detail = body.get("error") if isinstance(body, dict) else None
    text = detail.get("message") if isinstance(detail, dict) else None
    if text is None and isinstance(body, dict):
        text = body.get("message")
    return str(text or f"HTTP {status}")


def not_done(batch: Any) -> InvalidRequestError:
    return not_ended(batch.id, str(batch.status))


# --- the native calls (BatchProtocol), over an interface's SDK clients ---------------------


def job_args(file_id: str, options: dict[str, Any]) -> dict[str, Any]:
    return {"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h", **options}


def result_files(batch: Any) -> list[str]:
    """The output and error files of an ended job; a job not ended has no results yet."""
    if map_batch_status(batch).state == "in_progress":
        raise not_done(batch)
    return [f for f in (batch.output_file_id, batch.error_file_id) if f]


def file_text(content: Any) -> str:
    """A file's text: openai's content object has a ``text`` property, groq's response a
    ``text()`` method."""
    text = content.text
    return str(text() if callable(text) else text)


async def file_text_async(content: Any) -> str:
    text = content.text
    value = text() if callable(text) else text
    return str(await value if inspect.isawaitable(value) else value)


class OpenAIBatch:
    """The Batch API's calls (``files`` and ``batches``) for an OpenAI-compatible
    interface (openai, groq): its :class:`~zerda.llm.interface.batch.BatchProtocol`."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.llm = llm

    def submit(self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]) -> str:
        client = self.llm.client
        upload = ("batch.jsonl", map_batch_file(items), "application/jsonl")
        file = client.files.create(file=upload, purpose="batch")
        return str(client.batches.create(**job_args(file.id, options)).id)

    async def submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        client = self.llm.async_client
        upload = ("batch.jsonl", map_batch_file(items), "application/jsonl")
        file = await client.files.create(file=upload, purpose="batch")
        return str((await client.batches.create(**job_args(file.id, options))).id)

    def poll(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.batches.retrieve(batch_id))

    async def poll_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self.llm.async_client.batches.retrieve(batch_id))

    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        client = self.llm.client
        files = result_files(client.batches.retrieve(batch_id))
        texts = [file_text(client.files.content(f)) for f in files]
        return map_batch_output("\n".join(texts), self.llm.provider)

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        client = self.llm.async_client
        files = result_files(await client.batches.retrieve(batch_id))
        texts = [await file_text_async(await client.files.content(f)) for f in files]
        return map_batch_output("\n".join(texts), self.llm.provider)

    def cancel(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.batches.cancel(batch_id))

    async def cancel_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self.llm.async_client.batches.cancel(batch_id))
