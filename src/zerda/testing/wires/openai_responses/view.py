"""A Responses API request as a model reads it, for ``MockLLMServer.answer_like_a_model``
(``zerda/testing/_modellike.py``): its ``function`` tools, ``tool_choice``, whether the last
input item is a ``function_call_output``, and ``text.format``
(https://platform.openai.com/docs/api-reference/responses/create)."""

from __future__ import annotations

from typing import Any

from zerda.testing._modellike import Choice, OfferedTool, RequestView
from zerda.testing._script import RecordedRequest


def read(req: RecordedRequest) -> RequestView:
    body = req.body if isinstance(req.body, dict) else {}
    choice, forced = _tool_choice(body.get("tool_choice"))
    text = body.get("text")
    wants_json, schema = _text_format(text.get("format") if isinstance(text, dict) else None)
    items = body.get("input")
    last = items[-1] if isinstance(items, list) and items else None
    return RequestView(
        tools=_function_tools(body.get("tools")),
        choice=choice,
        forced=forced,
        after_tool_result=isinstance(last, dict) and last.get("type") == "function_call_output",
        wants_json=wants_json,
        schema=schema,
    )


def _function_tools(tools: Any) -> tuple[OfferedTool, ...]:
    """The ``{"type": "function", "name", "parameters"}`` tools (hosted ones left out)."""
    return tuple(
        OfferedTool(t["name"], t.get("parameters"))
        for t in (tools if isinstance(tools, list) else [])
        if isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str)
    )


def _tool_choice(choice: Any) -> tuple[Choice, str | None]:
    if choice in ("none", "required"):
        return choice, None
    if isinstance(choice, dict) and choice.get("type") == "function":
        name = choice.get("name")
        return ("named", name) if isinstance(name, str) else ("auto", None)
    return "auto", None


def _text_format(fmt: Any) -> tuple[bool, Any]:
    """(JSON wanted, its schema): a ``json_schema`` format holds its ``schema`` flat."""
    if not isinstance(fmt, dict):
        return False, None
    if fmt.get("type") == "json_schema":
        return True, fmt.get("schema")
    return fmt.get("type") == "json_object", None
