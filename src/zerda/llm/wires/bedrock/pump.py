"""The thread pump of Bedrock's async stream: boto3 has no async client."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from zerda.llm.wires.bedrock.stream import _Events


class _StreamPump:
    """Runs a blocking event stream in a pool thread and hands its events to the loop."""

    def __init__(self) -> None:
        import asyncio  # created on the running loop

        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._stopped = threading.Event()

    def start(self, pool: ThreadPoolExecutor, events: _Events) -> None:
        pool.submit(self._run, events)

    def _put(self, kind: str, item: Any) -> None:
        if self._stopped.is_set():
            return
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (kind, item))
        except RuntimeError:  # the loop closed while the stream was still running
            self._stopped.set()

    def _run(self, events: _Events) -> None:
        try:
            with events:
                for event in events:
                    if self._stopped.is_set():
                        return
                    self._put("event", event)
        except BaseException as exc:  # noqa: BLE001 - handed over to the loop, raised there
            self._put("error", exc)
        else:
            self._put("end", None)

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            kind, item = await self._queue.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item

    def stop(self) -> None:
        """Stops the pump: at its next event the pool thread leaves the stream's ``with``,
        which closes the HTTP response. Closing it from here instead would block the loop:
        the reader thread holds the response's buffer lock while it waits for data."""
        self._stopped.set()


# --- botocore's logs --------------------------------------------------------------------
