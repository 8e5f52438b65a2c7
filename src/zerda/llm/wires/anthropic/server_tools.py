"""Anthropic's server tools (DESIGN §18): the request's hosted tools as Messages API tools,
and the answer's server-tool blocks as Zerda's ``server_tool_calls`` and ``citations``.

Request (https://docs.claude.com/en/docs/agents-and-tools/tool-use/server-tools): web search
(``web_search_20250305``, https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-search-tool),
web fetch (``web_fetch_20250910``, https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-fetch-tool)
and code execution (``code_execution_20250825``,
https://docs.claude.com/en/docs/agents-and-tools/tool-use/code-execution-tool) are ``tools``
entries with a fixed ``name``; the version is the row's trait (``Traits.hosted[kind].native``).
An MCP server the API calls is an entry of the top-level ``mcp_servers`` with the
``mcp-client-*`` beta (https://docs.claude.com/en/docs/agents-and-tools/mcp-connector).

Response (the anthropic SDK's ``ContentBlock`` / ``BetaContentBlock`` unions): a
``server_tool_use`` (or ``mcp_tool_use``) block, then the ``*_tool_result`` block carrying its
``tool_use_id``: paired into one server call, listed in the order the uses came (a stream
emits each when its result arrives). Any other block Zerda does not know is
a call of type ``other``, never dropped. Text blocks' ``citations`` cite the block they sit on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from zerda.llm._server_tools import citation, server_call
from zerda.llm._traits import Hosted
from zerda.llm.errors import InvalidRequestError
from zerda.llm.tools import _get

# --- request ----------------------------------------------------------------------------

# The fixed tool names the API requires beside each type ("tools.0.web_search_20250305.name:
# Input should be 'web_search'", quoted in https://github.com/router-for-me/CLIProxyAPI/issues/1094).
_TOOL_NAMES = {
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "code_execution": "code_execution",
}
_DOMAIN_KEYS = ("allowed_domains", "blocked_domains")
# The beta of the MCP connector's first version took the allowed tools in the server's
# ``tool_configuration``; later ones take an ``mcp_toolset`` tools entry (the page above).
MCP_FIRST_BETA = "mcp-client-2025-04-04"


def map_hosted(
    hosted: Iterable[dict[str, Any]], traits: Mapping[str, Hosted], beta_kinds: frozenset[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The request's hosted tools (checked by the core) as (tools entries, ``mcp_servers``
    entries, ``anthropic-beta`` values). ``beta_kinds``: the unified types this platform
    takes only with their beta header (derived from the version, ``web_fetch_20250910`` ->
    ``web-fetch-2025-09-10``). Pure: the caller's dicts are not changed."""
    tools: list[dict[str, Any]] = []
    servers: list[dict[str, Any]] = []
    betas: list[str] = []
    for tool in hosted:
        kind = tool["type"]
        if kind == "native":  # passed through unchanged (DESIGN §18)
            tools.append(dict(tool["tool"]))
            continue
        native = traits[kind].native
        if kind == "mcp":
            server, toolset = _map_mcp(tool, native)
            servers.append(server)
            tools.extend(toolset)
            betas.append(native)
            continue
        tools.append(_map_server_tool(tool, native))
        if kind in beta_kinds:
            betas.append(beta_name(native))
    return tools, servers, list(dict.fromkeys(betas))


def betas_of(
    kinds: Iterable[str], traits: Mapping[str, Hosted], beta_kinds: frozenset[str]
) -> list[str]:
    """The betas of these unified kinds on a row: MCP's connector beta, the others' where
    the platform takes them only with one (``beta_kinds``)."""
    out = []
    for kind in kinds:
        if kind == "mcp" and kind in traits:
            out.append(traits[kind].native)
        elif kind in beta_kinds and kind in traits:
            out.append(beta_name(traits[kind].native))
    return out


# The blocks of a beta server tool, by unified kind (web search is not a beta).
_BETA_BLOCKS = {
    "mcp_tool_use": "mcp",
    "mcp_tool_result": "mcp",
    "web_fetch_tool_result": "web_fetch",
    "code_execution_tool_result": "code_execution",
    "bash_code_execution_tool_result": "code_execution",
    "text_editor_code_execution_tool_result": "code_execution",
}


