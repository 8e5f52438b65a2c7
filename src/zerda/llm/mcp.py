"""Tools from an MCP server (docs/mcp.md), through the official ``mcp`` SDK (``zerda-llm[mcp]``).

``MCPTools(server)`` connects to a server — a command list started as a subprocess and spoken
to over stdio, or an ``http(s)://`` URL spoken to over streamable HTTP — and, entered with
``with`` or ``async with``, gives the server's tools as a list that ``run`` / ``run_async``
execute through the MCP session. Leaving the block closes the session and ends the server
process.

The session is asyncio code. Entered with ``async with``, it lives on the caller's event loop;
entered with ``with``, on an event loop in a thread of its own, so the sync loop (and any other
event loop) can call the tools. The mcp SDK's task groups must be entered and left by one
task, so one task holds the session from start to end.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

from zerda.llm.base import _running_loop, require_sdk
from zerda.llm.executable import ExecutableTool, ToolOutput

__all__ = ["MCPTool", "MCPTools"]

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
    Authorization header; never shown in a repr). ``timeout``: seconds to wait for each
    answer of the server (default: the SDK's).
    """

    def __init__(
        self,
        server: Sequence[str] | str,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> None:
        self._target = _check_server(server)
        self._env = env
        self._cwd = cwd
        self._headers = headers
        self._timeout = timeout
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stack: AsyncExitStack | None = None
        self._thread: threading.Thread | None = None
        self._closing: asyncio.Event | None = None
        self._close_error: BaseException | None = None

    def __repr__(self) -> str:
        kind = "url" if isinstance(self._target, str) else "command"
        shown = _without_userinfo(self._target) if isinstance(self._target, str) else self._target
        return f"MCPTools({kind}={shown!r})"

    def __reduce__(self) -> Any:
        raise TypeError(_CANNOT_TRAVEL.format(what=repr(self)))

    # --- async: the session lives on the caller's loop ----------------------------------

    async def __aenter__(self) -> list[MCPTool]:
        self._check_not_open()
        stack = AsyncExitStack()
        try:
            tools = await self._open(stack)
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self._loop = stack, asyncio.get_running_loop()
        return tools

    async def __aexit__(self, *exc_info: Any) -> None:
        stack, self._stack = self._stack, None
        self._loop = self._client = None
        if stack is not None:
            await stack.aclose()

    # --- sync: the session lives on a loop in its own thread -----------------------------

    def __enter__(self) -> list[MCPTool]:
        self._check_not_open()
        ready: concurrent.futures.Future[list[MCPTool]] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=asyncio.run, args=(self._serve(ready),), name="zerda-mcp", daemon=True
        )
        self._thread.start()
        try:
            return ready.result()
        except BaseException:
            self._thread.join()
            self._thread = None
            raise

    def __exit__(self, exc_type: Any, *exc_info: Any) -> None:
        loop, closing, thread = self._loop, self._closing, self._thread
        if loop is not None and closing is not None:
            loop.call_soon_threadsafe(closing.set)
        if thread is not None:
            thread.join()
        self._thread = self._closing = None
        error, self._close_error = self._close_error, None
        if error is not None and exc_type is None:  # never hide the block's own exception
            raise error

    async def _serve(self, ready: concurrent.futures.Future[list[MCPTool]]) -> None:
        """The one task that opens the session, holds it until ``__exit__`` and closes it."""
        self._closing = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                tools = await self._open(stack)
                self._loop = asyncio.get_running_loop()
                ready.set_result(tools)
                await self._closing.wait()
                self._loop = self._client = None
        except BaseException as exc:  # reported by __enter__, or by __exit__ when closing
            if not ready.done():
                ready.set_exception(exc)
            else:
                self._close_error = exc

    # --- the session -----------------------------------------------------------------------

    async def _open(self, stack: AsyncExitStack) -> list[MCPTool]:
        mcp = require_sdk("mcp", "mcp", "mcp")
        if hasattr(mcp, "Client"):  # mcp 2.x
            transport = await self._transport(mcp, stack)
            client = mcp.Client(transport, read_timeout_seconds=self._timeout)
            self._client = await stack.enter_async_context(client)
        else:  # mcp 1.x has no Client: a ClientSession over a transport client
            self._client = _Session1(await self._session_1(mcp, stack))
        return [_map_tool(self, t) for t in await self._list_tools()]

    async def _transport(self, mcp: Any, stack: AsyncExitStack) -> Any:
        """What ``mcp.Client`` connects to: stdio parameters, a URL, or, with headers, an
        HTTP transport over a client that sends them."""
        if not isinstance(self._target, str):
            command, *args = self._target
            return mcp.StdioServerParameters(
                command=command, args=args, env=self._env, cwd=self._cwd
            )
        if not self._headers:
            return self._target
        import httpx2  # the mcp SDK's HTTP client
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(httpx2.AsyncClient(headers=self._headers))
        return streamable_http_client(self._target, http_client=http)

    async def _session_1(self, mcp: Any, stack: AsyncExitStack) -> Any:
        """mcp 1.x: the initialized ``ClientSession`` over stdio or streamable HTTP."""
        if isinstance(self._target, str):
            transport = await self._http_1(self._target, stack)
        else:
            command, *args = self._target
            parameters = mcp.StdioServerParameters(
                command=command, args=args, env=self._env, cwd=self._cwd
            )
            transport = mcp.stdio_client(parameters)
        read, write, *_ = await stack.enter_async_context(transport)  # HTTP adds a session id
        timeout = None if self._timeout is None else timedelta(seconds=self._timeout)
        session = mcp.ClientSession(read, write, read_timeout_seconds=timeout)
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

    async def _list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def _call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if self._client is None:
            raise RuntimeError(_CLOSED)
        result = await self._client.call_tool(name, arguments)
        return ToolOutput(_map_content(result), bool(result.is_error))

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
        if self._loop is not None or self._thread is not None:
            raise RuntimeError("this MCPTools is already open; create one per `with` block")


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


def _without_userinfo(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    return f"{scheme}{sep}{authority.rpartition('@')[2]}{slash}{path}"


def _map_tool(owner: MCPTools, tool: Any) -> MCPTool:
    """Name, description and input schema exactly as the server gave them."""
    return MCPTool(owner, tool.name, tool.description or "", dict(tool.input_schema))


def _map_content(result: Any) -> Any:
    """A CallToolResult's content as tool message content: the text when the server sent
    one text block (the usual case), else a list of content parts; the structured content
    when there are no blocks at all."""
    parts = [_map_block(block) for block in result.content]
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
