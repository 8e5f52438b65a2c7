"""Anthropic Message Batches (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing),
for ``llm.batch``.

One ``POST /v1/messages/batches`` carries every request as ``{"custom_id", "params"}``
(``params``: the body of ``messages.create``). A job is ``in_progress`` until it has
``ended`` (``canceling`` while a cancel is under way); its results (JSONL, streamed by the
SDK's ``batches.results``) hold per request ``succeeded`` (a Message), ``errored`` (an error
body), ``canceled`` or ``expired``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from zerda.llm.batch import BatchStatus, ItemOutcome, not_ended, read_result_lines
from zerda.llm.errors import (
    InvalidRequestError,
    TimeoutError,
    UnknownError,
    ZerdaError,
    error_class_for_status,
    excerpt,
)
from zerda.llm.wires.anthropic.errors import ERROR_TYPE_STATUS

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

# https://docs.anthropic.com/en/api/creating-message-batches: custom_id.
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def check_ids(items: list[tuple[str, dict[str, Any]]]) -> None:
    for index, (cid, _) in enumerate(items):
        if not CUSTOM_ID.fullmatch(cid):
            raise InvalidRequestError(
                f"batch requests[{index}]: anthropic refuses the id {cid!r}: batch ids there "
                "are 1-64 characters: letters, digits, '_' and '-'"
            )


def map_batch_requests(items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"custom_id": cid, "params": native} for cid, native in items]


def map_batch_status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    native = str(batch.processing_status)
    failed = counts.errored + counts.canceled + counts.expired
    total = counts.processing + counts.succeeded + failed
    return BatchStatus(
        id=batch.id,
        state="ended" if native == "ended" else "in_progress",
        native_status=native,
        total=total,
        succeeded=counts.succeeded,
        failed=failed,
    )


def map_batch_output(text: str, provider: str) -> dict[str, ItemOutcome]:
    """custom_id -> the Message, or the item's error, from the results' JSONL (a broken
    line is its own id's error: :func:`zerda.llm.batch.read_result_lines`)."""
    return read_result_lines(text, "custom_id", provider, lambda e: map_batch_line(e, provider))


def map_batch_line(entry: dict[str, Any], provider: str) -> ItemOutcome:
    """One result line, ``{"custom_id", "result": {"type", ...}}``: ``succeeded`` with its
    ``message``, or ``errored`` / ``canceled`` / ``expired``; anything else raises."""
    result = entry.get("result")
    if not isinstance(result, dict):
        raise ValueError(f"its result is {excerpt(result)}")
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return ("ok", result["message"])
    if kind not in ("errored", "canceled", "expired"):
        raise ValueError(f"its result is {excerpt(result)}")
    return ("error", _item_error(result, str(kind), provider))


def _item_error(result: dict[str, Any], kind: str, provider: str) -> ZerdaError:
    if kind == "expired":
        return TimeoutError(
            "the batch expired before this request was processed", provider=provider
        )
    if kind == "canceled":
        return UnknownError(
            "the batch was canceled before this request was processed", provider=provider
        )
    # errored: {"error": {"type": "error", "error": {"type", "message"}}} (an error body).
    outer = result.get("error")
    inner = outer.get("error") if isinstance(outer, dict) else None
    inner = inner if isinstance(inner, dict) else {}
    error_type = str(inner.get("type") or "api_error")
    message = str(inner.get("message") or error_type)
    status = ERROR_TYPE_STATUS.get(error_type)
    return error_class_for_status(status)(message, status_code=status, provider=provider)


def not_done(batch: Any) -> InvalidRequestError:
    return not_ended(batch.id, str(batch.processing_status))


# --- the native calls (BatchProtocol), over an interface's SDK clients ---------------------


def check_ended(batch: Any) -> None:
    if batch.processing_status != "ended":
        raise not_done(batch)


class AnthropicBatch:
    """The Message Batches API's calls (``messages.batches``) for an Anthropic interface:
    its :class:`~zerda.llm.interface.batch.BatchProtocol`."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.llm = llm

    def submit(self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]) -> str:
        check_ids(items)
        requests = map_batch_requests(items)
        return str(self.llm.client.messages.batches.create(requests=requests, **options).id)

    async def submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        check_ids(items)
        requests = map_batch_requests(items)
        batches = self.llm.async_client.messages.batches
        return str((await batches.create(requests=requests, **options)).id)

    def poll(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.messages.batches.retrieve(batch_id))

    async def poll_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self.llm.async_client.messages.batches.retrieve(batch_id))

    # The results are read as the JSONL text ``batches.results`` streams, not through its
    # decoder, which stops at the first line that is not JSON and loses the lines after it.
    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        batches = self.llm.client.messages.batches
        check_ended(batches.retrieve(batch_id))
        with batches.with_streaming_response.results(batch_id) as response:
            text = response.read().decode("utf-8", "replace")
        return map_batch_output(text, self.llm.provider)

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        batches = self.llm.async_client.messages.batches
        check_ended(await batches.retrieve(batch_id))
        async with batches.with_streaming_response.results(batch_id) as response:
            text = (await response.read()).decode("utf-8", "replace")
        return map_batch_output(text, self.llm.provider)

    def cancel(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.messages.batches.cancel(batch_id))

    async def cancel_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self.llm.async_client.messages.batches.cancel(batch_id))