def replayed_kinds(
    messages: Iterable[dict[str, Any]], replays: Callable[[dict[str, Any]], bool]
) -> list[str]:
    """The beta kinds whose blocks the history's assistant turns send back (``replays``:
    the interface's ``_replays_hosted``), in order, each once."""
    kinds: list[str] = []
    for message in messages:
        if message["role"] != "assistant" or "server_tool_calls" not in message:
            continue
        if not replays(message):
            continue
        for block in message["provider_data"]["anthropic"]["content"]:
            kind = _BETA_BLOCKS.get(str(block.get("type"))) if isinstance(block, dict) else None
            if kind is not None and kind not in kinds:
                kinds.append(kind)
    return kinds


def beta_name(native: str) -> str:
    """The beta header value of a dated tool version: ``web_fetch_20250910`` ->
    ``web-fetch-2025-09-10`` (the docs' pairs of version and beta)."""
    match = re.fullmatch(r"(.+)_(\d{4})(\d{2})(\d{2})", native)
    if match is None:
        return native.replace("_", "-")
    stem, year, month, day = match.groups()
    return f"{stem.replace('_', '-')}-{year}-{month}-{day}"


def _map_server_tool(tool: dict[str, Any], native: str) -> dict[str, Any]:
    """web_search / web_fetch / code_execution: ``{"type": <version>, "name": ...}`` and the
    options the caller set, in the API's names."""
    kind = tool["type"]
    empty = [key for key in _DOMAIN_KEYS if tool.get(key) == []]
    if empty:
        # "Empty list of domains is ambiguous. Provide at least one domain or null."
        # (the API's answer, quoted in https://github.com/CherryHQ/cherry-studio/pull/10374)
        raise InvalidRequestError(
            f"anthropic's {kind}: {empty[0]} must name at least one domain (leave it out for none)"
        )
    if all(tool.get(key) for key in _DOMAIN_KEYS):
        # The API: allowed_domains "Cannot be used alongside blocked_domains" (the SDK's
        # WebSearchTool20250305Param; the web fetch tool's page says the same).
        raise InvalidRequestError(
            f"anthropic's {kind} takes allowed_domains or blocked_domains, not both"
        )
    out: dict[str, Any] = {"type": native, "name": _TOOL_NAMES[kind]}
    for key, value in tool.items():
        if key == "type":
            continue
        if key == "user_location":  # the only location type the API has
            out[key] = {"type": "approximate", **value}
        elif key == "citations":
            out[key] = {"enabled": value}
        else:
            out[key] = list(value) if isinstance(value, list) else value
    return out


