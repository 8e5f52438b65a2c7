"""The worker threads of one run's sync tools (docs/loop.md, "Parallel calls", "Timeouts").

A run gets one :class:`ToolThreads`: at most ``limit`` daemon threads, started as calls need
them and reused by the calls that follow, ended when the run closes the pool (an idle thread
at once, a busy one when its tool returns). A call past its timeout is *abandoned*: the loop
answers the model and goes on, while the thread keeps running the tool; that thread still
counts against ``limit`` until the tool returns, so a run whose tools hang never has more
than ``limit`` threads. Daemon threads, so that a tool that never returns does not keep the
process from exiting (``concurrent.futures`` joins its workers at exit).

A queued call waits for a free thread. Waiting behind tools that are running within their
time is waiting for progress, and does not count against a call's timeout; once every
thread holds an abandoned tool nothing may ever free one, so from then on a queued call
waits at most its timeout, then is answered as timed out without having run ("starved").

The waiting is written once (:meth:`ToolThreads._settle`, under the lock); :meth:`wait`
blocks on a condition, :meth:`wait_async` on an event the threads set through the loop.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Job", "Outcome", "ToolThreads"]

# ("content", value) | ("output", ToolOutput) | ("raised", exception)
# | ("timeout", seconds) | ("starved", seconds)
Outcome = tuple[str, Any]
THREAD_NAME = "zerda-tool"


class Job:
    """One call for a thread: ``run`` returns its outcome and never raises."""

    __slots__ = (
        "abandoned",
        "outcome",
        "run",
        "settled",
        "settled_ns",
        "started",
        "submitted",
        "timeout",
    )

    def __init__(self, run: Callable[[], Outcome], timeout: float | None) -> None:
        self.run = run
        self.timeout = timeout
        self.submitted = 0.0
        self.started: float | None = None
        self.outcome: Outcome | None = None  # what the thread returned
        self.settled: Outcome | None = None  # what the model is told
        self.settled_ns = 0  # wall-clock time of settling (a span's end)
        self.abandoned = False

    def settle(self, outcome: Outcome) -> None:
        self.settled, self.settled_ns = outcome, time.time_ns()


class ToolThreads:
    """See the module docstring."""

    def __init__(self, limit: int) -> None:
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)  # idle threads wait for a job
        self._changed = threading.Condition(self._lock)  # waiters wait for a job to change
        self._queue: deque[Job] = deque()
        self._limit = limit
        self._threads = self._idle = self._abandoned = 0
        self._stalled_since: float | None = None  # when every thread became abandoned
        self._listeners: set[Callable[[], None]] = set()
        self._closed = False

    def submit(self, job: Job) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the run's tool threads are closed")
            job.submitted = time.monotonic()
            self._queue.append(job)
            if len(self._queue) > self._idle and self._threads < self._limit:
                self._threads += 1
                name = f"{THREAD_NAME}-{self._threads}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
            self._ready.notify()

    def wait(self, jobs: Sequence[Job]) -> None:
        """Blocks until every job is settled: returned, timed out or starved."""
        with self._lock:
            while (wait := self._settle(jobs)) is not None:
                self._changed.wait(None if wait == math.inf else wait)

    async def wait_async(self, jobs: Sequence[Job]) -> None:
        """:meth:`wait` for an event loop: the threads wake it through the loop."""
        import asyncio

        loop, changed = asyncio.get_running_loop(), asyncio.Event()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(changed.set)
            except RuntimeError:  # the loop has closed: nobody waits any more
                pass

        with self._lock:
            self._listeners.add(wake)
        try:
            while True:
                changed.clear()
                with self._lock:
                    wait = self._settle(jobs)
                if wait is None:
                    return
                try:
                    await asyncio.wait_for(changed.wait(), None if wait == math.inf else wait)
                except asyncio.TimeoutError:
                    pass
        finally:
            with self._lock:
                self._listeners.discard(wake)

    def close(self) -> None:
        """Idle threads end now, busy ones when their tool returns; queued jobs never run."""
        with self._lock:
            self._closed = True
            for job in self._queue:
                job.settle(("starved", job.timeout))
            self._queue.clear()
            self._ready.notify_all()

    # --- under the lock --------------------------------------------------------------------

    def _settle(self, jobs: Sequence[Job]) -> float | None:
        """Settles what can be settled; None when every job is, else the seconds until the
        next deadline (``math.inf``: none, wait for a change)."""
        now, wait = time.monotonic(), math.inf
        for job in jobs:
            if job.settled is None:
                wait = min(wait, self._settle_one(job, now))
        return None if all(job.settled is not None for job in jobs) else wait

    def _settle_one(self, job: Job, now: float) -> float:
        """Settles ``job`` if its time has come; the seconds left otherwise."""
        if job.outcome is not None:
            job.settle(job.outcome)
            return math.inf
        deadline = self._deadline(job)
        if deadline > now:
            return deadline - now
        if job.started is None:  # every thread is stuck: it cannot start in time
            self._queue.remove(job)
            job.settle(("starved", job.timeout))
            return math.inf
        job.abandoned = True
        job.settle(("timeout", job.timeout))
        self._abandoned += 1
        if self._abandoned >= self._limit and self._stalled_since is None:
            self._stalled_since = now
        return math.inf

    def _deadline(self, job: Job) -> float:
        if job.timeout is None:
            return math.inf
        if job.started is not None:
            return job.started + job.timeout
        if self._stalled_since is None:  # waiting behind tools within their time
            return math.inf
        return max(self._stalled_since, job.submitted) + job.timeout

    # --- the threads -------------------------------------------------------------------------

    def _work(self) -> None:
        while (job := self._next()) is not None:
            self._finish(job, job.run())

    def _next(self) -> Job | None:
        with self._lock:
            while not self._queue:
                if self._closed:
                    self._threads -= 1
                    return None
                self._idle += 1
                self._ready.wait()
                self._idle -= 1
            job = self._queue.popleft()
            job.started = time.monotonic()
            listeners = self._wake_waiters()
        _call_all(listeners)
        return job

    def _finish(self, job: Job, outcome: Outcome) -> None:
        with self._lock:
            job.outcome = outcome
            if job.abandoned:
                self._abandoned -= 1
                self._stalled_since = None
            listeners = self._wake_waiters()
        _call_all(listeners)

    def _wake_waiters(self) -> list[Callable[[], None]]:
        self._changed.notify_all()
        return list(self._listeners)


def _call_all(listeners: list[Callable[[], None]]) -> None:
    for listener in listeners:
        listener()


def live_threads() -> int:
    """How many tool threads are alive in the process (for tests and diagnostics)."""
    return sum(1 for t in threading.enumerate() if t.name.startswith(THREAD_NAME + "-"))
