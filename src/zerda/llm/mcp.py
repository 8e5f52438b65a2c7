"""Tools from an MCP server (docs/mcp.md), through the official ``mcp`` SDK (``zerda-llm[mcp]``).

``MCPTools(server)`` connects to a server — a command list started as a subprocess and spoken
to over stdio, or an ``http(s)://`` URL spoken to over streamable HTTP — and, entered with
``with`` or ``async with``, gives the server's tools as a list that ``run`` / ``run_async``
execute through the MCP session. Leaving the block closes the session and ends the server
process.

The session is asyncio code held by one task from start to end (the mcp SDK's task groups
must be entered and left by one task): entered with ``async with``, a task on the caller's
event loop; entered with ``with``, the task of an event loop in a thread of its own, so the
sync loop (and any other event loop) can call the tools. The caller waits for that task to
open the session, at most ``timeout`` seconds; a start that fails or takes longer raises one
:class:`~zerda.llm.errors.ZerdaError` naming the server and the cause, and the server process
is ended either way (also when the interpreter exits meanwhile: an ``atexit`` hook closes the
sessions still open).

A command server's stderr goes through a pipe Zerda reads (the SDK needs a real file
descriptor, which a notebook's ``sys.stderr`` lacks) and is copied line by line to ``errlog``
(default: ``sys.stderr`` at the time), except the validation dump an older (mcp 1.x) server
prints when this SDK probes it with ``server/discover``, which becomes one DEBUG record.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import math
import os
import re
import shlex
import sys
import threading
import traceback
import weakref
from collections import deque
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import IO, Any

from zerda.llm import errors
from zerda.llm._tool_output import sendable_parts
from zerda.llm.base import _running_loop, require_sdk
from zerda.llm.executable import ExecutableTool, ToolOutput

__all__ = ["DEFAULT_TIMEOUT", "MCPTool", "MCPTools"]

logger = logging.getLogger("zerda")

DEFAULT_TIMEOUT = 60.0  # seconds: the start (initialize, list_tools), and each tool call
# How long closing may take before the session task is cancelled (anyio then kills the
# process: a server that ignores SIGTERM on mcp 1.x, whose stdio client waits for it).
_CLOSE_GUARD = 10.0
_STDERR_DRAIN = 2.0  # seconds to wait for a stopped server's last stderr lines
_LINE_MAX = 65536  # bytes of one stderr line read at once
# JSON-RPC error codes of a request that timed out (mcp 2.x: -32001, the TypeScript SDK's;
# mcp 1.x: HTTP 408) and of a connection that closed (-32000 in both).
_TIMEOUT_CODES = frozenset({-32001, 408})
_CLOSED_CODE = -32000
# What an HTTP 404 at the URL becomes before a session exists: mcp 2.x -32601 (method not
# found), mcp 1.x 32600 ("Session terminated").
_NOT_FOUND_CODES = frozenset({-32601, 32600})

# An MCP tool is executed through a live session (a subprocess or an HTTP connection) that
# belongs to this process.
_CANNOT_TRAVEL = (
    "{what} cannot be pickled: MCP tools run through the live session of the process "
    "that opened them; open MCPTools inside the worker (with MCPTools(...) as tools: ...)"
)


class MCPTool(ExecutableTool):
    """One tool of an MCP server: name, description and input schema as the server gives
    them, executed by the server through the session of the :class:`MCPTools` it came from."""

    def __init__(self, owner: MCPTools, name: str, description: str, parameters: dict[str, Any]):
        self.name = name
        self.description = description
        self.parameters = parameters
        self._owner = owner

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r})"

    def __reduce__(self) -> Any:
        raise TypeError(_CANNOT_TRAVEL.format(what=f"MCP tool {self.name!r}"))

    def call(self, arguments: dict[str, Any]) -> ToolOutput:
        return self._owner._call_sync(self.name, arguments)

    async def call_async(self, arguments: dict[str, Any]) -> ToolOutput:
        return await self._owner._call_async(self.name, arguments)


class MCPTools:
    """The tools of one MCP server, as a context manager; see the module docstring.

    ``server``: a command list (``["python", "server.py"]``) or an ``http(s)://`` URL.
    ``env`` and ``cwd``: for a command (the mcp SDK passes only a safe part of the
    environment, e.g. PATH and HOME, plus ``env``). ``headers``: for a URL (e.g. an
    Authorization header; never shown in a repr or an error). ``timeout``: the seconds the
    start (connecting, initialize, list_tools) and each tool call may take, 60 by default;
    None waits forever. ``errlog``: where a command server's stderr is written (any object
    with ``write``, e.g. a file or ``io.StringIO``; default ``sys.stderr`` at the time).
    """

    def __init__(
        self,
        server: Sequence[str] | str,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        errlog: IO[str] | None = None,
    ) -> None:
        self._target = _check_server(server)
        self._env = env
        self._cwd = cwd
        self._headers = headers
        self._timeout = _check_timeout(timeout)
        self._errlog = _check_errlog(errlog)
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None  # while the tools can be called
        self._home: asyncio.AbstractEventLoop | None = None  # the session task's loop
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._closing: asyncio.Event | None = None
        self._opened = False
        self._guard: asyncio.TimerHandle | None = None
        self._close_error: BaseException | None = None
        self._stray: Exception | None = None  # the first thing the server sent that is not MCP
        self._stderr: _ServerStderr | None = None

    def __repr__(self) -> str:
        kind = "url" if isinstance(self._target, str) else "command"
        shown = _public_url(self._target) if isinstance(self._target, str) else self._target
        return f"MCPTools({kind}={shown!r})"

    def __reduce__(self) -> Any:
        raise TypeError(_CANNOT_TRAVEL.format(what=repr(self)))

    @property
    def _name(self) -> str:
        """The server as errors and logs name it: the command, or the URL without its
        credentials and query."""
        if isinstance(self._target, str):
            return _public_url(self._target)
        return shlex.join(self._target)

    # --- async: the session task runs on the caller's loop -------------------------------

    async def __aenter__(self) -> list[MCPTool]:
        self._check_not_open()
        require_sdk("mcp", "mcp", "mcp")
        ready: concurrent.futures.Future[list[MCPTool]] = concurrent.futures.Future()
        self._home, self._closing = asyncio.get_running_loop(), asyncio.Event()
        task = self._task = self._home.create_task(self._serve(ready))
        waiting = asyncio.wrap_future(ready)
        try:
            done, _ = await asyncio.wait({waiting}, timeout=self._timeout)
        except BaseException:  # the caller was cancelled: the server is not left running
            await self._abandon_async(task, waiting)
            raise
        if not done:
            await self._abandon_async(task, waiting)
            raise self._start_timed_out()
        try:
            return waiting.result()
        except BaseException:
            await asyncio.gather(task, return_exceptions=True)
            self._forget()
            raise

    async def __aexit__(self, *exc_info: Any) -> None:
        task = self._task
        self._wake()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        self._forget()
        self._raise_close_error(exc_info[0])

    async def _abandon_async(self, task: asyncio.Task[None], waiting: asyncio.Future[Any]) -> None:
        waiting.cancel()  # a later result or exception is nobody's
        self._wake()
        await asyncio.gather(task, return_exceptions=True)
        self._forget()

    # --- sync: the session task runs on a loop in its own thread ---------------------------

    def __enter__(self) -> list[MCPTool]:
        self._check_not_open()
        require_sdk("mcp", "mcp", "mcp")
        ready: concurrent.futures.Future[list[MCPTool]] = concurrent.futures.Future()
        loop = asyncio.new_event_loop()
        self._home, self._closing = loop, asyncio.Event()
        self._task = loop.create_task(self._serve(ready))
        self._thread = threading.Thread(
            target=_run_loop, args=(loop, self._task), name="zerda-mcp", daemon=True
        )
        _OPEN.add(self)
        self._thread.start()
        try:
            return ready.result(timeout=self._timeout)
        except concurrent.futures.TimeoutError:
            if not ready.cancel():  # opened (or failed) just now: report what happened
                return self._settled(ready)
            self._abandon()
            raise self._start_timed_out() from None
        except BaseException:  # the start failed, or the caller was interrupted
            self._abandon()
            raise

    def __exit__(self, exc_type: Any, *exc_info: Any) -> None:
        self._abandon()
        self._raise_close_error(exc_type)

    def _settled(self, ready: concurrent.futures.Future[list[MCPTool]]) -> list[MCPTool]:
        try:
            return ready.result()
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """Ends the session (or its start) from another thread, and waits for it."""
        thread = self._thread
        self._stop()
        if thread is not None:
            thread.join(_CLOSE_GUARD + _STDERR_DRAIN + 5.0)
        _OPEN.discard(self)
        self._forget()

    # --- the session task ---------------------------------------------------------------------

    async def _serve(self, ready: concurrent.futures.Future[list[MCPTool]]) -> None:
        """The one task that opens the session, holds it until asked to close, and closes it.
        A start failure is reported through ``ready``; a close failure by the exit."""
        stderr: _ServerStderr | None = None
        failure: BaseException | None = None
        self._stray = self._stderr = None
        try:
            if not isinstance(self._target, str):
                stderr = self._stderr = _ServerStderr(self._name, self._errlog)
            await self._hold(ready, stderr)
        except BaseException as exc:  # reported below, never lost
            failure = exc
        self._loop = self._client = None
        if self._guard is not None:
            self._guard.cancel()
        if stderr is not None:
            await _drained(stderr)  # the server has stopped: its last lines are read
        if failure is None:
            return
        if ready.done():  # open (or given up on) before: a failure while closing
            self._note_close_error(failure)
            return
        try:
            _settle(ready, error=self._start_error(failure, stderr))
        except Exception as exc:  # noqa: BLE001 - the opener must hear of it in any case
            _settle(ready, error=exc)

    async def _hold(
        self, ready: concurrent.futures.Future[list[MCPTool]], stderr: _ServerStderr | None
    ) -> None:
        async with AsyncExitStack() as stack:
            try:
                tools = await self._open(stack, stderr)
            finally:
                if stderr is not None:
                    stderr.spawned()
            self._loop, self._opened = asyncio.get_running_loop(), True
            if _settle(ready, result=tools):  # else the caller gave up waiting: close now
                assert self._closing is not None
                await self._closing.wait()
            self._loop = self._client = None
            self._guard = asyncio.get_running_loop().call_later(_CLOSE_GUARD, self._cancel_close)

    def _cancel_close(self) -> None:
        """Closing took too long (a server that ignores SIGTERM): cancelling the session
        task makes anyio kill the process."""
        logger.debug("MCP server %s: closing took over %s s; killing it", self._name, _CLOSE_GUARD)
        if self._task is not None:
            self._task.cancel()

    def _stop(self) -> None:
        """Asks the session task to end, from any thread."""
        loop = self._home
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # its loop is closed: the task has ended
            pass

    def _wake(self) -> None:
        """On the session's loop: close an open session; cancel a start (and, should its
        cleanup hang, cancel it again after a while: anyio then kills the process)."""
        if self._opened and self._closing is not None:
            self._closing.set()
        elif self._task is not None and not self._task.done():
            self._task.cancel()
            self._guard = asyncio.get_running_loop().call_later(_CLOSE_GUARD, self._cancel_close)

    def _forget(self) -> None:
        self._loop = self._client = self._home = self._task = self._thread = None
        self._closing, self._opened, self._guard = None, False, None

    def _note_close_error(self, failure: BaseException) -> None:
        if isinstance(failure, asyncio.CancelledError):  # our own close guard, or abandonment
            return
        self._close_error = failure

    def _raise_close_error(self, exc_type: Any) -> None:
        error, self._close_error = self._close_error, None
        if error is not None and exc_type is None:  # never hide the block's own exception
            raise error

    # --- the session -----------------------------------------------------------------------

    async def _open(self, stack: AsyncExitStack, stderr: _ServerStderr | None) -> list[MCPTool]:
        mcp = require_sdk("mcp", "mcp", "mcp")
        if hasattr(mcp, "Client"):  # mcp 2.x
            transport = await self._transport(mcp, stack, stderr)
            client = mcp.Client(
                transport, read_timeout_seconds=self._timeout, message_handler=self._on_message
            )
            self._client = await stack.enter_async_context(client)
        else:  # mcp 1.x has no Client: a ClientSession over a transport client
            self._client = _Session1(await self._session_1(mcp, stack, stderr))
        return [_map_tool(self, t) for t in await self._list_tools()]

    async def _transport(
        self, mcp: Any, stack: AsyncExitStack, stderr: _ServerStderr | None
    ) -> Any:
        """What ``mcp.Client`` connects to: a stdio client whose stderr is Zerda's pipe, a
        URL, or, with headers, an HTTP transport over a client that sends them."""
        if stderr is not None:
            return _stdio(self._stdio_parameters(mcp), stderr)
        assert isinstance(self._target, str)
        if not self._headers:
            return self._target
        import httpx2  # the mcp SDK's HTTP client
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(httpx2.AsyncClient(headers=self._headers))
        return streamable_http_client(self._target, http_client=http)

    def _stdio_parameters(self, mcp: Any) -> Any:
        assert not isinstance(self._target, str)
        command, *args = self._target
        return mcp.StdioServerParameters(command=command, args=args, env=self._env, cwd=self._cwd)

    async def _session_1(
        self, mcp: Any, stack: AsyncExitStack, stderr: _ServerStderr | None
    ) -> Any:
        """mcp 1.x: the initialized ``ClientSession`` over stdio or streamable HTTP."""
        if stderr is None:
            assert isinstance(self._target, str)
            transport = await self._http_1(self._target, stack)
        else:
            transport = _stdio(self._stdio_parameters(mcp), stderr)
        read, write, *_ = await stack.enter_async_context(transport)  # HTTP adds a session id
        timeout = None if self._timeout is None else timedelta(seconds=self._timeout)
        session = mcp.ClientSession(
            read, write, read_timeout_seconds=timeout, message_handler=self._on_message
        )
        await stack.enter_async_context(session)
        await session.initialize()  # mcp 2.x's Client does this on entering
        return session

    async def _http_1(self, url: str, stack: AsyncExitStack) -> Any:
        """mcp 1.x's streamable HTTP transport; from 1.24 under its 2.x name, which takes
        headers on an httpx client (the older name, deprecated there, takes them itself)."""
        from mcp.client import streamable_http as module

        streamable_http: Any = module  # typed against mcp 2.x, which names these otherwise
        if not hasattr(streamable_http, "streamable_http_client"):
            return streamable_http.streamablehttp_client(url, headers=self._headers)
        if not self._headers:
            return streamable_http.streamable_http_client(url)
        import httpx  # the mcp 1.x SDK's HTTP client

        http = await stack.enter_async_context(httpx.AsyncClient(headers=self._headers))
        return streamable_http.streamable_http_client(url, http_client=http)

    async def _on_message(self, message: Any) -> None:
        """The SDK's message handler: notes the first thing the server sent that is not MCP
        (text on a stdio server's stdout), for a start error to say so."""
        if isinstance(message, Exception) and self._stray is None:
            self._stray = message

    async def _list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    # --- calls ------------------------------------------------------------------------------

    async def _call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        client = self._client
        if client is None:
            raise RuntimeError(_CLOSED)
        try:
            result = await asyncio.wait_for(client.call_tool(name, arguments), self._timeout)
        except Exception as exc:
            failure = self._call_error(name, exc)
            if failure is exc:
                raise
        else:
            return ToolOutput(_map_content(result), bool(result.is_error))
        raise failure  # outside the except block: the SDK's exception only as a clean cause

    def _call_sync(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        loop = self._require_loop()
        if _running_loop() is loop:
            raise RuntimeError(
                "these MCP tools were entered with `async with` on this event loop: "
                "use run_async(), which does not block the loop"
            )
        return asyncio.run_coroutine_threadsafe(self._call(name, arguments), loop).result()

    async def _call_async(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        loop = self._require_loop()
        if asyncio.get_running_loop() is loop:
            return await self._call(name, arguments)
        future = asyncio.run_coroutine_threadsafe(self._call(name, arguments), loop)
        return await asyncio.wrap_future(future)

    def _require_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError(_CLOSED)
        return self._loop

    def _check_not_open(self) -> None:
        if self._home is not None:
            raise RuntimeError("this MCPTools is already open; create one per `with` block")

    # --- errors -----------------------------------------------------------------------------

    @property
    def _secrets(self) -> _Secrets:
        url = self._target if isinstance(self._target, str) else None
        return _Secrets(url, self._headers, self._env)

    def _start_timed_out(self) -> errors.ZerdaError:
        text = (
            f"MCP server {self._name} did not start within {self._timeout:g} s (connecting, "
            "initialize, list_tools; MCPTools(timeout=) sets the limit)"
        )
        return errors.TimeoutError(self._secrets.scrub(text + self._evidence(self._stderr)))

    def _start_error(self, failure: BaseException, stderr: _ServerStderr | None) -> BaseException:
        """One :class:`ZerdaError` naming the server and the cause of a failed start (never an
        exception group), with its stderr's last lines where it wrote any."""
        cause = _cause_of(failure)
        if isinstance(cause, asyncio.CancelledError):
            return cause  # the opener gave up waiting: it raises its own error
        cls, what, retryable = _start_problem(cause, command=stderr is not None)
        if cls is errors.TimeoutError:
            return self._secrets.chained(self._start_timed_out(), cause)
        text = f"MCP server {self._name} {what}" + self._evidence(stderr)
        return self._secrets.chained(cls(self._secrets.scrub(text), retryable=retryable), cause)

    def _evidence(self, stderr: _ServerStderr | None) -> str:
        """What the server showed of itself: output on stdout that is not MCP, the last
        lines of its stderr."""
        shown = ""
        if self._stray is not None:
            said = " ".join(str(self._stray).split())[:200]
            shown += f"; it wrote what is not MCP (JSON-RPC) on its stdout: {said}"
        said = stderr.tail() if stderr is not None else ""
        return shown + (f"; its stderr ended with: {said}" if said else "")

    def _call_error(self, tool: str, exc: Exception) -> BaseException:
        """A tool call's timeout or lost connection as a :class:`ZerdaError` naming the
        server; any other failure as it is (the loop reports it to the model)."""
        if _is_timeout(exc):
            error: errors.ZerdaError = errors.TimeoutError(
                f"MCP server {self._name}: tool {tool!r} did not answer within "
                f"{self._timeout:g} s (MCPTools(timeout=))"
            )
        elif _is_closed(exc):
            error = errors.ConnectionError(
                f"MCP server {self._name}: the connection closed during the call to tool "
                f"{tool!r} (the server exited?)",
                retryable=False,
            )
        else:
            return exc
        return self._secrets.chained(error, exc)


def _run_loop(loop: asyncio.AbstractEventLoop, task: asyncio.Task[None]) -> None:
    """The session thread: runs ``task`` on ``loop`` to its end, then closes the loop as
    ``asyncio.run`` does (the task was created before the loop ran, so that the opener can
    reach it at once)."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(task)
        rest = asyncio.all_tasks(loop)
        for other in rest:
            other.cancel()
        loop.run_until_complete(asyncio.gather(*rest, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _settle(
    future: concurrent.futures.Future[Any],
    *,
    result: Any = None,
    error: BaseException | None = None,
) -> bool:
    """Sets ``future`` unless the waiter gave up on it (cancelled); whether it did."""
    if future.done():
        return False
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except concurrent.futures.InvalidStateError:  # cancelled meanwhile by the waiter
        return False
    return True


async def _drained(stderr: _ServerStderr) -> None:
    try:
        await asyncio.to_thread(stderr.drain)
    except asyncio.CancelledError:  # cancelled again meanwhile: the lines read so far will do
        pass


def _stdio(parameters: Any, stderr: _ServerStderr) -> Any:
    """The SDK's stdio client for ``parameters``, the server's stderr into Zerda's pipe."""
    from mcp.client.stdio import stdio_client

    return stdio_client(parameters, errlog=stderr.file)


# --- sessions still open when the interpreter exits ------------------------------------------

_OPEN: weakref.WeakSet[MCPTools] = weakref.WeakSet()


@atexit.register
def _close_open_sessions() -> None:
    """Ends the sessions (and the starts) still running in their threads when the
    interpreter exits, so that no server process outlives it: a daemon thread would be
    stopped where it stands, its server left running."""
    for tools in list(_OPEN):
        tools._abandon()


class _Session1:
    """An mcp 1.x ``ClientSession`` seen as an mcp 2.x ``Client``: the same calls, with results
    read by their 2.x field names (see :class:`_Snake`)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def list_tools(self, cursor: str | None = None) -> Any:
        return _Snake(await self._session.list_tools(cursor=cursor))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return _Snake(await self._session.call_tool(name, arguments))


class _Snake:
    """An mcp 1.x result read by mcp 2.x's snake_case field names (1.x names them in camelCase:
    ``isError``, ``nextCursor``, ``inputSchema``, ``mimeType``). A field that this 1.x release
    lacks (``structuredContent`` came in 1.10) reads as None, as an unset field does in 2.x."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        head, *rest = name.split("_")
        return _snake_view(getattr(self._value, head + "".join(w.title() for w in rest), None))


def _snake_view(value: Any) -> Any:
    """Models (content blocks, a block's resource) are read through :class:`_Snake` too."""
    from pydantic import BaseModel  # a dependency of the mcp SDK

    if isinstance(value, BaseModel):
        return _Snake(value)
    if isinstance(value, list):
        return [_snake_view(item) for item in value]
    return value


_CLOSED = "the MCP session is closed: call these tools inside the `with MCPTools(...)` block"


def _check_server(server: Any) -> str | tuple[str, ...]:
    """A URL, or a command as a tuple of strings; anything else is refused with the fix."""
    if isinstance(server, str):
        if server.startswith(("http://", "https://")):
            return server
        raise ValueError(
            f"MCPTools: {server!r} is not an http(s):// URL; give a command as a list "
            "of strings, e.g. ['python', 'server.py']"
        )
    if isinstance(server, Sequence) and server and all(isinstance(p, str) for p in server):
        return tuple(server)
    raise ValueError(
        "MCPTools: server must be a command as a non-empty list of strings "
        "(['python', 'server.py']) or an http(s):// URL"
    )


def _public_url(url: str) -> str:
    """``url`` without its userinfo and query (either may hold a credential)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}" + ("?..." if parts.query else "")


def _map_tool(owner: MCPTools, tool: Any) -> MCPTool:
    """Name, description and input schema exactly as the server gave them."""
    return MCPTool(owner, tool.name, tool.description or "", dict(tool.input_schema))


def _map_content(result: Any) -> Any:
    """A CallToolResult's content as tool message content: the text when the server sent
    one text block (the usual case), else a list of content parts; the structured content
    when there are no blocks at all. A part no provider may take (an SVG, a binary blob, data
    that is not base64) becomes text (:func:`zerda.llm._tool_output.sendable_parts`), so
    the next request is not refused."""
    parts = sendable_parts([_map_block(block) for block in result.content])
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    if not parts:
        return result.structured_content if result.structured_content is not None else ""
    return parts


def _map_block(block: Any) -> dict[str, Any]:
    """One MCP content block as a Zerda content part (docs/mcp.md has the table)."""
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind in ("image", "audio"):
        return {"type": kind, "data": block.data, "media_type": block.mime_type}
    if kind == "resource":
        return _map_resource(block.resource)
    return {"type": "text", "text": f"[{kind}: {getattr(block, 'uri', '')}]"}  # resource_link


def _map_resource(resource: Any) -> dict[str, Any]:
    text = getattr(resource, "text", None)
    if text is not None:
        return {"type": "text", "text": text}
    media_type = resource.mime_type or "application/octet-stream"
    kind = "image" if media_type.startswith("image/") else "document"
    return {"type": kind, "data": resource.blob, "media_type": media_type}


# --- the server's stderr ----------------------------------------------------------------------


class _ServerStderr:
    """A command server's stderr: the write end of a pipe is handed to the SDK (a real file
    descriptor, which the subprocess needs and a notebook's ``sys.stderr`` lacks: "fileno"
    errors, https://github.com/modelcontextprotocol/python-sdk/issues/671), and a thread
    copies each line from the read end to ``errlog`` (``sys.stderr`` at the time by default),
    keeping the last few for a start error, and leaving out an older server's protocol noise
    (:class:`_ProtocolNoise`)."""

    def __init__(self, server: str, errlog: IO[str] | None) -> None:
        read_fd, write_fd = os.pipe()  # neither end is inherited but by the server's stderr
        self.file = os.fdopen(write_fd, "w", encoding="utf-8")
        self._reader = os.fdopen(read_fd, "rb")
        self._errlog = errlog
        self._noise = _ProtocolNoise(server)
        self._tail: deque[str] = deque(maxlen=3)
        self._thread = threading.Thread(target=self._relay, name="zerda-mcp-stderr", daemon=True)
        self._thread.start()

    def spawned(self) -> None:
        """The server holds its own copy now: closing ours lets the relay end at its exit."""
        self.file.close()

    def drain(self) -> None:
        self.file.close()
        self._thread.join(_STDERR_DRAIN)

    def tail(self) -> str:
        """The last lines the server wrote, joined (a start error quotes them)."""
        return " | ".join(self._tail)[-500:]

    def _relay(self) -> None:
        with self._reader:
            # Until every copy of the write end is closed; a flood without line breaks is
            # read in pieces, never held whole.
            for raw in iter(lambda: self._reader.readline(_LINE_MAX), b""):
                for line in self._noise.feed(raw.decode("utf-8", "replace")):
                    self._write(line)
        for line in self._noise.end():
            self._write(line)

    def _write(self, line: str) -> None:
        if line.strip():
            self._tail.append(line.strip()[-500:])
        target = self._errlog if self._errlog is not None else sys.stderr
        try:
            target.write(line)
            target.flush()
        except (OSError, ValueError, AttributeError):  # a closed or odd stream: drop the line
            pass


# "Failed to validate request: 31 validation errors for ClientRequest", then pydantic's error
# lines: a location ("InitializeRequest.params.protocolVersion") or an indented detail.
_NOISE_START = "Failed to validate request"
_NOISE_LINE = re.compile(r"\s.*|[A-Za-z_][\w.\[\]-]*\s*|.*Message that failed validation.*", re.S)
_PROBE = "server/discover"


class _ProtocolNoise:
    """Recognises the validation dump an older server (mcp 1.x) logs when the mcp 2.x client
    probes it with ``server/discover`` (the 2026 protocol's first request; the client then
    falls back to ``initialize``): the dump is left out of ``errlog`` and becomes one DEBUG
    record per session. Any other validation failure is passed on as it is."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._block: list[str] | None = None  # the dump being read, while undecided
        self._dropping = False  # the dump being read is the probe's
        self._logged = False

    def feed(self, line: str) -> list[str]:
        """The lines to pass on, now that ``line`` was read."""
        if _NOISE_START in line:
            passed = self.end()
            self._block = [line]
            return passed + self._decide(line)
        if self._block is not None and _NOISE_LINE.fullmatch(line):
            self._block.append(line)
            return self._decide(line)
        return [*self.end(), line]

    def end(self) -> list[str]:
        """The end of a dump: the lines held back, unless it was the probe's."""
        block, self._block = self._block, None
        dropping, self._dropping = self._dropping, False
        return [] if block is None or dropping else block

    def _decide(self, line: str) -> list[str]:
        if _PROBE in line and not self._dropping:
            self._dropping = True
            self._log_once()
        return []

    def _log_once(self) -> None:
        if self._logged:
            return
        self._logged = True
        logger.debug(
            "MCP server %s is older than this mcp SDK: it refused the %s probe (its "
            "validation dump on stderr is not shown) and the session uses initialize",
            self._server,
            _PROBE,
        )


# --- why a start or a call failed -----------------------------------------------------------


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``exc`` itself."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for e in inner for leaf in _leaves(e)]
    return [exc]


def _cause_of(exc: BaseException) -> BaseException:
    """The exception that says what went wrong: the first leaf that is no cancellation
    (a task group cancels its other tasks when one fails)."""
    leaves = _leaves(exc)
    return next((e for e in leaves if not isinstance(e, asyncio.CancelledError)), leaves[0])


def _code(exc: BaseException) -> Any:
    """The JSON-RPC error code of an mcp ``MCPError`` (2.x) / ``McpError`` (1.x)."""
    return getattr(getattr(exc, "error", None), "code", None)


def _kinds(exc: BaseException) -> str:
    return " ".join(k.__name__ for k in type(exc).__mro__)


def _is_timeout(exc: BaseException) -> bool:
    # asyncio.wait_for's (builtin TimeoutError from 3.11), httpx's *Timeout, the SDKs' codes.
    return _code(exc) in _TIMEOUT_CODES or "Timeout" in _kinds(exc)


def _is_closed(exc: BaseException) -> bool:
    # anyio's ClosedResourceError / BrokenResourceError / EndOfStream, a broken pipe.
    names = _kinds(exc)
    return _code(exc) == _CLOSED_CODE or any(
        n in names for n in ("ClosedResource", "BrokenResource", "EndOfStream", "BrokenPipe")
    )


def _http_status(exc: BaseException) -> int | None:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _start_problem(
    cause: BaseException, *, command: bool
) -> tuple[type[errors.ZerdaError], str, bool]:
    """(error class, what happened, retryable) for a start that failed with ``cause``."""
    said = f"{type(cause).__name__}: {cause}".rstrip(": ")
    if _is_timeout(cause):
        return errors.TimeoutError, "timed out", True
    if _is_closed(cause):
        what = (
            "closed the connection before the session started: it exited, or is not an MCP server"
        )
        return errors.ConnectionError, what, False
    if _code(cause) is not None:  # the server (or what answers at the URL) said no
        hint = "" if command else ": is this the server's MCP endpoint?"
        cls = errors.NotFoundError if _code(cause) in _NOT_FOUND_CODES else errors.UnknownError
        return cls, f"refused to start the session ({said}){hint}", False
    status = _http_status(cause)
    if status is not None:
        what = f"answered HTTP {status} ({said}): is this the server's MCP endpoint?"
        return errors.error_class_for_status(status), what, errors.is_retryable_status(status)
    if command and isinstance(cause, OSError):
        return errors.ConnectionError, f"could not be started: {said}", False
    if isinstance(cause, OSError) or "ConnectError" in _kinds(cause):
        return errors.ConnectionError, f"could not be reached: {said}", True
    return errors.UnknownError, f"failed to start: {said}", False


class _Secrets:
    """What an MCP error must not show: header values, ``env`` values, the URL's userinfo
    and query values."""

    def __init__(
        self, url: str | None, headers: dict[str, str] | None, env: dict[str, str] | None
    ) -> None:
        values = [*(headers or {}).values(), *(env or {}).values(), *_url_secrets(url)]
        words = [w for v in values for w in str(v).split()]  # "Bearer <token>": the token too
        found = {v for v in [*map(str, values), *words] if len(v) >= 6}
        self._values = sorted(found, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, "<redacted>")
        return text

    def clean(self, exc: BaseException) -> bool:
        """Whether ``exc`` and its chain show none of the secrets (then it may be a cause)."""
        shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return not any(value in shown for value in self._values)

    def chained(self, error: errors.ZerdaError, cause: BaseException) -> errors.ZerdaError:
        """``error`` caused by ``cause`` when that shows no secret; no context either way."""
        if self.clean(cause):
            error.__cause__ = cause
        error.__suppress_context__ = True
        return error


def _url_secrets(url: str | None) -> list[str]:
    if not url:
        return []
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    query = [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
    return [x for x in (parts.username, parts.password, *query) if x]


# --- arguments ------------------------------------------------------------------------------


def _check_timeout(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"MCPTools: timeout must be a number of seconds or None, not {timeout!r}")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"MCPTools: timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def _check_errlog(errlog: Any) -> IO[str] | None:
    if errlog is not None and not callable(getattr(errlog, "write", None)):
        raise TypeError(
            "MCPTools: errlog must be a text stream with write() (a file, io.StringIO, "
            f"sys.stderr), not {type(errlog).__name__}"
        )
    return errlog  # type: ignore[no-any-return]
