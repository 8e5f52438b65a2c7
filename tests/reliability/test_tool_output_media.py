"""Issue 34 item 7: a tool result a provider cannot take does not end ``run()``. An MCP tool
returning an SVG, a binary resource or an image whose data is not base64 used to make the
next request refused before sending (or by the provider) on OpenAI, Anthropic and Bedrock;
now the part becomes text the model can read (the SVG's XML) or a note naming its media type
and size, and the loop goes on to the next turn. The conversion is
``zerda.llm._tool_output.sendable_parts``, provider-neutral and pure."""

from __future__ import annotations

import base64
import copy
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm._tool_output import sendable_parts
from zerda.testing import MockLLMServer

SERVER = [sys.executable, str(Path(__file__).parents[1] / "llm" / "mcp_server.py"), "--media"]
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4"/></svg>'
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
ACCEPTED = "models take PNG, JPEG, GIF and WebP images and PDF documents from tools"
CALL_ID = {"openai": "call_1", "anthropic": "toolu_1", "bedrock": "tooluse_1"}

# What each tool's result becomes in the transcript (and is sent as).
EXPECTED = {
    "svg_chart": SVG,
    "binary_resource": f"[document (application/octet-stream, 1,024 bytes) not sent: {ACCEPTED}]",
    "bad_image": "[image (image/png) not sent: its data is not base64]",
    "png_image": [{"type": "image", "data": PNG_B64, "media_type": "image/png"}],
}


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


# --- the converter ---------------------------------------------------------------------------


def test_sendable_parts_keeps_what_every_provider_takes_and_notes_the_rest() -> None:
    pdf = b64(b"%PDF-1.7\n" + b"x" * 40)
    gif = b64(b"GIF89a" + b"\x00" * 30)
    content = [
        {"type": "text", "text": "Here:"},
        {"type": "image", "data": PNG_B64, "media_type": "image/png"},
        {"type": "document", "data": pdf, "media_type": "application/pdf", "name": "a.pdf"},
        {"type": "image", "data": gif, "media_type": "image/png"},  # mislabelled: its bytes win
        {"type": "image", "data": b64(SVG.encode()), "media_type": "image/svg+xml"},
        {"type": "document", "data": b64(b"a,b\n1,2\n"), "media_type": "text/csv"},
        {"type": "image", "data": b64(b"BM" + b"\x00" * 60), "media_type": "image/bmp"},
        {
            "type": "image",
            "data": b64(b"not an image at all, 40 bytes long.."),
            "media_type": "image/png",
        },
        {"type": "image", "data": "%%% not base64 %%%", "media_type": "image/jpeg"},
        {"type": "audio", "data": b64(b"RIFF\x00\x00\x00\x00WAVEfmt "), "media_type": "audio/wav"},
        {"type": "document", "data": "", "media_type": "application/pdf"},
        {"type": "image", "url": "https://example.com/a.png"},
        {"type": "cache_point"},
    ]
    before = copy.deepcopy(content)
    assert sendable_parts(content) == [
        {"type": "text", "text": "Here:"},
        {"type": "image", "data": PNG_B64, "media_type": "image/png"},
        {"type": "document", "data": pdf, "media_type": "application/pdf", "name": "a.pdf"},
        {"type": "image", "data": gif, "media_type": "image/gif"},
        {"type": "text", "text": SVG},
        {"type": "text", "text": "a,b\n1,2\n"},
        {"type": "text", "text": f"[image (image/bmp, 62 bytes) not sent: {ACCEPTED}]"},
        {
            "type": "text",
            "text": "[image (image/png, 36 bytes) not sent: its bytes are not a PNG file]",
        },
        {"type": "text", "text": "[image (image/jpeg) not sent: its data is not base64]"},
        {"type": "text", "text": f"[audio (audio/wav, 16 bytes) not sent: {ACCEPTED}]"},
        {"type": "text", "text": "[document (application/pdf) not sent: its data is empty]"},
        {
            "type": "text",
            "text": "[image at https://example.com/a.png not sent: only inline data is sent "
            "to the model]",
        },
        {"type": "cache_point"},
    ]
    assert content == before  # the caller's parts are never changed


def test_sendable_parts_repairs_base64_that_is_only_wrapped_or_url_safe() -> None:
    raw = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
    wrapped = "\n".join(b64(raw)[i : i + 76] for i in range(0, len(b64(raw)), 76))
    url_safe = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    for data in (wrapped, url_safe, raw):
        [part] = sendable_parts([{"type": "image", "data": data, "media_type": "image/png"}])
        assert part == {"type": "image", "data": b64(raw), "media_type": "image/png"}


@pytest.mark.parametrize("content", ["text", {"a": 1}, [1, 2], [{"type": "x"}], [], None])
def test_sendable_parts_leaves_content_that_is_not_parts_alone(content: Any) -> None:
    assert sendable_parts(content) == content


# --- the loop goes on ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tools() -> Iterator[list[Any]]:
    pytest.importorskip("mcp")
    from zerda.llm.mcp import MCPTools

    with MCPTools(SERVER) as opened:
        yield opened


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as mock:
        yield mock


@pytest.mark.parametrize("provider", ["openai", "anthropic", "bedrock"])
@pytest.mark.parametrize("tool", list(EXPECTED))
def test_run_goes_on_after_a_tool_result_the_provider_cannot_take(
    server: MockLLMServer, tools: list[Any], provider: str, tool: str
) -> None:
    server.reset()
    server.enqueue(provider, tool_calls=[{"id": CALL_ID[provider], "name": tool, "arguments": {}}])
    server.enqueue(provider, text="Done.")
    llm = create_interface(provider, model="m", max_retries=0, **server.client_options(provider))
    result = llm.run("Show me", tools=tools)
    assert result.get("error") is None, result.get("error")
    assert result["content"] == "Done."
    assert result["messages"][2] == {
        "role": "tool",
        "tool_call_id": CALL_ID[provider],
        "name": tool,
        "content": EXPECTED[tool],
        "is_error": False,
    }
    assert len(server.requests_for(provider)) == 2  # the next turn was sent
    sent = str(server.requests_for(provider)[1].body)
    expected = EXPECTED[tool]
    assert (PNG_B64 if isinstance(expected, list) else expected) in sent
