"""Anthropic Message Batches (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing),
for ``llm.batch``.

One ``POST /v1/messages/batches`` carries every request as ``{"custom_id", "params"}``
(``params``: the body of ``messages.create``). A job is ``in_progress`` until it has
``ended`` (``canceling`` while a cancel is under way); its results (JSONL, read by the SDK's
``batches.results``) hold per request ``succeeded`` (a Message), ``errored`` (an error body),
``canceled`` or ``expired``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from zerda.llm.batch import BatchStatus, ItemOutcome, not_ended
from zerda.llm.errors import (
    InvalidRequestError,
    TimeoutError,
    UnknownError,
    ZerdaError,
    error_class_for_status,
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


def map_batch_entry(entry: Any, provider: str) -> tuple[str, ItemOutcome]:
    result = entry.result
    kind = result.type
    if kind == "succeeded":
        return entry.custom_id, ("ok", result.message)
    return entry.custom_id, ("error", _item_error(result, kind, provider))


def _item_error(result: Any, kind: str, provider: str) -> ZerdaError:
    if kind == "expired":
        return TimeoutError(
            "the batch expired before this request was processed", provider=provider
        )
    if kind == "canceled":
        return UnknownError(
            "the batch was canceled before this request was processed", provider=provider
        )
    inner = getattr(getattr(result, "error", None), "error", None)
    error_type = str(getattr(inner, "type", "api_error"))
    message = str(getattr(inner, "message", "") or error_type)
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

    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        batches = self.llm.client.messages.batches
        check_ended(batches.retrieve(batch_id))
        entries = batches.results(batch_id)
        return dict(map_batch_entry(e, self.llm.provider) for e in entries)

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        batches = self.llm.async_client.messages.batches
        check_ended(await batches.retrieve(batch_id))
        entries = await batches.results(batch_id)
        return dict([map_batch_entry(e, self.llm.provider) async for e in entries])

    def cancel(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self.llm.client.messages.batches.cancel(batch_id))

    async def cancel_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self.llm.async_client.messages.batches.cancel(batch_id))
