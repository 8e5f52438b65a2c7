"""zerda.llm.mcp: the tools of a real MCP server process (tests/llm/mcp_server.py, built with
the mcp SDK), called by the model through MockLLMServer, executed by that process."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from pydantic import BaseModel  # noqa: E402 (a dependency of the mcp SDK)

from zerda.llm import ZerdaError, create_interface  # noqa: E402
from zerda.llm.mcp import MCPTools, _map_content, _Snake  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402

SERVER = [sys.executable, str(Path(__file__).with_name("mcp_server.py"))]
CALL_ID = {"openai": "call_1", "anthropic": "toolu_1"}
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
    "required": ["a", "b"],
    "title": "addArguments",
}


@pytest.fixture
def mock() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


# One session per module for the tests of what a call sends and gets (a server process
# starts in about a second); the tests of the process's lifetime open their own.
@pytest.fixture(scope="module")
def session() -> Iterator[MCPTools]:
    with MCPTools(SERVER) as tools:
        yield tools


@pytest.fixture(scope="module")
def dotted() -> Iterator[MCPTools]:
    with MCPTools([*SERVER, "--dotted"]) as tools:
        yield tools


def llm_for(server: MockLLMServer, provider: str) -> Any:
    return create_interface(provider, model="m", max_retries=0, **server.client_options(provider))


def queue_call(server: MockLLMServer, provider: str, name: str, **arguments: Any) -> None:
    call = {"id": CALL_ID[provider], "name": name, "arguments": arguments}
    server.enqueue(provider, tool_calls=[call])
    server.enqueue(provider, text="Done.")


def sent_tool_result(server: MockLLMServer, provider: str) -> Any:
    """The tool result as the SDK sent it, in the second request."""
    return server.requests_for(provider)[1].body["messages"][-1]


def expected_tool_result(provider: str, content: str, is_error: bool = False) -> Any:
    if provider == "openai":
        return {"role": "tool", "tool_call_id": "call_1", "content": content}
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}
    return {"role": "user", "content": [{**block, "is_error": True} if is_error else block]}


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_run_executes_the_tool_in_the_server_process(mock: MockLLMServer, provider: str) -> None:
    queue_call(mock, provider, "add", a=2, b=3)
    with MCPTools(SERVER) as tools:
        pid = next(t for t in tools if t.name == "server_pid").call({}).content
        result = llm_for(mock, provider).run("2 + 3?", tools=tools)
    assert not is_running(int(pid))
    assert result["content"] == "Done."
    assert result["messages"][2] == {
        "role": "tool",
        "tool_call_id": CALL_ID[provider],
        "name": "add",
        "content": "5",
        "is_error": False,
    }
    assert sent_tool_result(mock, provider) == expected_tool_result(provider, "5")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_run_async_executes_the_tool_in_the_server_process(
    mock: MockLLMServer, provider: str
) -> None:
    queue_call(mock, provider, "add", a=40, b=2)
    async with MCPTools(SERVER) as tools:
        pid = (await tools[1].call_async({})).content
        result = await llm_for(mock, provider).run_async("40 + 2?", tools=tools)
    assert not is_running(int(pid))
    assert result["content"] == "Done."
    assert sent_tool_result(mock, provider) == expected_tool_result(provider, "42")


def test_names_descriptions_and_schemas_pass_through(
    mock: MockLLMServer, session: MCPTools
) -> None:
    mock.enqueue("openai", text="Hi.")
    assert [t.name for t in session] == ["add", "server_pid", "fail"]
    llm_for(mock, "openai").generate("Hi", tools=session)
    assert mock.last_request("openai").body["tools"][0] == {
        "type": "function",
        "function": {"name": "add", "description": "Adds two integers.", "parameters": ADD_SCHEMA},
    }


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_tool_error_from_the_server_is_an_is_error_result(
    mock: MockLLMServer, session: MCPTools, provider: str
) -> None:
    queue_call(mock, provider, "fail", reason="no")
    result = llm_for(mock, provider).run("Go", tools=session)
    text = "Error executing tool fail: refused: no"
    assert result["messages"][2]["content"] == text
    assert result["messages"][2]["is_error"] is True
    assert sent_tool_result(mock, provider) == expected_tool_result(provider, text, is_error=True)


def test_arguments_the_server_refuses_come_back_as_is_error(
    mock: MockLLMServer, session: MCPTools
) -> None:
    queue_call(mock, "openai", "add", a="two", b=3)
    result = llm_for(mock, "openai").run("Go", tools=session)
    assert result["messages"][2]["is_error"] is True
    assert result["messages"][2]["content"].startswith(
        "Error executing tool add: 1 validation error for addArguments\na\n"
    )


@pytest.mark.parametrize(("provider", "sent"), [("openai", "math_mul"), ("anthropic", "math_mul")])
def test_a_dotted_name_is_sent_mapped_and_the_call_comes_back_under_it(
    mock: MockLLMServer, dotted: MCPTools, provider: str, sent: str
) -> None:
    queue_call(mock, provider, sent, a=2, b=3)
    assert dotted[-1].name == "math.mul"  # the server's own name
    result = llm_for(mock, provider).run("2 * 3?", tools=dotted)
    first, second = (r.body for r in mock.requests_for(provider))
    names = [t["function"]["name"] if "function" in t else t["name"] for t in first["tools"]]
    assert names == ["add", "server_pid", "fail", sent]
    assert result["messages"][1]["tool_calls"] == [
        {"id": CALL_ID[provider], "name": "math.mul", "arguments": {"a": 2, "b": 3}}
    ]
    assert result["messages"][2]["name"] == "math.mul"
    assert sent_tool_result(mock, provider) == expected_tool_result(provider, "6")
    calls = second["messages"][-2]
    sent_calls = calls.get("tool_calls") or [b for b in calls["content"] if b["type"] == "tool_use"]
    assert [c["function"]["name"] if "function" in c else c["name"] for c in sent_calls] == [sent]


def test_a_dotted_name_goes_to_gemini_unchanged(mock: MockLLMServer, dotted: MCPTools) -> None:
    mock.enqueue("gemini", tool_calls=[{"name": "math.mul", "arguments": {"a": 2, "b": 3}}])
    mock.enqueue("gemini", text="Done.")
    result = llm_for(mock, "gemini").run("2 * 3?", tools=dotted)
    declared = mock.requests_for("gemini")[0].body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["add", "server_pid", "fail", "math.mul"]
    assert result["messages"][1]["tool_calls"][0]["name"] == "math.mul"
    assert result["messages"][2]["content"] == "6"


def test_sync_tools_work_from_run_async(mock: MockLLMServer, session: MCPTools) -> None:
    import asyncio

    queue_call(mock, "openai", "add", a=1, b=1)
    # The session (entered with ``with``) runs its loop in its own thread.
    result = asyncio.run(llm_for(mock, "openai").run_async("1 + 1?", tools=session))
    assert result["content"] == "Done."
    assert sent_tool_result(mock, "openai") == expected_tool_result("openai", "2")


def test_tools_called_after_the_block_say_the_session_is_closed() -> None:
    with MCPTools(SERVER) as tools:
        pass
    with pytest.raises(RuntimeError, match="the MCP session is closed"):
        tools[0].call({"a": 1, "b": 2})


@pytest.mark.parametrize("server", ["server.py", "ftp://x", [], ["python", 3], None])
def test_a_server_that_is_neither_a_command_nor_a_url_is_refused(server: Any) -> None:
    with pytest.raises(ValueError, match="MCPTools: "):
        MCPTools(server)


def test_the_repr_hides_credentials_in_the_url() -> None:
    assert repr(MCPTools("https://user:secret@example.com/mcp")) == (
        "MCPTools(url='https://example.com/mcp')"
    )


# --- streamable HTTP -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    process = subprocess.Popen([*SERVER, "http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "PORT <n>", printed once the socket listens
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        process.wait()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_streamable_http(mock: MockLLMServer, http_url: str, provider: str) -> None:
    queue_call(mock, provider, "add", a=20, b=22)
    with MCPTools(http_url) as tools:
        result = llm_for(mock, provider).run("20 + 22?", tools=tools)
    assert result["content"] == "Done."
    assert sent_tool_result(mock, provider) == expected_tool_result(provider, "42")


async def test_streamable_http_async_with_headers(mock: MockLLMServer, http_url: str) -> None:
    queue_call(mock, "openai", "add", a=1, b=2)
    async with MCPTools(http_url, headers={"X-Trace": "1"}) as tools:
        await llm_for(mock, "openai").run_async("1 + 2?", tools=tools)
    assert sent_tool_result(mock, "openai") == expected_tool_result("openai", "3")


def test_a_command_that_cannot_start_fails_on_entering() -> None:
    with pytest.raises(ZerdaError) as caught, MCPTools(["/nonexistent/mcp-server"]):
        pass
    assert caught.value.message == (
        "MCP server /nonexistent/mcp-server could not be started: FileNotFoundError: "
        "[Errno 2] No such file or directory: '/nonexistent/mcp-server'"
    )
    assert isinstance(caught.value.__cause__, FileNotFoundError)


# --- mcp 1.x results, read by their 2.x names -----------------------------------------------
# Models shaped as mcp 1.x's types (camelCase fields), so this runs whichever SDK is installed.


class ImageV1(BaseModel):
    type: str = "image"
    data: str
    mimeType: str  # noqa: N815 (mcp 1.x's name)


class BlobV1(BaseModel):
    uri: str
    blob: str
    mimeType: str | None  # noqa: N815


class ResourceV1(BaseModel):
    type: str = "resource"
    resource: BlobV1


class ResultV1(BaseModel):
    content: list[ImageV1 | ResourceV1]
    isError: bool  # noqa: N815


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 24).decode()
PDF = base64.b64encode(b"%PDF-1.7\n" + b"\x00" * 23).decode()


def test_an_mcp_1_result_is_read_by_its_2x_names() -> None:
    blob = BlobV1(uri="file:///a.pdf", blob=PDF, mimeType="application/pdf")
    image = ImageV1(data=PNG, mimeType="image/png")
    result = _Snake(ResultV1(content=[image, ResourceV1(resource=blob)], isError=True))
    assert result.is_error is True
    assert result.structured_content is None  # a field mcp 1.9 lacks reads as unset
    assert _map_content(result) == [
        {"type": "image", "data": PNG, "media_type": "image/png"},
        {"type": "document", "data": PDF, "media_type": "application/pdf"},
    ]


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(ImportError, match=r"\[mcp\]"), MCPTools(SERVER):
        pass
