"""A small MCP server for the tests and the docs, built with the mcp SDK's MCPServer
(FastMCP in mcp 1.x). ``python mcp_server.py`` serves over stdio;
``python mcp_server.py http`` serves streamable HTTP on 127.0.0.1 on a free port and prints
``PORT <n>`` on stdout once it listens. ``--dotted`` adds a tool named ``math.mul``.
"""

# No `from __future__ import annotations`: mcp 1.x's FastMCP (before 1.10) reads the tools'
# annotations as classes, and fails on strings.
import os
import socket
import sys

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    MCP_1 = False
except ImportError:  # mcp 1.x names it FastMCP
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

    MCP_1 = True

server = MCPServer("zerda-test", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool(name="server_pid")
def server_pid() -> int:
    """The process id of this server."""
    return os.getpid()


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(f"refused: {reason}")  # the server sends it as isError: true


def mul(a: int, b: int) -> int:
    return a * b


def serve_http() -> None:
    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections wait in the backlog from now on, so PORT means ready
    if MCP_1:  # the host is a setting of the server, 127.0.0.1 by default
        app = server.streamable_http_app()
    else:
        app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if "--dotted" in sys.argv:  # a name most providers refuse, as many MCP servers use
        server.add_tool(mul, name="math.mul", description="Multiplies two integers.")
    if "http" in sys.argv:
        serve_http()
    else:
        server.run()
