"""Tools the provider runs itself (DESIGN §18): web search, web fetch, code execution, file
search and MCP servers the provider calls, as dicts beside functions in ``tools=``.

The helpers build those dicts; :func:`check_hosted` checks one (its type and options) and
:func:`check_for_row` what a row runs. Each row's wire maps the checked dict to its native
shape (the registry's ``Traits.hosted`` names the native type and version).

    from zerda.llm import hosted
    tools = [get_weather, hosted.web_search(max_uses=3), hosted.code_execution()]

Part of the core: it imports nothing of the registry or the wires.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zerda.llm._traits import HOSTED_TYPES
from zerda.llm.errors import InvalidRequestError

if TYPE_CHECKING:
    from zerda.llm._traits import Row

__all__ = [
    "HOSTED_TYPES",
    "code_execution",
    "file_search",
    "is_hosted",
    "mcp_server",
    "native",
    "web_fetch",
    "web_search",
]

# "mcp_server" (the helper's name) is read as "mcp".
_ALIASES = {"mcp_server": "mcp"}
_LOCATION_KEYS = ("city", "region", "country", "timezone")


def web_search(
    *,
    max_uses: int | None = None,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    user_location: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The provider searches the web (Anthropic web search, Responses ``web_search``, Gemini
    Google Search grounding, Bedrock Nova grounding...). ``user_location``: ``city``,
    ``region``, ``country`` (ISO 3166-1 alpha-2), ``timezone`` (IANA)."""
    return _tool(
        "web_search",
        max_uses=max_uses,
        allowed_domains=allowed_domains,
        blocked_domains=blocked_domains,
        user_location=user_location,
    )


def web_fetch(
    *,
    max_uses: int | None = None,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    max_content_tokens: int | None = None,
    citations: bool | None = None,
) -> dict[str, Any]:
    """The provider fetches the pages the model names (Anthropic web fetch, Gemini URL
    context)."""
    return _tool(
        "web_fetch",
        max_uses=max_uses,
        allowed_domains=allowed_domains,
        blocked_domains=blocked_domains,
        max_content_tokens=max_content_tokens,
        citations=citations,
    )


def code_execution() -> dict[str, Any]:
    """The provider runs the code the model writes in its sandbox."""
    return {"type": "code_execution"}


def file_search(
    *, vector_store_ids: Sequence[str], max_num_results: int | None = None
) -> dict[str, Any]:
    """The provider searches your stored files (Responses vector stores, Gemini file search
    stores: their names)."""
    return _tool(
        "file_search",
        vector_store_ids=list(vector_store_ids),
        max_num_results=max_num_results,
    )


