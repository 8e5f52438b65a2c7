"""The unified tool-calling schema: converters to each provider's native tool shape and
parsers of each provider's tool calls back into one shape.

Specified function by function in ``spec/llm-tools.txt``; imports no provider SDK and never
mutates its input. Refinements the spec leaves open follow DESIGN.md §3: arguments that are
already a dict are used as they are, an empty argument string is ``{}``, and JSON that is not
an object stays under ``_raw``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from zerda.llm import _lazy

if TYPE_CHECKING:
    from zerda.llm import _gemini_schema
else:  # with the first Gemini tools (building an interface needs none of it)
    _gemini_schema = _lazy.module("zerda.llm._gemini_schema", __name__, "_gemini_schema")

__all__ = [
    "ToolCall",
    "parse_anthropic_tool_calls",
    "parse_bedrock_tool_calls",
    "parse_gemini_tool_calls",
    "parse_ollama_tool_calls",
    "parse_openai_tool_calls",
    "to_anthropic_tools",
    "to_bedrock_tools",
    "to_gemini_tools",
    "to_groq_tools",
    "to_mistral_tools",
    "to_ollama_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
    "tool_calls_to_dicts",
]


@dataclass
class ToolCall:
    id: Optional[str]  # noqa: UP045 - the spec's exact signature
    name: str
    arguments: dict


def _normalize_tool(tool: dict) -> dict:
    name = tool.get("name")
    if not name:
        raise ValueError("Each tool must have a 'name'.")
    description = tool.get("description", "")
    schema = (
        tool.get("input_schema") or tool.get("parameters") or {"type": "object", "properties": {}}
    )
    return {"name": name, "description": description, "schema": schema}


# --- input converters -------------------------------------------------------------------


def to_openai_tools(tools: list[dict] | None) -> list[dict] | None:
    if not tools:
        return None
    out = []
    for tool in tools:
        t = _normalize_tool(tool)
        out.append(
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["schema"],
                },
            }
        )
    return out


def to_openai_responses_tools(tools: list[dict] | None) -> list[dict] | None:
    """OpenAI's Responses API: flat function items. ``strict`` is sent as False because the
    Responses API makes function tools strict by default, which refuses ordinary schemas
    (https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools)."""
    if not tools:
        return None
    out = []
    for tool in tools:
        t = _normalize_tool(tool)
        item = {"type": "function", "name": t["name"], "parameters": t["schema"], "strict": False}
        if t["description"]:
            item["description"] = t["description"]
        out.append(item)
    return out


# Same object, not wrappers: the three providers take OpenAI's exact tool shape.
to_groq_tools = to_openai_tools
to_mistral_tools = to_openai_tools
to_ollama_tools = to_openai_tools


def to_anthropic_tools(tools: list[dict] | None) -> list[dict] | None:
    if not tools:
        return None
    out = []
    for tool in tools:
        t = _normalize_tool(tool)
        out.append(
            {"name": t["name"], "description": t["description"], "input_schema": t["schema"]}
        )
    return out


def to_bedrock_tools(tools: list[dict] | None) -> dict | None:
    if not tools:
        return None
    specs = []
    for tool in tools:
        t = _normalize_tool(tool)
        spec: dict[str, Any] = {"name": t["name"]}
        # Bedrock's ToolSpecification.description has a minimum length of 1: an empty
        # string is a ValidationException, an absent key is fine.
        if t["description"]:
            spec["description"] = t["description"]
        spec["inputSchema"] = {"json": t["schema"]}
        specs.append({"toolSpec": spec})
    return {"tools": specs}


def to_gemini_tools(tools: list[dict] | None) -> list[dict] | None:
    if not tools:
        return None
    declarations = []
    for tool in tools:
        t = _normalize_tool(tool)
        declarations.append(
            {
                "name": t["name"],
                "description": t["description"],
                # google-genai's types.Schema forbids keys outside Gemini's JSON Schema subset.
                "parameters": _gemini_schema.to_gemini_schema(t["schema"], t["name"]),
            }
        )
    return [{"function_declarations": declarations}]


# --- response parsers -------------------------------------------------------------------


def _get(obj: Any, key: str) -> Any:
    """Read ``key`` from an SDK object or a plain dict alike; None when absent."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _parse_json_arguments(raw: Any) -> dict:
    """Arguments as a dict: dicts as they are, ``""`` as ``{}``, JSON objects parsed, and
    anything else kept whole under ``_raw`` so nothing the model produced is lost."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    # RecursionError: JSON nested past Python's recursion limit (a degenerate "[[[[..."),
    # unparseable here like any other broken text.
    except (json.JSONDecodeError, TypeError, RecursionError):
        return {"_raw": raw}
    return parsed if isinstance(parsed, dict) else {"_raw": raw}


def parse_openai_tool_calls(message: Any) -> list[ToolCall]:
    calls = []
    for tc in _get(message, "tool_calls") or []:
        fn = _get(tc, "function")
        calls.append(
            ToolCall(
                id=_get(tc, "id"),
                name=_get(fn, "name"),
                arguments=_parse_json_arguments(_get(fn, "arguments")),
            )
        )
    return calls


def parse_anthropic_tool_calls(content_blocks: Any) -> list[ToolCall]:
    calls = []
    for block in content_blocks or []:
        if _get(block, "type") != "tool_use":
            continue
        calls.append(
            ToolCall(
                id=_get(block, "id"),
                name=_get(block, "name"),
                arguments=_parse_json_arguments(_get(block, "input")),
            )
        )
    return calls


def parse_gemini_tool_calls(response: Any) -> list[ToolCall]:
    calls = []
    for candidate in _get(response, "candidates") or []:
        content = _get(candidate, "content")
        for part in _get(content, "parts") or []:
            fc = _get(part, "function_call")
            if fc is None:
                continue
            args = _get(fc, "args")
            calls.append(
                ToolCall(
                    # Older Gemini models send no id; newer ones do, and it must round-trip.
                    id=_get(fc, "id") or None,
                    name=_get(fc, "name"),
                    arguments=dict(args) if args else {},
                )
            )
    return calls


def parse_bedrock_tool_calls(content_blocks: Any) -> list[ToolCall]:
    calls = []
    for block in content_blocks or []:
        if not isinstance(block, dict) or "toolUse" not in block:
            continue
        use = block["toolUse"] or {}
        calls.append(
            ToolCall(
                id=use.get("toolUseId"),
                name=use.get("name") or "",
                arguments=_parse_json_arguments(use.get("input")),
            )
        )
    return calls


def parse_ollama_tool_calls(message: Any) -> list[ToolCall]:
    calls = []
    for tc in _get(message, "tool_calls") or []:
        fn = _get(tc, "function")
        calls.append(
            ToolCall(
                id=_get(tc, "id") or None,
                name=_get(fn, "name"),
                arguments=_parse_json_arguments(_get(fn, "arguments")),
            )
        )
    return calls


def tool_calls_to_dicts(calls: list[ToolCall]) -> list[dict]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
