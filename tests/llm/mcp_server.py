"""A small MCP server for the tests and the docs, built with the mcp SDK's MCPServer
(FastMCP in mcp 1.x). ``python mcp_server.py`` serves over stdio;
``python mcp_server.py http`` serves streamable HTTP on 127.0.0.1 on a free port and prints
``PORT <n>`` on stdout once it listens. ``--dotted`` adds a tool named ``math.mul``;
``--media`` adds tools whose results a provider cannot take as they are (an SVG image, a
binary resource, an image whose data is not base64) and one that returns a valid PNG;
``--slow`` adds ``sleep(seconds)``, which answers after that long; ``--say TEXT`` writes
TEXT on stderr at start. ``--legacy`` serves, without the SDK, as an mcp 1.x server does
with an mcp 2.x client: the ``server/discover`` probe gets an error and a validation dump on
stderr, then ``initialize``, ``tools/list`` and ``tools/call`` (one tool, ``add``) work.
"""

# No `from __future__ import annotations`: mcp 1.x's FastMCP (before 1.10) reads the tools'
# annotations as classes, and fails on strings.
import base64
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


# --- --media: content blocks, built from their wire form (mcp 1.x and 2.x name the Python
# fields differently, the JSON the same) ------------------------------------------------------

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4"/></svg>'
BINARY = bytes(range(256)) * 4
# A 1x1 PNG (the smallest valid file: signature, IHDR, IDAT, IEND).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _image(data: str, mime_type: str):  # type: ignore[no-untyped-def]
    from mcp import types

    return types.ImageContent.model_validate({"type": "image", "data": data, "mimeType": mime_type})


def svg_chart():  # type: ignore[no-untyped-def]
    """A chart, as an SVG image."""
    return [_image(_b64(SVG.encode()), "image/svg+xml")]


def binary_resource():  # type: ignore[no-untyped-def]
    """A binary file, as an embedded resource."""
    from mcp import types

    resource = {
        "uri": "file:///data.bin",
        "blob": _b64(BINARY),
        "mimeType": "application/octet-stream",
    }
    return [types.EmbeddedResource.model_validate({"type": "resource", "resource": resource})]


def bad_image():  # type: ignore[no-untyped-def]
    """An image whose data is not base64."""
    return [_image("this is not base64!", "image/png")]


def png_image():  # type: ignore[no-untyped-def]
    """A valid PNG image."""
    return [_image(_b64(PNG), "image/png")]


async def sleep(seconds: float) -> str:
    """Answers after ``seconds`` (async: mcp 1.x runs a sync tool on the server's event loop,
    which would hold every other request meanwhile)."""
    import anyio

    await anyio.sleep(seconds)
    return "awake"


# What an mcp 1.x server (1.10 here; 1.30 prints 31 errors) logs on stderr for the probe.
LEGACY_DUMP = """WARNING:root:Failed to validate request: 3 validation errors for ClientRequest
PingRequest.method
  Input should be 'ping' [type=literal_error, input_value='server/discover', input_type=str]
    For further information visit https://errors.pydantic.dev/2.11/v/literal_error
InitializeRequest.method
  Input should be 'initialize' [type=literal_error, input_value='server/discover', input_type=str]
    For further information visit https://errors.pydantic.dev/2.11/v/literal_error
InitializeRequest.params.protocolVersion
  Field required [type=missing, input_value={'_meta': {'io.modelconte...Capabilities': {}}}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.11/v/missing
"""
LEGACY_ADD = {
    "name": "add",
    "description": "Adds two integers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


def legacy_reply(message: dict) -> dict:  # type: ignore[type-arg]
    method, params = message.get("method"), message.get("params") or {}
    if method == "server/discover":
        sys.stderr.write(LEGACY_DUMP)
        sys.stderr.flush()
        return {"error": {"code": -32602, "message": "Invalid request parameters", "data": ""}}
    if method == "initialize":
        info = {"name": "legacy", "version": "1.0"}
        version = params.get("protocolVersion")
        return {
            "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": info,
            }
        }
    if method == "tools/list":
        return {"result": {"tools": [LEGACY_ADD]}}
    if method == "tools/call":
        total = params["arguments"]["a"] + params["arguments"]["b"]
        return {"result": {"content": [{"type": "text", "text": str(total)}], "isError": False}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


def serve_legacy() -> None:
    import json

    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message and "method" in message:  # a request (not a notification)
            reply = {"jsonrpc": "2.0", "id": message["id"], **legacy_reply(message)}
            print(json.dumps(reply), flush=True)


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
    if "--say" in sys.argv:
        print(sys.argv[sys.argv.index("--say") + 1], file=sys.stderr, flush=True)
    if "--dotted" in sys.argv:  # a name most providers refuse, as many MCP servers use
        server.add_tool(mul, name="math.mul", description="Multiplies two integers.")
    if "--media" in sys.argv:
        for tool in (svg_chart, binary_resource, bad_image, png_image):
            server.add_tool(tool)
    if "--slow" in sys.argv:
        server.add_tool(sleep)
    if "--legacy" in sys.argv:
        serve_legacy()
    elif "http" in sys.argv:
        serve_http()
    else:
        server.run()
