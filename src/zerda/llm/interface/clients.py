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

from zerda.llm._stack import in_fresh_chunk
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
        # Imported at the start of a fresh stack chunk, as from a module's top level
        # (zerda.llm._stack): an SDK's import system recursion would otherwise map and
        # unmap a chunk at every crossing of one's end below Zerda's and the caller's frames.
        return in_fresh_chunk(importlib.import_module, module)
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
    """Holds the async SDK client of one event loop and closes it when that loop shuts down.

    An httpx-based async client keeps connections that belong to one event loop; once that
    loop is closed they can no longer be closed (the SDKs' finalizers then print "Event loop
    is closed" tracebacks). ``asyncio.run`` (and every runner) calls
    ``loop.shutdown_asyncgens()`` before closing its loop, which finishes every async
    generator started on it: the one started here closes the client at that moment, on its
    own loop, then ``ended`` lets the interface forget it.
    https://docs.python.org/3/library/asyncio-eventloop.html#asyncio.loop.shutdown_asyncgens

    The closer must stay referenced as long as its loop runs: a collected async generator
    is finished by its loop soon after (the loop's asyncgen finalizer hook), which would
    close the client under the calls still using it.
    """

    def __init__(
        self,
        client: Any,
        close: Callable[[Any], Awaitable[None]],
        ended: Callable[[_LoopCloser], None],
    ) -> None:
        self.client = client
        self.done = False
        self._close: Callable[[Any], Awaitable[None]] | None = close
        self._ended = ended
        self._gen = self._wait()
        # Must run on the loop: the first step registers the generator with it (the loop's
        # firstiter hook) and stops at its yield, without awaiting anything.
        _step(self._gen.__anext__())

    async def _wait(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            close, self._close = self._close, None
            try:
                if close is not None and not self.done:
                    self.done = True
                    await close(self.client)
            finally:
                self._ended(self)

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


def new_loop_clients() -> weakref.WeakKeyDictionary[Any, _LoopCloser]:
    """The owned async clients of an interface, one per event loop (keyed weakly by it)."""
    return weakref.WeakKeyDictionary()


class Clients(Host):
    """The SDK clients of an interface and what closing it releases.

    The async client: one per event loop, in ``_loop_clients`` (an httpx-based client is
    bound to the loop it first ran on). Each stays with its loop until that loop shuts down,
    whatever other loops, in other threads, do meanwhile; the entries of loops that ended are
    dropped, so loops that come and go leave nothing behind. ``_async_client`` holds a
    client passed in (served to every loop, never closed) or, with ``_owns_async``, one built
    outside any loop, adopted by the first loop that uses it.
    """

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                self._check_open()
                if self._client is None:
                    self._check_key()
                    self._client = in_fresh_chunk(self._make_client)  # as require_sdk
                    self._owns_client = True
        return self._client

    @property
    def async_client(self) -> Any:
        """The async SDK client of the running event loop, built on its first use there
        (a client passed in serves every loop)."""
        loop = _running_loop()
        closer = self._loop_clients.get(loop) if loop is not None else None
        if closer is not None:
            return closer.client
        with self._lock:  # _async_client and _owns_async change together, under it
            if self._async_client is not None and not self._owns_async:
                return self._async_client
            self._check_open()
            return self._async_client_for(loop)

    def _async_client_for(self, loop: asyncio.AbstractEventLoop | None) -> Any:
        """Under the lock: ``loop``'s client, built (or adopted) if it has none yet."""
        if loop is None:  # outside any loop: one client, for the first loop that runs it
            if self._async_client is None:
                self._check_key()
                self._async_client = in_fresh_chunk(self._make_async_client)
                self._owns_async = True
            return self._async_client
        closer = self._loop_clients.get(loop)
        if closer is not None:
            return closer.client
        client = self._async_client if self._owns_async else None
        if client is None:
            self._check_key()
            client = in_fresh_chunk(self._make_async_client)
        self._async_client, self._owns_async = None, False
        self._drop_ended_loops()
        self._loop_clients[loop] = _LoopCloser(client, self._aclose_quietly, self._loop_ended)
        return client

    def _loop_ended(self, closer: _LoopCloser) -> None:
        """A loop shut down and its closer closed the client: the entry goes."""
        with self._lock:
            for loop, held in list(self._loop_clients.items()):
                if held is closer:
                    del self._loop_clients[loop]

    def _drop_ended_loops(self) -> None:
        """Under the lock: lets go of the clients of loops closed without
        ``shutdown_asyncgens()`` (``loop.close()`` alone); they cannot be closed now."""
        for loop, closer in list(self._loop_clients.items()):
            if loop.is_closed():
                del self._loop_clients[loop]
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

    def _take_owned(self) -> Any:
        """Marks the interface closed, once, and closes the sync client it built (unless it
        is the async one too); returns the async client built outside any loop, if any.
        The clients of loops still running stay with them: each is closed when its loop
        shuts down (calls in flight there finish first)."""
        with self._lock:
            if self._closed:
                return None
            self._closed = True
            sync = self._client if self._owns_client else None
            unbound = self._async_client if self._owns_async else None
            self._client = self._async_client = None
            self._owns_client = self._owns_async = False
            self._drop_ended_loops()
        if sync is not None and sync is not unbound:
            self._close_client(sync)
        return unbound

    def _close_owned(self) -> None:
        """``close()``: see :meth:`BaseLLMInterface.close`."""
        unbound = self._take_owned()
        if unbound is not None and _running_loop() is None:
            import asyncio

            asyncio.run(self._aclose_quietly(unbound))  # built outside any loop: no sockets yet
        self._close_resources()

    async def _aclose_owned(self) -> None:
        """``aclose()``: as ``close()``, and the running loop's client is closed now."""
        unbound = self._take_owned()
        loop = _running_loop()
        with self._lock:
            closer = self._loop_clients.pop(loop, None) if loop is not None else None
        if closer is not None:
            closer.forget()
            await self._aclose_quietly(closer.client)
        if unbound is not None:
            await self._aclose_quietly(unbound)
        self._close_resources()

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(
                f"this {type(self).__name__} is closed: create a new interface to make calls"
            )
