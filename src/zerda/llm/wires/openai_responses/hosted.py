"""The Responses API's built-in (hosted) tools (DESIGN §18): the request's tool entries, and
what a response's hosted output items and text annotations say, as pure functions.

Request (https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools):
- ``web_search``: ``{"type": "web_search", "filters": {"allowed_domains": [...]},
  "user_location": {"type": "approximate", "city", "region", "country", "timezone"}}``
  (https://platform.openai.com/docs/guides/tools-web-search; the older
  ``web_search_preview`` takes ``user_location`` but no ``filters``);
- ``file_search``: ``{"type": "file_search", "vector_store_ids", "max_num_results"}``
  (https://platform.openai.com/docs/guides/tools-file-search);
- ``code_interpreter``: ``{"type": "code_interpreter", "container": {"type": "auto"}}``, a
  new container or the active one of an earlier call in the context
  (https://platform.openai.com/docs/guides/tools-code-interpreter#containers);
- ``mcp``: ``{"type": "mcp", "server_label", "server_url", "allowed_tools", "headers",
  "require_approval": "never"}`` (https://platform.openai.com/docs/guides/tools-remote-mcp).
  The API asks for approval before each MCP call by default, which answers with an
  ``mcp_approval_request`` item and needs another request carrying an
  ``mcp_approval_response``: Zerda's one call would end there, so it sends ``"never"``
  (a ``native`` tool chooses otherwise).

Response: every hosted output item (``web_search_call``, ``file_search_call``,
``code_interpreter_call``, ``mcp_call``, ``mcp_list_tools``, ``mcp_approval_request``,
``tool_search_call``, ``tool_search_output``, ``image_generation_call``, and any other
``*_call`` item the client does not answer) is one server call, named by its item type;
``output_text`` annotations (``url_citation``, ``file_citation``,
``container_file_citation``) are citations, their character offsets into that text part
shifted by the text before it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from zerda.llm._server_tools import citation, server_call
from zerda.llm._traits import Hosted

Item = dict[str, Any]

# --- request ---------------------------------------------------------------------------


def _map_web_search(tool: Mapping[str, Any], native: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": native}
    if "allowed_domains" in tool:
        out["filters"] = {"allowed_domains": list(tool["allowed_domains"])}
    if "user_location" in tool:
        out["user_location"] = {"type": "approximate", **tool["user_location"]}
    return out


def _map_file_search(tool: Mapping[str, Any], native: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": native, "vector_store_ids": list(tool["vector_store_ids"])}
    if "max_num_results" in tool:
        out["max_num_results"] = tool["max_num_results"]
    return out


def _map_code_execution(tool: Mapping[str, Any], native: str) -> dict[str, Any]:
    return {"type": native, "container": {"type": "auto"}}


def _map_mcp(tool: Mapping[str, Any], native: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": native, "server_label": tool["name"], "server_url": tool["url"]}
    if "allowed_tools" in tool:
        out["allowed_tools"] = list(tool["allowed_tools"])
    if "headers" in tool:
        out["headers"] = dict(tool["headers"])
    out["require_approval"] = "never"  # the module docstring says why
    return out


_MAPPERS: dict[str, Callable[[Mapping[str, Any], str], dict[str, Any]]] = {
    "web_search": _map_web_search,
    "file_search": _map_file_search,
    "code_execution": _map_code_execution,
    "mcp": _map_mcp,
}

# What ``include`` adds so a hosted item carries its readable result (the reference's
# ``include`` list): sources of a search, results of a file search, a run's logs.
INCLUDES: dict[str, str] = {
    "web_search": "web_search_call.action.sources",
    "file_search": "file_search_call.results",
    "code_interpreter": "code_interpreter_call.outputs",
}


def map_hosted_tools(
    hosted: Iterable[Mapping[str, Any]], natives: Mapping[str, Hosted]
) -> list[dict[str, Any]]:
    """The request's hosted tools (checked by the core) as ``tools`` entries, in order; a
    ``native`` tool unchanged."""
    out = []
    for tool in hosted:
        kind = tool["type"]
        if kind == "native":
            out.append(dict(tool["tool"]))
        else:
            out.append(_MAPPERS[kind](tool, natives[kind].native))
    return out


def map_includes(tools: Iterable[Mapping[str, Any]], known: Mapping[str, str]) -> list[str]:
    """The ``include`` values the built-in tools among ``tools`` need, by their native type
    (``web_search_preview`` counts as ``web_search``), once each."""
    out: list[str] = []
    for tool in tools:
        kind = str(tool.get("type") or "")
        value = known.get("web_search" if kind.startswith("web_search") else kind)
        if value and value not in out:
            out.append(value)
    return out


# --- response: hosted output items ------------------------------------------------------

# Output item type -> unified server call type.
HOSTED_ITEMS: dict[str, str] = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_execution",
    "mcp_call": "mcp",
    "mcp_list_tools": "mcp",
    "mcp_approval_request": "mcp",
    "tool_search_call": "tool_search",
    "tool_search_output": "tool_search",
    "image_generation_call": "other",
}

# ``*_call`` items the client runs and answers (function, custom, computer, shell and
# apply_patch tools): not server calls.
_CLIENT_CALLS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
    }
)


def is_hosted_item(kind: Any) -> bool:
    """Whether an output item of this type is one the provider ran itself."""
    if not isinstance(kind, str):
        return False
    return kind in HOSTED_ITEMS or (kind.endswith("_call") and kind not in _CLIENT_CALLS)


def _dict(item: Item, key: str) -> dict[str, Any]:
    value = item.get(key)
    return value if isinstance(value, dict) else {}


def _list(item: Item, key: str) -> list[Any]:
    value = item.get(key)
    return value if isinstance(value, list) else []


def _lines(values: Iterable[Any]) -> str | None:
    text = "\n".join(v for v in values if isinstance(v, str) and v)
    return text or None


def _web_search(item: Item) -> tuple[Any, Any]:
    """``action``: ``search`` (query, queries; sources with ``include``), ``open_page``
    (url) or ``find_in_page`` (pattern, url): its fields are the input, which they name."""
    action = _dict(item, "action")
    sources = _list(action, "sources")
    urls = [s.get("url") for s in sources if isinstance(s, dict)]
    return {k: v for k, v in action.items() if k not in ("type", "sources")}, _lines(urls)


def _file_search(item: Item) -> tuple[Any, Any]:
    """``queries``, and with ``include`` the ``results``: one line per file, its text."""
    results = _list(item, "results")
    lines = []
    for result in (r for r in results if isinstance(r, dict)):
        name, text = result.get("filename") or result.get("file_id"), result.get("text")
        lines.append(f"{name}: {text}" if isinstance(text, str) and text else name)
    return {"queries": item.get("queries") or None}, _lines(lines)


def _code_interpreter(item: Item) -> tuple[Any, Any]:
    """``code``, and with ``include`` the ``outputs``: logs, and images (a data URL is not
    readable text: named only). The container's id stays in provider_data."""
    outputs = _list(item, "outputs")
    lines = []
    for out in (o for o in outputs if isinstance(o, dict)):
        if out.get("type") == "logs":
            lines.append(out.get("logs"))
        elif out.get("type") == "image":
            url = out.get("url")
            lines.append("[image]" if str(url).startswith("data:") else f"[image: {url}]")
    return {"code": item.get("code")}, _lines(lines)


