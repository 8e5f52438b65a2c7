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
nothing for gets an error result too, and so does one whose result line the provider broke
(:func:`read_result_lines`): nothing is silently lost, and one line never loses the job.

Each call (and ``batch()``'s submission) is retried as generate's are, then raises its
ZerdaError scrubbed of secrets (``_batch_call``, :mod:`zerda.llm.interface.batch`).
``wait(timeout=)`` is wall-clock time, the call in flight included (:class:`_Waiter`).

A wire's batch protocol (``llm._batch_protocol()``: submit, poll, fetch, cancel and their
async twins; :class:`zerda.llm.interface.batch.BatchProtocol`) does the native calls;
mapping is shared here and in the wires' ``batch`` modules.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zerda.llm._cost import cost_of
from zerda.llm._drive import NO_KWARGS, Body, drive, drive_async
from zerda.llm.errors import (
    InvalidRequestError,
    UnknownError,
    ZerdaError,
    error_result,
    excerpt,
    malformed_response,
)

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


def read_result_lines(
    text: str, key: str, provider: str, read: Callable[[dict[str, Any]], ItemOutcome]
) -> dict[str, ItemOutcome]:
    """caller id -> outcome, from a JSONL results file whose lines carry the id in ``key``,
    each line mapped by ``read``. A line the provider broke (not JSON, a field missing or
    of another type, a blob that is not base64) is its own id's error, never the job's;
    one whose id cannot be read at all leaves that id to :func:`map_results`' "no result"."""
    outcomes: dict[str, ItemOutcome] = {}
    for line in text.splitlines():
        found = _read_line(line, key, provider, read) if line.strip() else None
        if found is not None:
            outcomes[found[0]] = found[1]
    return outcomes


def _read_line(
    line: str, key: str, provider: str, read: Callable[[dict[str, Any]], ItemOutcome]
) -> tuple[str, ItemOutcome] | None:
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        cid = _id_in_text(line, key)
        problem = f"its batch result line is not JSON: {excerpt(line)}"
        return None if cid is None else (cid, ("error", malformed_response(provider, problem)))
    cid = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(cid, (str, int)) or isinstance(cid, bool):
        return None
    try:
        return str(cid), read(entry)
    except Exception as exc:  # noqa: BLE001 - whatever broke the line, it is this id's error
        problem = f"the batch result line of {str(cid)!r} is not the documented shape ({exc})"
        return str(cid), ("error", malformed_response(provider, problem))


def _id_in_text(line: str, key: str) -> str | None:
    """The id a line that is not JSON still names (``"key": "..."``), if it does."""
    match = re.search(rf'"{re.escape(key)}"\s*:\s*("(?:[^"\\]|\\.)*")', line)
    if match is None:
        return None
    try:
        found = json.loads(match.group(1))
    except ValueError:
        return None
    return found if isinstance(found, str) else None


def http_status(value: Any) -> int:
    """``value`` as the HTTP status a result line gives; ValueError when it is none (a
    string, a bool, a float, a number out of range): the line is malformed."""
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    raise ValueError(f"its status is {excerpt(value)}, not an HTTP status code")


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
                results[caller_id] = _batch_priced(llm, llm._map_response(outcome[1]))
            except Exception as exc:  # a broken item is its own error, not the job's
                results[caller_id] = error_result(llm._to_error(exc))
    return results