def _map_mcp(tool: dict[str, Any], beta: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One MCP server: its ``mcp_servers`` entry (url, name, the bearer token) and, from the
    second connector version on, its ``mcp_toolset`` tools entry; ``allowed_tools`` becomes
    the first version's ``tool_configuration``, or the toolset's tools enabled one by one
    over a disabled default."""
    server: dict[str, Any] = {"type": "url", "url": tool["url"], "name": tool["name"]}
    token = _authorization_token(tool["name"], tool.get("headers") or {})
    if token is not None:
        server["authorization_token"] = token
    allowed = tool.get("allowed_tools")
    if beta == MCP_FIRST_BETA:
        if allowed is not None:
            server["tool_configuration"] = {"enabled": True, "allowed_tools": list(allowed)}
        return server, []
    toolset: dict[str, Any] = {"type": "mcp_toolset", "mcp_server_name": tool["name"]}
    if allowed is not None:
        toolset["default_config"] = {"enabled": False}
        toolset["configs"] = {name: {"enabled": True} for name in allowed}
    return server, [toolset]


def _authorization_token(server: str, headers: Mapping[str, str]) -> str | None:
    """The connector takes one credential, an OAuth bearer token (``authorization_token``):
    an ``Authorization: Bearer <token>`` header becomes it; any other header is refused,
    naming the headers and never their values (they hold credentials)."""
    token = None
    refused = []
    for name, value in headers.items():
        scheme, _, credential = value.strip().partition(" ")
        if name.lower() == "authorization" and scheme.lower() == "bearer" and credential.strip():
            token = credential.strip()
        else:
            refused.append(name if name.lower() != "authorization" else f"{name} (not Bearer)")
    if refused:
        raise InvalidRequestError(
            f"MCP server {server!r}: anthropic's MCP connector sends no header but an OAuth "
            "bearer token ('Authorization: Bearer <token>', its authorization_token); "
            f"refused header(s): {', '.join(refused)}"
        )
    return token


# --- response: blocks -------------------------------------------------------------------

# The blocks every answer may hold; any other is a server tool's (or one Zerda does not know).
STANDARD_BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})
USE_BLOCKS = ("server_tool_use", "mcp_tool_use")
# server_tool_use names (ServerToolUseBlock.name, BetaServerToolUseBlock.name) by unified
# type; code execution 20250825 runs as bash_code_execution and text_editor_code_execution.
_KIND_OF_NAME = {
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "code_execution": "code_execution",
    "bash_code_execution": "code_execution",
    "text_editor_code_execution": "code_execution",
    "tool_search_tool_regex": "tool_search",
    "tool_search_tool_bm25": "tool_search",
}
_RESULT_SUFFIX = "_tool_result"


def has_hosted(blocks: Iterable[Any]) -> bool:
    """Whether an answer's blocks hold one a server tool produced (or one unknown)."""
    return any(is_hosted_block(b) for b in blocks)


def is_hosted_block(block: Any) -> bool:
    """A block with a type that no plain answer has (one without a type is no block)."""
    kind = _get(block, "type")
    return isinstance(kind, str) and kind not in STANDARD_BLOCKS


def native_blocks(blocks: Iterable[Any]) -> list[dict[str, Any]]:
    """The turn's blocks as ``provider_data`` keeps them (what has no type is no block)."""
    return [native_block(b) for b in blocks if isinstance(_get(b, "type"), str)]


def plain(value: Any) -> Any:
    """A block as plain JSON data without null fields: the SDK's models dumped, dicts
    copied (so generate, the fast path and streams keep the same native blocks)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        # A block the SDK's union does not know is built as another model: dumped quietly.
        value = dump(mode="json", exclude_none=True, warnings=False)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def native_block(block: Any) -> dict[str, Any]:
    """One answer block as ``provider_data`` keeps it: text with its citations only when
    it has some, every other block whole."""
    data: dict[str, Any] = plain(block)
    if data.get("type") == "text" and not data.get("citations"):
        data.pop("citations", None)
    return data


def map_server_calls(blocks: Iterable[Any]) -> list[dict[str, Any]]:
    """The answer's server calls in the order they were made (their use blocks'; a result
    whose use came in an earlier turn, or an unknown block, where it stands), each with
    its result's readable output (None while it has none: a paused turn's)."""
    calls: list[dict[str, Any]] = []
    slots: dict[Any, tuple[int, Any]] = {}  # use id -> (its place in calls, its block)
    for block in blocks:
        kind = _get(block, "type")
        if kind in USE_BLOCKS:
            slots[link(block, "id")] = (len(calls), block)
            calls.append(call_of_use(block, None))
        elif is_hosted_block(block):
            slot = slots.pop(link(block, "tool_use_id"), None)
            if slot is None:
                calls.append(call_of_result(block, {}))
            else:
                calls[slot[0]] = call_of_use(slot[1], block)
    return calls


def call_of_result(block: Any, pending: dict[Any, Any]) -> dict[str, Any]:
    """The call a result block completes (its use taken out of ``pending``); a result
    whose use came in an earlier turn, or a block of unknown kind, stands alone."""
    kind = _get(block, "type")
    use = pending.pop(link(block, "tool_use_id"), None)
    if use is not None:
        return call_of_use(use, block)
    if isinstance(kind, str) and kind.endswith(_RESULT_SUFFIX) and _get(block, "tool_use_id"):
        name = "mcp" if kind == "mcp_tool_result" else kind[: -len(_RESULT_SUFFIX)]
        unified = "mcp" if name == "mcp" else _KIND_OF_NAME.get(name, "other")
        return server_call(_get(block, "tool_use_id"), unified, name, {}, readable(block))
    return server_call(None, "other", kind, {}, readable(block))


def link(block: Any, field: str) -> Any:
    """A block's ``id`` / ``tool_use_id`` as the key pairing a use and its result; what is
    not a string pairs with nothing (a fresh object)."""
    value = _get(block, field)
    return value if isinstance(value, str) and value else object()


def call_of_use(use: Any, result: Any) -> dict[str, Any]:
    """A ``server_tool_use`` / ``mcp_tool_use`` and its result (None: none yet)."""
    name = _get(use, "name")
    kind = "mcp" if _get(use, "type") == "mcp_tool_use" else _KIND_OF_NAME.get(name, "other")
    output = readable(result) if result is not None else None
    return server_call(_get(use, "id"), kind, name, plain(_get(use, "input")), output)


# --- response: readable outputs ------------------------------------------------------------


def readable(block: Any) -> str | None:
    """A result block's readable part (DESIGN §18): result titles and URLs, the fetched
    page's, stdout and stderr, the tools found, MCP text; an error as its code. Never
    encrypted content."""
    return _readable(plain(_get(block, "content")))


def _readable(content: Any) -> str | None:
    if isinstance(content, str):
        return content or None
    if isinstance(content, list):
        lines = [line for item in content if (line := _readable_item(item))]
        return "\n".join(lines) or None
    if not isinstance(content, dict):
        return None
    kind = str(content.get("type") or "")
    if kind.endswith("_error"):
        return _error_text(content)
    reader = _READERS.get(kind)
    if reader is not None:
        return reader(content)
    text = content.get("text")
    return text if isinstance(text, str) and text else None


def _readable_item(item: Any) -> str | None:
    """One item of a result list: a search result (title and URL), a text block."""
    if not isinstance(item, dict):
        return None
    if item.get("type") == "web_search_result":
        return _titled(item.get("title"), item.get("url"))
    text = item.get("text")
    return text if isinstance(text, str) and text else None


def _titled(title: Any, url: Any) -> str | None:
    """``Title — URL`` (one line), or whichever of the two there is."""
    parts = [p for p in (title, url) if isinstance(p, str) and p]
    return " — ".join(parts) or None


def _error_text(content: dict[str, Any]) -> str:
    """``web_search_tool_result_error: max_uses_exceeded`` (and its message, if any)."""
    text = f"{content.get('type')}: {content.get('error_code')}"
    message = content.get("error_message")
    return f"{text}: {message}" if isinstance(message, str) and message else text


def _fetched(content: dict[str, Any]) -> str | None:
    document = content.get("content")
    title = document.get("title") if isinstance(document, dict) else None
    return _titled(title, content.get("url"))


def _output(content: dict[str, Any]) -> str | None:
    """stdout then stderr (an encrypted stdout is not shown)."""
    return "\n".join(s for s in (content.get("stdout"), content.get("stderr")) if s) or None


def _created(content: dict[str, Any]) -> str:
    return "file updated" if content.get("is_file_update") else "file created"


def _replaced(content: dict[str, Any]) -> str | None:
    lines = content.get("lines")
    if not isinstance(lines, list):
        return None
    return "\n".join(str(x) for x in lines) or None


def _found(content: dict[str, Any]) -> str | None:
    refs = content.get("tool_references") or []
    return "\n".join(str(r.get("tool_name")) for r in refs if isinstance(r, dict)) or None


def _viewed(content: dict[str, Any]) -> str | None:
    text = content.get("content")
    return text if isinstance(text, str) and text else None


_READERS = {
    "web_fetch_result": _fetched,
    "code_execution_result": _output,
    "encrypted_code_execution_result": _output,
    "bash_code_execution_result": _output,
    "text_editor_code_execution_view_result": _viewed,
    "text_editor_code_execution_create_result": _created,
    "text_editor_code_execution_str_replace_result": _replaced,
    "tool_search_tool_search_result": _found,
}


# --- response: citations and usage ------------------------------------------------------------


def map_citations(blocks: Iterable[Any]) -> list[dict[str, Any]]:
    """Every text block's citations (web_search_result_location, char_location,
    page_location, content_block_location, search_result_location:
    https://docs.claude.com/en/docs/build-with-claude/citations), each over the span of
    ``content`` its block makes up."""
    out: list[dict[str, Any]] = []
    offset = 0
    for block in blocks:
        if _get(block, "type") != "text":
            continue
        text = _get(block, "text") or ""
        out.extend(cited(c, offset, offset + len(text)) for c in _get(block, "citations") or [])
        offset += len(text)
    return out


def cited(native: Any, start: int, end: int) -> dict[str, Any]:
    """One Anthropic citation over ``content[start:end]``: a web result's URL and title, a
    search result's source, a document's title; the quoted text."""
    url = _get(native, "url") or _get(native, "source")
    title = _get(native, "title") or _get(native, "document_title")
    # An empty cited_text (recorded streams send some) quotes nothing: None.
    return citation(url, title, _get(native, "cited_text") or None, start, end)


def server_tool_requests(usage: Any) -> dict[str, int] | None:
    """``usage.server_tool_use`` (``web_search_requests``, ``web_fetch_requests``...) as
    ``{"web_search": 3}``: the counts above zero; None when it reports none."""
    counts = plain(_get(usage, "server_tool_use"))
    if not isinstance(counts, dict):
        return None
    out = {
        key[: -len("_requests")]: value
        for key, value in counts.items()
        if key.endswith("_requests") and type(value) is int and value > 0
    }
    return out or None