def mcp_server(
    *,
    url: str,
    name: str,
    allowed_tools: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """An MCP server the provider calls itself (not Zerda: see zerda.llm.mcp for servers
    your process runs). ``headers`` may hold credentials: they are never shown."""
    return _tool("mcp", url=url, name=name, allowed_tools=allowed_tools, headers=headers)


def native(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One provider-shaped tool, sent unchanged (the escape hatch for what Zerda does not
    map: a newer version, a provider's own tool)."""
    return {"type": "native", "tool": dict(tool)}


def _tool(kind: str, **options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind}
    for key, value in options.items():
        if value is None:
            continue
        out[key] = dict(value) if isinstance(value, Mapping) else value
        if isinstance(value, (list, tuple)):
            out[key] = list(value)
    return out


def is_hosted(tool: Any) -> bool:
    """A tools= entry that asks the provider to run a tool: a dict whose ``type`` is not
    ``function`` (and that is not a unified or OpenAI function tool)."""
    if not isinstance(tool, dict):
        return False
    kind = tool.get("type")
    return isinstance(kind, str) and kind != "function" and "parameters" not in tool


# --- checking ---------------------------------------------------------------------------


def _positive_int(value: Any) -> str | None:
    if type(value) is int and value >= 1:
        return None
    return "an integer of at least 1"


def _strings(value: Any) -> str | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value):
        return None
    return "a list of non-empty strings"


def _some_strings(value: Any) -> str | None:
    return _strings(value) or (None if value else "a non-empty list of strings")


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _location(value: Any) -> str | None:
    wanted = f"a dict of strings with keys among {', '.join(_LOCATION_KEYS)}"
    if not isinstance(value, Mapping) or not value:
        return wanted
    if set(value) - set(_LOCATION_KEYS) or not all(isinstance(v, str) for v in value.values()):
        return wanted
    country = value.get("country")
    if country is not None and not re.fullmatch(r"[A-Za-z]{2}", country):
        return "a dict whose 'country' is a two-letter ISO 3166-1 code, e.g. 'US'"
    return None


def _url(value: Any) -> str | None:
    if isinstance(value, str) and re.match(r"https?://[^\s/]+", value):
        return None
    return "an http:// or https:// URL"


def _label(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else "a non-empty string"


def _headers(value: Any) -> str | None:
    if isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        return None
    return "a dict of header names to string values"


_Check = Callable[[Any], "str | None"]
_DOMAINS: dict[str, _Check] = {"allowed_domains": _strings, "blocked_domains": _strings}
# Per type: every option and its check; the required ones.
_OPTIONS: dict[str, dict[str, _Check]] = {
    "web_search": {"max_uses": _positive_int, **_DOMAINS, "user_location": _location},
    "web_fetch": {
        "max_uses": _positive_int,
        **_DOMAINS,
        "max_content_tokens": _positive_int,
        "citations": _boolean,
    },
    "code_execution": {},
    "file_search": {"vector_store_ids": _some_strings, "max_num_results": _positive_int},
    "mcp": {"url": _url, "name": _label, "allowed_tools": _strings, "headers": _headers},
}
_REQUIRED = {"file_search": ("vector_store_ids",), "mcp": ("url", "name")}


def check_hosted(index: int, tool: dict[str, Any]) -> dict[str, Any]:
    """``tools[index]``, a hosted tool, checked: its unified dict (a copy, ``mcp_server`` read
    as ``mcp``). Raises InvalidRequestError naming the field and what is accepted."""
    kind = _ALIASES.get(tool["type"], tool["type"])
    where = f"tools[{index}] (a hosted tool, type {kind!r})"
    if kind == "native":
        return _check_native(where, tool)
    if kind not in _OPTIONS:
        raise InvalidRequestError(
            f"tools[{index}]: unknown hosted tool type {tool['type']!r}; the hosted types are "
            f"{', '.join(HOSTED_TYPES)} and 'native' (a provider-shaped tool sent unchanged), "
            "and a function tool is a dict with 'name' and 'parameters'"
        )
    options = _OPTIONS[kind]
    out: dict[str, Any] = {"type": kind}
    for key, value in tool.items():
        if key == "type":
            continue
        if key not in options:
            accepted = ", ".join(options) or "none"
            raise InvalidRequestError(f"{where}: unknown option {key!r}; its options: {accepted}")
        problem = options[key](value)
        if problem:  # the value is not shown: MCP headers carry credentials
            raise InvalidRequestError(f"{where}: {key!r} must be {problem}")
        out[key] = _copied(value)
    for key in _REQUIRED.get(kind, ()):
        if key not in out:
            raise InvalidRequestError(f"{where}: {key!r} is required")
    return out


def _check_native(where: str, tool: dict[str, Any]) -> dict[str, Any]:
    inner = tool.get("tool")
    if set(tool) != {"type", "tool"} or not isinstance(inner, dict) or not inner:
        raise InvalidRequestError(
            f"{where}: a native tool is {{'type': 'native', 'tool': {{...}}}}, the tool as the "
            "provider's API takes it"
        )
    return {"type": "native", "tool": _copied(inner)}


def _copied(value: Any) -> Any:
    """A copy of an option's value, so the request never shares the caller's containers."""
    if isinstance(value, Mapping):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copied(v) for v in value]
    return value


def check_for_row(index: int, tool: dict[str, Any], spec: Row, model: str | None) -> None:
    """A checked hosted tool against the row: a type it does not run (naming the rows that
    run it), an option it does not honour, a model that does not run it. All are capability
    refusals (a fallback moves on)."""
    kind = tool["type"]
    if kind == "native":
        return
    hosted = spec.traits.hosted.get(kind)
    if hosted is None:
        rows = ", ".join(spec.rows_hosting(kind)) or "none"
        raise InvalidRequestError(
            f"tools[{index}]: {spec.name} does not run the hosted tool {kind!r}; rows that "
            f"run it: {rows}",
            capability=True,
        )
    for key in tool:
        if key != "type" and key not in hosted.options:
            honoured = ", ".join(sorted(hosted.options)) or "none"
            raise InvalidRequestError(
                f"tools[{index}] ({kind!r}): {spec.name} does not honour the option {key!r}; "
                f"its options for {kind!r}: {honoured}",
                capability=True,
            )
    if hosted.models and not re.search(hosted.models, model or ""):
        raise InvalidRequestError(
            f"tools[{index}] ({kind!r}): on {spec.name} only models matching "
            f"{hosted.models!r} run it, not {model!r}",
            capability=True,
        )
