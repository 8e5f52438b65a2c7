"""A Script's hosted calls and citations (DESIGN §18) as the Responses API sends them.

Each ``Script.server_tool_calls`` entry is one output item before the message, named by
its ``name`` when that is an item type of its unified type, else the type's usual item
(https://platform.openai.com/docs/api-reference/responses/object#responses/object-output):
``web_search`` a ``web_search_call`` (its input the ``action``'s fields: ``query`` /
``queries`` for a search, ``url`` for ``open_page``, ``pattern`` and ``url`` for
``find_in_page``; its output lines the ``action.sources`` URLs), ``file_search`` a
``file_search_call`` (``queries``; output lines ``filename: text`` as ``results``),
``code_execution`` a ``code_interpreter_call`` (``code``; the output its logs), ``mcp`` an
``mcp_call`` (``server_label``, ``name``, ``arguments``; its ``output``), an
``mcp_list_tools`` (output lines the tool names) or an ``mcp_approval_request``,
``tool_search`` a ``tool_search_call`` (its ``arguments`` and ``execution``) or a
``tool_search_output`` (output lines the loaded tools' names), and ``other`` (or
``web_fetch``, which the API has no item for) an item of that name (default
``image_generation_call``). ``Script.citations`` are annotations of the message's text
part: ``url_citation`` with a URL, else ``file_citation`` at a point, else
``container_file_citation``. Streams send each hosted item as ``output_item.added``, its
progress events (``response.web_search_call.in_progress`` / ``.searching`` /
``.completed``...) and ``output_item.done``; each annotation as
``response.output_text.annotation.added`` after the text deltas
(https://platform.openai.com/docs/api-reference/responses-streaming).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from zerda.testing import _ids

Item = dict[str, Any]

# Unified type -> (its item types, the default one).
_ITEM_TYPES: dict[str, tuple[tuple[str, ...], str]] = {
    "web_search": (("web_search_call",), "web_search_call"),
    "file_search": (("file_search_call",), "file_search_call"),
    "code_execution": (("code_interpreter_call",), "code_interpreter_call"),
    "mcp": (("mcp_call", "mcp_list_tools", "mcp_approval_request"), "mcp_call"),
    "tool_search": (("tool_search_call", "tool_search_output"), "tool_search_call"),
    "web_fetch": ((), "web_fetch_call"),
}

# Item type -> (id prefix, the progress events a stream sends between added and done).
_STREAMED: dict[str, tuple[str, tuple[str, ...]]] = {
    "web_search_call": ("ws_", ("in_progress", "searching", "completed")),
    "file_search_call": ("fs_", ("in_progress", "searching", "completed")),
    "code_interpreter_call": ("ci_", ("in_progress", "interpreting", "completed")),
    "mcp_call": ("mcp_", ("in_progress", "completed")),
    "mcp_list_tools": ("mcpl_", ("in_progress", "completed")),
    "mcp_approval_request": ("mcpr_", ()),
    "tool_search_call": ("tsc_", ()),
    "tool_search_output": ("tso_", ()),
    "image_generation_call": ("ig_", ("in_progress", "generating", "completed")),
}


def _item_type(call: dict[str, Any]) -> str:
    kinds, default = _ITEM_TYPES.get(call["type"], ((), "image_generation_call"))
    name = call.get("name")
    if call["type"] == "other" and isinstance(name, str) and name:
        return name
    return name if name in kinds else default


def _lines(output: Any) -> list[str]:
    return [line for line in str(output).split("\n") if line] if output else []


def _web_search(call: dict[str, Any]) -> Item:
    args = dict(call.get("input") or {})
    kind = "find_in_page" if "pattern" in args else "search"
    if kind == "search" and "url" in args and not ({"query", "queries"} & set(args)):
        kind = "open_page"
    action: dict[str, Any] = {"type": kind, **args}
    if kind == "search" and call.get("output"):
        action["sources"] = [{"type": "url", "url": u} for u in _lines(call["output"])]
    return {"action": action, "status": "completed"}


def _file_result(line: str) -> dict[str, Any]:
    name, sep, text = line.partition(": ")
    result: dict[str, Any] = {"file_id": "file-" + _ids.completion_id("")[:22], "filename": name}
    return {**result, "score": 0.9, "text": text, "attributes": {}} if sep else result


def _file_search(call: dict[str, Any]) -> Item:
    args = call.get("input") or {}
    item: Item = {"queries": list(args.get("queries") or []), "status": "completed"}
    item["results"] = [_file_result(line) for line in _lines(call.get("output"))] or None
    return item


def _code_interpreter(call: dict[str, Any]) -> Item:
    output = call.get("output")
    return {
        "code": (call.get("input") or {}).get("code"),
        "container_id": "cntr_" + _ids.completion_id("")[:24],
        "outputs": [{"type": "logs", "logs": output}] if output else None,
        "status": "completed",
    }


def _mcp_fields(call: dict[str, Any]) -> Item:
    args = call.get("input") or {}
    arguments = args.get("arguments")
    return {
        "server_label": args.get("server_label") or "mock",
        "name": args.get("name") or "tool",
        "arguments": json.dumps(arguments if arguments is not None else {}),
    }


def _mcp_call(call: dict[str, Any]) -> Item:
    fields = {**_mcp_fields(call), "output": call.get("output"), "error": None}
    return {**fields, "approval_request_id": None, "status": "completed"}


def _mcp_list_tools(call: dict[str, Any]) -> Item:
    tools = [
        {"name": n, "input_schema": {"type": "object"}, "annotations": None}
        for n in _lines(call.get("output"))
    ]
    label = (call.get("input") or {}).get("server_label") or "mock"
    return {"server_label": label, "tools": tools}


def _tool_search_call(call: dict[str, Any]) -> Item:
    args = dict(call.get("input") or {})
    execution = args.pop("execution", "server")
    return {"arguments": args, "call_id": None, "execution": execution, "status": "completed"}


def _tool_search_output(call: dict[str, Any]) -> Item:
    execution = (call.get("input") or {}).get("execution") or "server"
    tools = [
        {"type": "function", "name": n, "parameters": {"type": "object"}, "defer_loading": True}
        for n in _lines(call.get("output"))
    ]
    return {"call_id": None, "execution": execution, "status": "completed", "tools": tools}


_BUILDERS: dict[str, Callable[[dict[str, Any]], Item]] = {
    "web_search_call": _web_search,
    "file_search_call": _file_search,
    "code_interpreter_call": _code_interpreter,
    "mcp_call": _mcp_call,
    "mcp_list_tools": _mcp_list_tools,
    "mcp_approval_request": _mcp_fields,
    "tool_search_call": _tool_search_call,
    "tool_search_output": _tool_search_output,
}


def hosted_item(call: dict[str, Any]) -> Item:
    """One scripted server call as its output item."""
    kind = _item_type(call)
    prefix = _STREAMED.get(kind, ("item_", ()))[0]
    item: Item = {"id": call.get("id") or _ids.completion_id(prefix), "type": kind}
    builder = _BUILDERS.get(kind)
    fields = builder(call) if builder else {"status": "completed"}
    if kind == "image_generation_call":
        fields["result"] = ""
    return {**item, **fields}


def annotation(cited: dict[str, Any]) -> dict[str, Any]:
    """One scripted citation as an ``output_text`` annotation (offsets into the text part,
    which is the script's text)."""
    start, end = cited["start"], cited["end"]
    if cited.get("url"):
        title = cited.get("title") or ""
        return {
            "type": "url_citation",
            "start_index": start,
            "end_index": end,
            "url": cited["url"],
            "title": title,
        }
    name = cited.get("title") or "file.txt"
    file_id = "file-" + _ids.completion_id("")[:22]
    if start == end:
        return {"type": "file_citation", "file_id": file_id, "filename": name, "index": start}
    return {
        "type": "container_file_citation",
        "container_id": "cntr_" + _ids.completion_id("")[:24],
        "file_id": file_id,
        "filename": name,
        "start_index": start,
        "end_index": end,
    }


def hosted_events(index: int, item: Item) -> list[dict[str, Any]]:
    """One hosted item in a stream: added (in progress), its progress events, done."""
    kind = item["type"]
    added = {"id": item["id"], "type": kind, "status": "in_progress"}
    events = [{"type": "response.output_item.added", "output_index": index, "item": added}]
    for step in _STREAMED.get(kind, ("", ()))[1]:
        events.append(
            {"type": f"response.{kind}.{step}", "item_id": item["id"], "output_index": index}
        )
    return events + [{"type": "response.output_item.done", "output_index": index, "item": item}]


def annotation_events(at: dict[str, Any], part: dict[str, Any]) -> list[dict[str, Any]]:
    """A text part's ``response.output_text.annotation.added`` events."""
    return [
        {
            "type": "response.output_text.annotation.added",
            **at,
            "annotation_index": n,
            "annotation": a,
        }  # fmt: skip
        for n, a in enumerate(part.get("annotations") or [])
    ]


def echoed_tools(tools: Any) -> list[Any]:
    """The request's tools as the response object echoes them: an MCP tool's header values
    and its server URL's path redacted, as the API answers (recording
    openai-responses/pydantic-ai__test_openai_responses.test_openai_responses_model_mcp_server_tool__i00:
    ``"headers": {"custom-header-key": "<redacted>"}``,
    ``"server_url": "https://mcp.deepwiki.com/<redacted>"``)."""
    out = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and tool.get("type") == "mcp":
            tool = dict(tool)
            if isinstance(tool.get("headers"), dict):
                tool["headers"] = {k: "<redacted>" for k in tool["headers"]}
            url = tool.get("server_url")
            if isinstance(url, str) and url.count("/") > 2:
                tool["server_url"] = "/".join(url.split("/")[:3]) + "/<redacted>"
        out.append(tool)
    return out
