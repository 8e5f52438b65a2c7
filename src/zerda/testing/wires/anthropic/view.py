"""A Messages API request as a model reads it, for ``MockLLMServer.answer_like_a_model``
(``zerda/testing/_modellike.py``): its client tools (``input_schema``; the server tools,
web search and the like, have none), ``tool_choice``
(https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use),
whether the last message holds ``tool_result`` blocks, and ``output_config.format``
(https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs; the beta's
``output_format`` read too). Claude on Bedrock and on Vertex AI send the same body."""

from __future__ import annotations

from typing import Any

from zerda.testing._modellike import Choice, OfferedTool, RequestView, dict_at
from zerda.testing._script import RecordedRequest

_CHOICES: dict[Any, Choice] = {"none": "none", "any": "required", "tool": "named"}


def read(req: RecordedRequest) -> RequestView:
    body = req.body if isinstance(req.body, dict) else {}
    choice = dict_at(body, "tool_choice")
    fmt = dict_at(body, "output_config").get("format", body.get("output_format"))
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        fmt = None
    return RequestView(
        tools=_client_tools(body.get("tools")),
        choice=_CHOICES.get(choice.get("type"), "auto"),
        forced=choice.get("name") if isinstance(choice.get("name"), str) else None,
        after_tool_result=_last_holds_tool_result(body.get("messages")),
        wants_json=fmt is not None,
        schema=None if fmt is None else fmt.get("schema"),
    )


def _client_tools(tools: Any) -> tuple[OfferedTool, ...]:
    return tuple(
        OfferedTool(t["name"], t.get("input_schema"))
        for t in (tools if isinstance(tools, list) else [])
        if isinstance(t, dict) and "input_schema" in t and isinstance(t.get("name"), str)
    )


def _last_holds_tool_result(messages: Any) -> bool:
    last = messages[-1] if isinstance(messages, list) and messages else None
    content = last.get("content") if isinstance(last, dict) else None
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
