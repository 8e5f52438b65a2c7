"""A Chat Completions request as a model reads it, for ``MockLLMServer.answer_like_a_model``
(``zerda/testing/_modellike.py``): its function tools, ``tool_choice``, whether the last
message is a tool's result, and ``response_format``
(https://platform.openai.com/docs/api-reference/chat/create). Groq, Mistral, Azure and
Ollama's ``/v1`` endpoint send the same shape (Mistral's ``"any"`` is ``"required"``:
https://docs.mistral.ai/capabilities/function_calling/#tool_choice)."""

from __future__ import annotations

from typing import Any

from zerda.testing._modellike import Choice, OfferedTool, RequestView
from zerda.testing._script import RecordedRequest


def read(req: RecordedRequest) -> RequestView:
    body = req.body if isinstance(req.body, dict) else {}
    choice, forced = tool_choice(body.get("tool_choice"))
    wants_json, schema = response_format(body.get("response_format"))
    return RequestView(
        tools=function_tools(body.get("tools")),
        choice=choice,
        forced=forced,
        after_tool_result=last_is_tool(body.get("messages")),
        wants_json=wants_json,
        schema=schema,
    )


def function_tools(tools: Any) -> tuple[OfferedTool, ...]:
    """``tools[].function`` of the ``"function"`` tools: name and ``parameters``."""
    out = []
    for tool in tools if isinstance(tools, list) else []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out.append(OfferedTool(fn["name"], fn.get("parameters")))
    return tuple(out)


def tool_choice(choice: Any) -> tuple[Choice, str | None]:
    """``"none"``, ``"required"`` (Mistral's ``"any"``), a named function, else auto."""
    if choice == "none":
        return "none", None
    if choice in ("required", "any"):
        return "required", None
    fn = choice.get("function") if isinstance(choice, dict) else None
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return "named", fn["name"]
    return "auto", None


def last_is_tool(messages: Any) -> bool:
    """Whether the last message is a tool's result (role ``tool``)."""
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return False
    return messages[-1].get("role") == "tool"


def response_format(value: Any) -> tuple[bool, Any]:
    """(JSON wanted, its schema): ``json_schema`` gives its ``schema``, ``json_object`` any
    JSON object."""
    if not isinstance(value, dict):
        return False, None
    if value.get("type") == "json_schema":
        spec = value.get("json_schema")
        return True, spec.get("schema") if isinstance(spec, dict) else None
    return value.get("type") == "json_object", None
