"""Groq's built-in tools (DESIGN §18), as pure functions.

Two families run them (https://console.groq.com/docs/tool-use/built-in-tools):

- the gpt-oss models take them in ``tools``: ``{"type": "browser_search"}``
  (https://console.groq.com/docs/browser-search) and ``{"type": "code_interpreter"}``
  (https://console.groq.com/docs/code-execution, "Quick Start (GPT-OSS)"), no options;
- the Compound systems (``groq/compound``, ``groq/compound-mini``) run web search, website
  visits and code themselves; the tools a request allows are
  ``compound_custom.tools.enabled_tools`` (identifiers ``web_search``, ``visit_website``,
  ``code_interpreter``: https://console.groq.com/docs/compound/built-in-tools), the search's
  domains ``search_settings.include_domains`` / ``exclude_domains``
  (https://console.groq.com/docs/web-search). ``visit_website`` exists on the latest
  Compound version only, which the ``Groq-Model-Version: latest`` header selects (same page).

Both answer with ``message.executed_tools`` (streams: ``delta.executed_tools``, a tool's
arguments first, then the same ``index`` with its results), each
``{index, type, name?, arguments, output?, search_results?, code_results?,
browser_results?}`` (groq/types/chat/chat_completion_message.py ``ExecutedTool``). Compound
names the tool in ``type`` (``search``, ``visit``, ``python``, as recorded and in the code
execution page); gpt-oss sends ``type: "function"`` with the tool in ``name`` (``python``,
its code as plain-text ``arguments``, its stdout in ``code_results``).
"""

from __future__ import annotations

import json
from typing import Any

from zerda.llm._server_tools import server_call
from zerda.llm.errors import InvalidRequestError
from zerda.llm.tools import _get

# The Compound identifiers of the unified types (compound/built-in-tools, "Identifier").
COMPOUND_TOOLS = {
    "web_search": "web_search",
    "web_fetch": "visit_website",
    "code_execution": "code_interpreter",
}
# The header that selects the Compound version running visit_website.
LATEST_VERSION = {"Groq-Model-Version": "latest"}

# An executed tool's native name -> the unified type; any other is "other" (kept whole in
# provider_data). Compound: search / visit / python; gpt-oss: python and the harmony
# browser's browser.search / browser.open / browser.find.
_KINDS = {
    "search": "web_search",
    "web_search": "web_search",
    "browser_search": "web_search",
    "browser.search": "web_search",
    "visit": "web_fetch",
    "visit_website": "web_fetch",
    "browser.open": "web_fetch",
    "browser.find": "web_fetch",
    "python": "code_execution",
    "code_interpreter": "code_execution",
    "code_execution": "code_execution",
}


# --- request ---------------------------------------------------------------------------


def is_compound(model: str | None) -> bool:
    return "compound" in (model or "")


def compound_request(hosted: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The body fields that let a Compound system run the declared tools (and only them):
    ``compound_custom.tools.enabled_tools``, ``search_settings`` from the web search's
    domains, the latest-version header when a website visit is allowed."""
    enabled = [COMPOUND_TOOLS[t["type"]] for t in hosted if t["type"] in COMPOUND_TOOLS]
    if not enabled:
        return {}
    fields: dict[str, Any] = {"compound_custom": {"tools": {"enabled_tools": enabled}}}
    search = next((t for t in hosted if t["type"] == "web_search"), {})
    settings = {
        name: list(search[key])
        for key, name in (
            ("allowed_domains", "include_domains"),
            ("blocked_domains", "exclude_domains"),
        )
        if key in search
    }
    if settings:
        fields["search_settings"] = settings
    if "visit_website" in enabled:
        fields["extra_headers"] = dict(LATEST_VERSION)
    return fields


def gpt_oss_tool(tool: dict[str, Any], native: str) -> dict[str, Any]:
    """A built-in tool of a gpt-oss model in ``tools``: ``{"type": native}``; it takes no
    options (the domains are Compound's search settings)."""
    options = sorted(k for k in tool if k != "type")
    if options:
        raise InvalidRequestError(
            f"the hosted tool {tool['type']!r}: groq honours {options[0]!r} only on the "
            f"Compound systems (groq/compound, groq/compound-mini); {native} takes no options",
            capability=True,
        )
    return {"type": native}


# --- response --------------------------------------------------------------------------


def native_name(tool: Any) -> str:
    """The executed tool's name: gpt-oss's ``name`` under ``type: "function"``, else the
    ``type`` Compound gives."""
    kind = _get(tool, "type")
    name = _get(tool, "name")
    if kind == "function" or (not kind and name):
        return str(name or "function")
    return str(kind or name or "tool")


def map_executed_tool(tool: Any) -> dict[str, Any]:
    """One executed tool as a server call (no id: Groq gives none): its arguments as input
    (JSON, else the plain text, as code for a code tool), its readable result as output."""
    name = native_name(tool)
    kind = _KINDS.get(name, "other")
    return server_call(None, kind, name, _arguments(_get(tool, "arguments"), kind), output_of(tool))


def _arguments(arguments: Any, kind: str) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {"code": arguments} if kind == "code_execution" else arguments


def output_of(tool: Any) -> str | None:
    """The readable result: the search results' titles and URLs (one per line), the code's
    text output, the browser pages' titles and URLs, else the ``output`` text; None while a
    streamed tool has no result yet."""
    results = _get(_get(tool, "search_results"), "results")
    lines = _source_lines(results)
    if lines:
        return lines
    texts = [_get(r, "text") for r in _get(tool, "code_results") or []]
    if any(isinstance(t, str) for t in texts):
        return "".join(t for t in texts if isinstance(t, str))
    lines = _source_lines(_get(tool, "browser_results"))
    if lines:
        return lines
    output = _get(tool, "output")
    return output if isinstance(output, str) and output else None


def _source_lines(results: Any) -> str | None:
    if not isinstance(results, list):
        return None
    lines = []
    for result in results:
        url, title = _get(result, "url"), _get(result, "title")
        if isinstance(url, str) and url:
            lines.append(f"{title}: {url}" if isinstance(title, str) and title else url)
    return "\n".join(lines) or None


def is_complete(tool: Any) -> bool:
    """Whether a (streamed) executed tool carries its result yet."""
    return output_of(tool) is not None or any(
        _get(tool, key) is not None for key in ("output", "code_results", "browser_results")
    )


def merged(old: dict[str, Any] | None, delta: Any) -> dict[str, Any]:
    """A streamed executed tool's pieces merged (later non-null fields win)."""
    out = dict(old or {})
    if isinstance(delta, dict):
        out.update({k: v for k, v in delta.items() if v is not None})
    return out
