"""Provider batch jobs (docs/scale.md, "Batch APIs").

``llm.batch(requests)`` sends a list of generate requests as ONE job of the provider's batch
API (about half the price, higher limits, answered within the provider's window, usually
minutes to hours). Each request is a dict of the unified generate arguments plus its caller
id: ``{"id": "q1", "messages": [...], "tools": [...], "max_tokens": 100}``. Every request is
checked and converted before anything is sent, with the error naming its index and id.

The job handle (:class:`BatchJob`, or :class:`AsyncBatchJob` from ``batch_async``) gives
``status()``, ``wait()`` (polls, calling ``on_progress`` with each status) and
``results()``: a dict keyed by caller id, each value the result shape of ``generate`` — or
its error shape for a request that failed on its own. A request the provider returned
nothing for gets an error result too: nothing is silently lost.

A wire's batch protocol (``llm._batch_protocol()``: submit, poll, fetch, cancel and their
async twins; :class:`zerda.llm.interface.batch.BatchProtocol`) does the native calls;
mapping is shared here and in the wires' ``batch`` modules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zerda.llm._drive import NO_KWARGS, Body, drive, drive_async
from zerda.llm.errors import InvalidRequestError, UnknownError, ZerdaError, error_result

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

__all__ = ["AsyncBatchJob", "BatchJob", "BatchStatus"]

State = Literal["in_progress", "ended", "failed", "cancelled", "expired"]
Progress = Callable[["BatchStatus"], Any]

# What one item of a finished job is, as a wire's batch protocol hands it over: the native response
# (mapped by the interface's _map_response) or the item's own error.
ItemOutcome = tuple[Literal["ok"], Any] | tuple[Literal["error"], ZerdaError]


@dataclass(frozen=True)
class BatchStatus:
    """Where a job is: ``state`` (``in_progress`` until it is ``ended``, ``failed``,
    ``cancelled`` or ``expired``), the provider's own status word, and request counts."""

    id: str
    state: State
    native_status: str
    total: int
    succeeded: int
    failed: int

    @property
    def done(self) -> bool:
        return self.state != "in_progress"