def _arguments(text: Any) -> Any:
    """An MCP call's arguments, a JSON string: parsed when it parses."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _mcp_call(item: Item) -> tuple[Any, Any]:
    """The tool's ``output``, or its ``error`` (an object or a text)."""
    args = {
        "server_label": item.get("server_label"),
        "name": item.get("name"),
        "arguments": _arguments(item.get("arguments")),
    }
    output, error = item.get("output"), item.get("error")
    if output is None and error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        output = f"error: {message if isinstance(message, str) else json.dumps(error)}"
    return args, output


def _mcp_list_tools(item: Item) -> tuple[Any, Any]:
    tools = _list(item, "tools")
    names = _lines(t.get("name") for t in tools if isinstance(t, dict))
    error = item.get("error")
    return {"server_label": item.get("server_label")}, (f"error: {error}" if error else names)


def _mcp_approval_request(item: Item) -> tuple[Any, Any]:
    """A call waiting for the client's approval: nothing ran yet."""
    return _mcp_call({**item, "output": None, "error": None})[0], None


def _tool_search_call(item: Item) -> tuple[Any, Any]:
    arguments = item.get("arguments")
    args = dict(arguments) if isinstance(arguments, dict) else {"arguments": arguments}
    return {**args, "execution": item.get("execution")}, None


