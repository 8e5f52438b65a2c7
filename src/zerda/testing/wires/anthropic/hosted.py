"""A script's server tool calls and citations (DESIGN §18) as the Messages API sends them.

Each call is a ``server_tool_use`` block (``mcp_tool_use`` for an MCP server's tool) and its
``*_tool_result`` block, made so that Zerda reads back the script's output: a web search's
results from ``Title — URL`` lines, a web fetch's page, code execution's stdout, an MCP tool's
text, the tools a tool search found (shapes: the anthropic SDK's ``ContentBlock`` and
``BetaContentBlock`` unions, recorded anthropic/pydantic-ai__test_anthropic.test_anthropic_*_tool_stream
exchanges). Citations cut the text into text blocks, each cited span a block of its own with
its ``citations``: a ``web_search_result_location`` for a URL, a ``char_location`` without
(https://docs.claude.com/en/docs/build-with-claude/citations). Usage counts the searches and
fetches in ``server_tool_use``. Overlapping citation spans are not rendered exactly: each
citation sits on the block that starts where it starts.
"""

from __future__ import annotations

import base64
from typing import Any

from zerda.testing._ids import message_id
from zerda.testing._script import RecordedRequest, Script

# Opaque base64, as the API's encrypted_content / encrypted_index are.
ENCRYPTED = base64.b64encode(b"Zerda mock encrypted search result").decode()

# The unified type's native tool name when the script names none.
_DEFAULT_NAMES = {
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "code_execution": "code_execution",
    "tool_search": "tool_search_tool_regex",
    "file_search": "file_search",
    "other": "advisor",
}


def server_blocks(script: Script, req: RecordedRequest) -> list[dict[str, Any]]:
    """Each scripted call as its use block and its result block, in order."""
    blocks: list[dict[str, Any]] = []
    for call in script.server_tool_calls:
        blocks.extend(_call_blocks(call, req))
    return blocks


def _call_blocks(call: dict[str, Any], req: RecordedRequest) -> list[dict[str, Any]]:
    kind = call["type"]
    name = call.get("name") or _DEFAULT_NAMES.get(kind, kind)
    output = call.get("output")
    if kind == "mcp":
        use_id = call.get("id") or message_id("mcptoolu_01")
        use = {"type": "mcp_tool_use", "id": use_id, "name": name, "input": call.get("input") or {}}
        use["server_name"] = _mcp_server(req)
        text = [{"type": "text", "text": output}] if output else []
        result = {"type": "mcp_tool_result", "tool_use_id": use_id, "is_error": False}
        return [use, {**result, "content": text}]
    use_id = call.get("id") or message_id("srvtoolu_01")
    use = {"type": "server_tool_use", "id": use_id, "name": name, "input": call.get("input") or {}}
    result_type, content = _result(kind, name, output)
    return [use, {"type": result_type, "tool_use_id": use_id, "content": content}]


def _mcp_server(req: RecordedRequest) -> str:
    """The name of the request's first MCP server (the tool's server_name)."""
    body = req.body if isinstance(req.body, dict) else {}
    servers = body.get("mcp_servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    return str(first.get("name")) if isinstance(first, dict) else "mcp"


def _result(kind: str, name: str, output: str | None) -> tuple[str, Any]:
    """The result block's type and content for the call's kind and native name."""
    if kind == "web_search":
        return "web_search_tool_result", [_search_result(line) for line in _lines(output)]
    if kind == "web_fetch":
        return "web_fetch_tool_result", _fetched(output)
    if kind == "tool_search":
        refs = [{"type": "tool_reference", "tool_name": line} for line in _lines(output)]
        return "tool_search_tool_result", {
            "type": "tool_search_tool_search_result",
            "tool_references": refs,
        }
    if kind == "code_execution" and name == "text_editor_code_execution":
        view = {"type": "text_editor_code_execution_view_result", "file_type": "text"}
        return f"{name}_tool_result", {**view, "content": output or ""}
    if kind == "code_execution":
        prefix = "bash_code_execution" if name == "bash_code_execution" else "code_execution"
        ran = {"stdout": output or "", "stderr": "", "return_code": 0, "content": []}
        return f"{prefix}_tool_result", {"type": f"{prefix}_result", **ran}
    # advisor and any other server tool: a result whose content carries text
    # (BetaAdvisorResultBlock's shape).
    return f"{name}_tool_result", {"type": f"{name}_result", "text": output or ""}


def _lines(output: str | None) -> list[str]:
    return [line for line in (output or "").split("\n") if line]


def _search_result(line: str) -> dict[str, Any]:
    """One ``Title — URL`` line as a ``web_search_result``."""
    title, _, url = line.rpartition(" — ")
    return {
        "type": "web_search_result",
        "title": title or line,
        "url": url if title else "",
        "encrypted_content": ENCRYPTED,
        "page_age": None,
    }


def _fetched(output: str | None) -> dict[str, Any]:
    """A ``web_fetch_result`` whose page title and URL read as the ``Title — URL`` output."""
    title, _, url = (output or "").rpartition(" — ")
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "mock page"},
        "title": title or None,
    }
    return {
        "type": "web_fetch_result",
        "url": url if title else (output or ""),
        "retrieved_at": "2026-01-01T00:00:00Z",
        "content": document,
    }


def text_blocks(script: Script) -> list[dict[str, Any]]:
    """The script's text as text blocks: one per cited span, with its citations, and the
    text between them."""
    text = script.text or ""
    if not script.citations:
        return [{"type": "text", "text": text}] if text else []
    spans = {b for c in script.citations for b in (c["start"], c["end"])}
    cuts = sorted({0, len(text)} | spans)
    blocks = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        cited = [_native_citation(c) for c in script.citations if c["start"] == start]
        block: dict[str, Any] = {"type": "text", "text": text[start:end]}
        if cited:
            block["citations"] = cited
        blocks.append(block)
    return blocks


def _native_citation(cited: dict[str, Any]) -> dict[str, Any]:
    """A web search result location for a URL, else a plain-text document's char span."""
    if cited.get("url"):
        return {
            "type": "web_search_result_location",
            "url": cited["url"],
            "title": cited.get("title"),
            "cited_text": cited.get("text") or "",
            "encrypted_index": ENCRYPTED,
        }
    quoted = cited.get("text") or ""
    return {
        "type": "char_location",
        "cited_text": quoted,
        "document_index": 0,
        "document_title": cited.get("title"),
        "start_char_index": 0,
        "end_char_index": len(quoted),
    }


def server_tool_use(script: Script) -> dict[str, int] | None:
    """``usage.server_tool_use``: the scripted web searches and fetches (None: no call)."""
    if not script.server_tool_calls:
        return None
    kinds = [c["type"] for c in script.server_tool_calls]
    return {
        "web_search_requests": kinds.count("web_search"),
        "web_fetch_requests": kinds.count("web_fetch"),
    }