def prepare_items(
    llm: BaseLLMInterface, requests: Sequence[dict[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """(caller id, native request) per request, every one checked before anything is sent."""
    if isinstance(requests, (str, bytes, dict)) or not isinstance(requests, Sequence):
        raise InvalidRequestError("batch: requests must be a list of dicts")
    if not requests:
        raise InvalidRequestError("batch: requests is empty")
    items: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for index, request in enumerate(requests):
        caller_id, args = _split(index, request, seen)
        try:
            native = llm._native_request(args.pop("messages"), args)
        except ZerdaError as exc:
            raise InvalidRequestError(
                f"batch requests[{index}] (id {caller_id!r}): {exc.message}", provider=llm.provider
            ) from None
        items.append((caller_id, native))
    return items


def _split(index: int, request: Any, seen: set[str]) -> tuple[str, dict[str, Any]]:
    if not isinstance(request, dict):
        raise InvalidRequestError(f"batch requests[{index}] must be a dict")
    args = dict(request)
    caller_id = args.pop("id", None)
    if not isinstance(caller_id, str) or not caller_id:
        raise InvalidRequestError(f"batch requests[{index}] needs an 'id': a non-empty string")
    if caller_id in seen:
        raise InvalidRequestError(f"batch requests[{index}]: duplicate id {caller_id!r}")
    seen.add(caller_id)
    if "messages" not in args:
        raise InvalidRequestError(f"batch requests[{index}] (id {caller_id!r}) needs 'messages'")
    for name in ("stream", "raise_errors"):
        if name in args:
            raise InvalidRequestError(
                f"batch requests[{index}] (id {caller_id!r}): {name!r} has no meaning in a batch"
            )
    return caller_id, args


def not_ended(batch_id: str, native_status: str) -> InvalidRequestError:
    """The refusal of ``results()`` on a job that has not ended (one wording everywhere)."""
    return InvalidRequestError(
        f"batch {batch_id} is {native_status}: results exist once it has ended (job.wait())"
    )


def map_results(
    llm: BaseLLMInterface, ids: Sequence[str], outcomes: dict[str, ItemOutcome]
) -> dict[str, dict[str, Any]]:
    """Results keyed by caller id, in the order of the requests."""
    results: dict[str, dict[str, Any]] = {}
    for caller_id in ids:
        outcome = outcomes.get(caller_id)
        if outcome is None:
            err: ZerdaError = UnknownError(
                f"the {llm.provider} batch returned no result for request {caller_id!r}",
                provider=llm.provider,
            )
            results[caller_id] = error_result(err)
        elif outcome[0] == "error":
            results[caller_id] = error_result(llm._to_error(outcome[1]))
        else:
            try:
                results[caller_id] = llm._map_response(outcome[1])
            except Exception as exc:  # a broken item is its own error, not the job's
                results[caller_id] = error_result(llm._to_error(exc))
    return results


class _Job:
    """What both job handles hold: the interface, the job's id, the caller ids in order."""

    def __init__(self, llm: BaseLLMInterface, batch_id: str, ids: Sequence[str]) -> None:
        self.llm = llm
        self.id = batch_id
        self.ids = list(ids)

    def __repr__(self) -> str:
        name, provider = type(self).__name__, self.llm.provider
        return f"{name}(provider={provider!r}, id={self.id!r}, requests={len(self.ids)})"

    def _waiting(
        self, sleeper: Any, poll_interval: float, timeout: float | None, on_progress: Any
    ) -> Body[dict[str, dict[str, Any]]]:
        """``wait``'s course, written once: polls (``on_progress(status)`` after each poll)
        until the job is done, then its results; ``timeout``: seconds of polling before
        TimeoutError (the job goes on at the provider)."""
        protocol = self.llm._batch_protocol()
        waited = 0.0
        while True:
            status = yield protocol, "poll", (self.id,), NO_KWARGS
            if on_progress is not None:
                on_progress(status)
            if status.done:
                outcomes = yield protocol, "fetch", (self.id,), NO_KWARGS
                return map_results(self.llm, self.ids, outcomes)
            if timeout is not None and waited >= timeout:
                raise TimeoutError(
                    f"batch {self.id} still {status.native_status} after {waited:.0f} s"
                )
            yield sleeper, "sleep", (poll_interval,), NO_KWARGS
            waited += poll_interval


class _Sleeper:
    """The wait between polls: the given ``sleep`` in ``wait``, asyncio's when awaited."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep) -> None:
        self.sleep = sleep

    @staticmethod
    async def sleep_async(seconds: float) -> None:
        import asyncio  # loaded: this runs on an event loop

        await asyncio.sleep(seconds)


class BatchJob(_Job):
    """A submitted batch job (see the module docstring)."""

    def status(self) -> BatchStatus:
        return self.llm._batch_protocol().poll(self.id)

    def wait(
        self,
        *,
        poll_interval: float = 30.0,
        timeout: float | None = None,
        on_progress: Progress | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> dict[str, dict[str, Any]]:
        """Polls until the job is done (``on_progress(status)`` after each poll), then
        returns :meth:`results`. ``timeout``: seconds of polling before TimeoutError
        (the job goes on at the provider)."""
        return drive(self._waiting(_Sleeper(sleep), poll_interval, timeout, on_progress))

    def results(self) -> dict[str, dict[str, Any]]:
        """Results keyed by caller id; a job not done yet raises InvalidRequestError."""
        return map_results(self.llm, self.ids, self.llm._batch_protocol().fetch(self.id))

    def cancel(self) -> BatchStatus:
        return self.llm._batch_protocol().cancel(self.id)


class AsyncBatchJob(_Job):
    """:class:`BatchJob` with awaited calls (from ``batch_async``)."""

    async def status(self) -> BatchStatus:
        return await self.llm._batch_protocol().poll_async(self.id)

    async def wait(
        self,
        *,
        poll_interval: float = 30.0,
        timeout: float | None = None,
        on_progress: Progress | None = None,
    ) -> dict[str, dict[str, Any]]:
        body = self._waiting(_Sleeper(), poll_interval, timeout, on_progress)
        return await drive_async(body)

    async def results(self) -> dict[str, dict[str, Any]]:
        outcomes = await self.llm._batch_protocol().fetch_async(self.id)
        return map_results(self.llm, self.ids, outcomes)

    async def cancel(self) -> BatchStatus:
        return await self.llm._batch_protocol().cancel_async(self.id)
