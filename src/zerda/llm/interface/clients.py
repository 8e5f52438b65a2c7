"""SDK clients: built once (the async one once per event loop), and closed.

An interface builds its SDK clients on first use and closes the ones it built (never a
``client=`` passed in). An httpx-based async client belongs to the event loop it first ran
on, so one is built per loop and closed when that loop shuts down (:class:`_LoopCloser`);
one interface can serve many ``asyncio.run`` calls.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import sys
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from zerda.llm.errors import AuthenticationError
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    import asyncio

logger = logging.getLogger("zerda")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    # asyncio costs ~15% of a cold start: without it imported, no event loop can be running.
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None
    try:
        return aio.get_running_loop()  # type: ignore[no-any-return]
    except RuntimeError:
        return None


def require_sdk(module: str, extra: str, package: str) -> ModuleType:
    """Imports a provider SDK, or fails with the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f'this provider needs the {package!r} package: pip install "zerda-llm[{extra}]"'
        ) from exc


def without_sdk_retries(client: Any) -> Any:
    """A ready Stainless SDK client (openai, groq, anthropic) with its own retries off:
    Zerda retries every provider with one policy (``_retrying``). ``with_options`` returns a
    copy that shares the client's HTTP connection pool."""
    if client is None or getattr(client, "max_retries", 0) == 0:
        return client
    with_options = getattr(client, "with_options", None)
    return with_options(max_retries=0) if callable(with_options) else client