def _batch_priced(llm: BaseLLMInterface, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with its cost at the batch price where the data has one (DESIGN §21)."""
    price = cost_of(llm.spec.price_provider, str(llm.model), result["usage"], batch=True)
    return {**result, "cost": price}


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
        self, waiter: _Waiter, poll_interval: float, timeout: float | None, on_progress: Any
    ) -> Body[dict[str, dict[str, Any]]]:
        """``wait``'s course, written once: polls (``on_progress(status)`` after each poll)
        until the job is done, then its results. ``timeout``: seconds of wall-clock time
        (time.monotonic) for all of it, the calls in flight included, before TimeoutError
        (the job goes on at the provider), whatever ``poll_interval`` is (0 included)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen: list[BatchStatus] = []
        try:
            return (yield from self._polling(waiter, poll_interval, deadline, on_progress, seen))
        except _Overdue:
            raise _overdue(self.id, timeout or 0.0, seen[-1] if seen else None) from None

    def _polling(
        self,
        waiter: _Waiter,
        poll_interval: float,
        deadline: float | None,
        on_progress: Any,
        seen: list[BatchStatus],
    ) -> Body[dict[str, dict[str, Any]]]:
        while True:
            status = yield waiter, "call", ("poll", self.id, _left(deadline)), NO_KWARGS
            seen.append(status)
            if on_progress is not None:
                on_progress(status)
            if status.done:
                outcomes = yield waiter, "call", ("fetch", self.id, _left(deadline)), NO_KWARGS
                return map_results(self.llm, self.ids, outcomes)
            left = _left(deadline)
            if left is not None and left <= 0:
                raise _Overdue
            pause = poll_interval if left is None else min(poll_interval, left)
            yield waiter, "sleep", (pause,), NO_KWARGS


def _overdue(batch_id: str, timeout: float, last: BatchStatus | None) -> TimeoutError:
    """``wait``'s TimeoutError, saying where the job was."""
    if last is not None and last.done:
        return TimeoutError(
            f"batch {batch_id} has {last.state} ({last.native_status}), but its results did "
            f"not arrive within the {timeout:g} s of waiting: job.results() fetches them"
        )
    native = "not polled yet" if last is None else last.native_status
    return TimeoutError(
        f"batch {batch_id} not done after {timeout:g} s of waiting (last status: {native}); "
        "the job goes on at the provider: wait again, or call job.results() once it has ended"
    )


def _left(deadline: float | None) -> float | None:
    """Seconds until ``deadline`` (a time.monotonic() value), None without one."""
    return None if deadline is None else deadline - time.monotonic()


class _Overdue(Exception):
    """``wait``'s deadline has passed (raised as TimeoutError by the job handle)."""


class _Waiter:
    """The calls of ``wait`` that differ between the twins: a protocol call through the
    interface (retried, its failure a ZerdaError), bounded by the time ``wait`` has left,
    and the pause between polls (the given ``sleep`` in ``wait``, asyncio's when awaited)."""

    def __init__(self, llm: BaseLLMInterface, sleep: Callable[[float], None] = time.sleep) -> None:
        self.llm = llm
        self.sleep = sleep

    def call(self, name: str, batch_id: str, left: float | None) -> Any:
        if left is None:
            return self.llm._batch_call(name, batch_id)
        if left <= 0:
            raise _Overdue
        return _bounded(lambda: self.llm._batch_call(name, batch_id, budget=left), left)

    async def call_async(self, name: str, batch_id: str, left: float | None) -> Any:
        if left is None:
            return await self.llm._batch_call_async(name, batch_id)
        if left <= 0:
            raise _Overdue
        import asyncio  # loaded: this runs on an event loop

        call = self.llm._batch_call_async(name, batch_id, budget=left)
        try:
            return await asyncio.wait_for(call, left)
        except asyncio.TimeoutError:  # the call's own failures are ZerdaErrors by now
            raise _Overdue from None

    @staticmethod
    async def sleep_async(seconds: float) -> None:
        import asyncio

        await asyncio.sleep(seconds)


def _bounded(call: Callable[[], Any], seconds: float) -> Any:
    """``call()``, given at most ``seconds``: it runs in a daemon thread, so that a status
    request that hangs cannot hold ``wait`` past its timeout (a sync HTTP call cannot be
    interrupted). Past them, the thread is left to end on its own and its answer dropped."""
    import contextvars
    import threading

    context = contextvars.copy_context()  # the caller's span and retry budget
    done = threading.Event()
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, context.run(call)))
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name="zerda-batch-wait", daemon=True).start()
    if not done.wait(seconds):
        raise _Overdue
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


class BatchJob(_Job):
    """A submitted batch job (see the module docstring). Each call is retried per the
    interface's ``max_retries``; a failure raises its ZerdaError, scrubbed of secrets."""

    def status(self) -> BatchStatus:
        status: BatchStatus = self.llm._batch_call("poll", self.id)
        return status

    def wait(
        self,
        *,
        poll_interval: float = 30.0,
        timeout: float | None = None,
        on_progress: Progress | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> dict[str, dict[str, Any]]:
        """Polls until the job is done (``on_progress(status)`` after each poll), then
        returns :meth:`results`. ``timeout``: seconds of wall-clock time for all of it,
        the status request in flight included, before TimeoutError (the job goes on at
        the provider)."""
        return drive(self._waiting(_Waiter(self.llm, sleep), poll_interval, timeout, on_progress))

    def results(self) -> dict[str, dict[str, Any]]:
        """Results keyed by caller id; a job not done yet raises InvalidRequestError."""
        return map_results(self.llm, self.ids, self.llm._batch_call("fetch", self.id))

    def cancel(self) -> BatchStatus:
        status: BatchStatus = self.llm._batch_call("cancel", self.id)
        return status


class AsyncBatchJob(_Job):
    """:class:`BatchJob` with awaited calls (from ``batch_async``)."""

    async def status(self) -> BatchStatus:
        status: BatchStatus = await self.llm._batch_call_async("poll", self.id)
        return status

    async def wait(
        self,
        *,
        poll_interval: float = 30.0,
        timeout: float | None = None,
        on_progress: Progress | None = None,
    ) -> dict[str, dict[str, Any]]:
        body = self._waiting(_Waiter(self.llm), poll_interval, timeout, on_progress)
        return await drive_async(body)

    async def results(self) -> dict[str, dict[str, Any]]:
        outcomes = await self.llm._batch_call_async("fetch", self.id)
        return map_results(self.llm, self.ids, outcomes)

    async def cancel(self) -> BatchStatus:
        status: BatchStatus = await self.llm._batch_call_async("cancel", self.id)
        return status