def _tool_search_output(item: Item) -> tuple[Any, Any]:
    """The tools it loaded, one name a line (a namespace's tools under its name)."""
    names = []
    for tool in (t for t in _list(item, "tools") if isinstance(t, dict)):
        names.append(tool.get("name"))
        inner = [t for t in _list(tool, "tools") if isinstance(t, dict)]
        names += [f"{tool.get('name')}.{t.get('name')}" for t in inner]
    return {"execution": item.get("execution")}, _lines(names)


def _other(item: Item) -> tuple[Any, Any]:
    """An item Zerda does not read (image generation's base64 result, a new tool's): kept
    whole in provider_data, listed here by its type."""
    return {}, None


_READERS: dict[str, Callable[[Item], tuple[Any, Any]]] = {
    "web_search_call": _web_search,
    "file_search_call": _file_search,
    "code_interpreter_call": _code_interpreter,
    "mcp_call": _mcp_call,
    "mcp_list_tools": _mcp_list_tools,
    "mcp_approval_request": _mcp_approval_request,
    "tool_search_call": _tool_search_call,
    "tool_search_output": _tool_search_output,
}


def map_server_call(item: Item) -> dict[str, Any]:
    """One hosted output item (as JSON data) as a server call: its id, the unified type,
    its item type as the name, what it was asked and its readable result."""
    kind = item.get("type")
    arguments, output = _READERS.get(str(kind), _other)(item)
    arguments = {k: v for k, v in arguments.items() if v is not None}  # what it was given
    return server_call(
        item.get("id"), HOSTED_ITEMS.get(str(kind), "other"), kind, arguments, output
    )


# --- response: citations -----------------------------------------------------------------


def map_annotation(annotation: Any, base: int) -> dict[str, Any] | None:
    """One ``output_text`` annotation as a citation, its offsets (characters into that text
    part: https://platform.openai.com/docs/api-reference/responses/object) moved by
    ``base``, the characters of ``content`` before the part. A ``file_citation`` marks a
    point (``index``); a ``file_path`` is no citation (a file the text names)."""
    if not isinstance(annotation, dict):
        return None
    kind = annotation.get("type")
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if kind == "file_citation":
        start = end = annotation.get("index")
    elif kind not in ("url_citation", "container_file_citation"):
        return None
    title = annotation.get("title") if kind == "url_citation" else annotation.get("filename")
    title = title or None  # an empty title is none
    shifted = [v + base if type(v) is int else None for v in (start, end)]
    return citation(annotation.get("url"), title, None, shifted[0], shifted[1])


def part_text(part: Any) -> str:
    """The text a message content part adds to ``content`` (an output_text's text, a
    refusal's refusal)."""
    if not isinstance(part, dict):
        return ""
    text = part.get("refusal") if part.get("type") == "refusal" else part.get("text")
    return text if isinstance(text, str) and part.get("type") in ("output_text", "refusal") else ""


def message_citations(item: Item, base: int) -> list[tuple[int, int, dict[str, Any]]]:
    """A message item's citations, each with its (content part, annotation) indexes;
    ``base``: the characters of ``content`` before the message."""
    out = []
    for part_index, part in enumerate(item.get("content") or []):
        annotations = part.get("annotations") if isinstance(part, dict) else None
        for n, annotation in enumerate(annotations or []):
            cited = map_annotation(annotation, base)
            if cited is not None:
                out.append((part_index, n, cited))
        base += len(part_text(part))
    return out