class _LoopCloser:
    """Closes an async SDK client when the event loop it is bound to shuts down.

    An httpx-based async client keeps connections that belong to one event loop; once that
    loop is closed they can no longer be closed (the SDKs' finalizers then print "Event loop
    is closed" tracebacks). ``asyncio.run`` (and every runner) calls
    ``loop.shutdown_asyncgens()`` before closing its loop, which finishes every async
    generator started on it: the one started here closes the client at that moment, on its
    own loop. https://docs.python.org/3/library/asyncio-eventloop.html#asyncio.loop.shutdown_asyncgens
    """

    def __init__(self, close: Callable[[], Awaitable[None]]) -> None:
        self.done = False
        self._close: Callable[[], Awaitable[None]] | None = close
        self._gen = self._wait()
        # Must run on the loop: the first step registers the generator with it (the loop's
        # firstiter hook) and stops at its yield, without awaiting anything.
        _step(self._gen.__anext__())

    async def _wait(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            close, self._close = self._close, None
            if close is not None and not self.done:
                self.done = True
                await close()

    def forget(self) -> None:
        """The client was closed another way (or cannot be): finish without closing it."""
        self.done = True
        self._close = None
        _step(self._gen.aclose())


def _step(awaitable: Any) -> None:
    """Runs a generator step that awaits nothing, to its end."""
    try:
        awaitable.send(None)
    except (StopIteration, StopAsyncIteration, RuntimeError):
        pass


def _loop_closed(loop: asyncio.AbstractEventLoop | None) -> bool:
    return loop is None or loop.is_closed()


class Clients(Host):
    """The SDK clients of an interface and what closing it releases."""

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                self._check_open()
                if self._client is None:
                    self._check_key()
                    self._client = self._make_client()
                    self._owns_client = True
        return self._client

    @property
    def async_client(self) -> Any:
        """The async SDK client, built once per event loop: an httpx-based async client is
        bound to the loop it first ran on, so one interface reused across ``asyncio.run``
        calls gets a fresh client on each new loop, and the one it replaces is closed with
        its loop (a client passed in is always kept, and never closed)."""
        loop = _running_loop()
        current = self._async_client
        if current is not None and (not self._owns_async or self._built_for(loop)):
            return current
        with self._lock:
            self._check_open()
            if self._async_client is not None and (not self._owns_async or self._built_for(loop)):
                return self._async_client
            self._check_key()
            self._retire_async_client()
            client = self._make_async_client()
            self._async_client, self._owns_async = client, True
            self._bind(client, loop)
        return client

    def _built_for(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """Whether the owned async client may serve ``loop``; one built outside any loop is
        adopted by the first loop that uses it."""
        if self._async_loop is None:
            if loop is not None:
                self._bind(self._async_client, loop)
            return True
        return self._async_loop() is loop

    def _bind(self, client: Any, loop: asyncio.AbstractEventLoop | None) -> None:
        self._async_loop = weakref.ref(loop) if loop is not None else None
        self._async_closer = (
            _LoopCloser(lambda: self._aclose_quietly(client)) if loop is not None else None
        )

    def _retire_async_client(self) -> None:
        """Lets go of the owned async client of another loop. A loop that is still open
        closes it when it shuts down (calls in flight there keep working); a closed one
        already did, when it shut down (``asyncio.run`` always does)."""
        loop = self._async_loop() if self._async_loop is not None else None
        closer = self._async_closer
        self._async_client, self._async_loop, self._async_closer = None, None, None
        if closer is not None and _loop_closed(loop):
            closer.forget()

    def _check_key(self) -> None:
        if self.env_keys and self._api_key is None:
            raise AuthenticationError(
                f"no API key for {self.provider}: set {' or '.join(self.env_keys)} or pass api_key=",
                provider=self.provider,
            )

    def _client_kwargs(self) -> dict[str, Any]:
        """Constructor arguments in the shape the Stainless SDKs (openai, groq, anthropic)
        take: Zerda's options, then any other option given to the interface
        (``default_headers``, ``http_client``...). Other SDKs override this."""
        # max_retries=0: Zerda retries every provider itself, with one policy (_retrying).
        kwargs: dict[str, Any] = {"api_key": self.api_key, "max_retries": 0}
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        return {**kwargs, **self.options}

    # --- closing ------------------------------------------------------------------------

    def _close_client(self, client: Any) -> None:
        """Closes a sync SDK client: its ``close()``, else its context manager's exit."""
        close = getattr(client, "close", None)
        if callable(close):
            close()
        elif hasattr(client, "__exit__"):
            client.__exit__(None, None, None)

    async def _aclose_client(self, client: Any) -> None:
        """Closes an async SDK client: ``aclose()``, ``close()`` (awaited when it is a
        coroutine, as the Stainless and ollama clients' are) or ``__aexit__``."""
        close = getattr(client, "aclose", None) or getattr(client, "close", None)
        if callable(close):
            result = close()
            if inspect.isawaitable(result):
                await result
        elif hasattr(client, "__aexit__"):
            await client.__aexit__(None, None, None)

    async def _aclose_quietly(self, client: Any) -> None:
        # Runs while a loop shuts down, where a failure would only be printed: logged.
        try:
            await self._aclose_client(client)
        except Exception as exc:
            logger.debug("%s: closing an async client failed: %r", self.provider, exc)

    def _close_resources(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Anything else the interface owns (Bedrock: its thread pool). Sync, idempotent."""

    def _take_owned(self) -> tuple[Any, Any, asyncio.AbstractEventLoop | None, Any]:
        """Marks the interface closed and hands over what it owns, once; the sync client
        is closed here (unless it is the async one too)."""
        with self._lock:
            if self._closed:
                return None, None, None, None
            self._closed = True
            sync = self._client if self._owns_client else None
            aclient = self._async_client if self._owns_async else None
            loop = self._async_loop() if self._async_loop is not None else None
            closer, self._async_closer = self._async_closer, None
            self._client = self._async_client = None
            self._owns_client = self._owns_async = False
        if sync is not None and sync is not aclient:
            self._close_client(sync)
        return sync, aclient, loop, closer

    def _release(self, loop: asyncio.AbstractEventLoop | None, closer: Any) -> None:
        """The end of close and aclose: a closer whose loop is gone finishes (that loop
        closed the client when it shut down, or never can now); then the rest it owns."""
        if closer is not None and _loop_closed(loop):
            closer.forget()
        self._close_resources()

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(
                f"this {type(self).__name__} is closed: create a new interface to make calls"
            )
