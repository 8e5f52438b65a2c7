"""A Converse request as a model reads it, for ``MockLLMServer.answer_like_a_model``
(``zerda/testing/_modellike.py``): ``toolConfig.tools[].toolSpec`` and ``toolChoice``
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolConfiguration.html),
whether the last message holds ``toolResult`` blocks, and ``outputConfig.textFormat``, whose
schema is JSON text
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputFormat.html)."""

from __future__ import annotations

import json
from typing import Any

from zerda.testing._modellike import Choice, OfferedTool, RequestView, dict_at
from zerda.testing._script import RecordedRequest


def read(req: RecordedRequest) -> RequestView:
    body = req.body if isinstance(req.body, dict) else {}
    config = dict_at(body, "toolConfig")
    choice, forced = _tool_choice(config.get("toolChoice"))
    schema = _output_schema(body.get("outputConfig"))
    return RequestView(
        tools=_tool_specs(config.get("tools")),
        choice=choice,
        forced=forced,
        after_tool_result=_last_holds_tool_result(body.get("messages")),
        wants_json=schema is not None,
        schema=schema,
    )


def _tool_specs(tools: Any) -> tuple[OfferedTool, ...]:
    out = []
    for tool in tools if isinstance(tools, list) else []:
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            schema = spec.get("inputSchema")
            out.append(
                OfferedTool(spec["name"], schema.get("json") if isinstance(schema, dict) else None)
            )
    return tuple(out)


def _tool_choice(choice: Any) -> tuple[Choice, str | None]:
    """``{"any": {}}`` requires a call, ``{"tool": {"name"}}`` names one (Converse has no
    "none": Zerda leaves the tools out)."""
    if not isinstance(choice, dict):
        return "auto", None
    if "any" in choice:
        return "required", None
    tool = choice.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        return "named", tool["name"]
    return "auto", None


def _last_holds_tool_result(messages: Any) -> bool:
    last = messages[-1] if isinstance(messages, list) and messages else None
    content = last.get("content") if isinstance(last, dict) else None
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and "toolResult" in b for b in blocks)


def _output_schema(config: Any) -> Any:
    """``outputConfig.textFormat.structure.jsonSchema.schema``, parsed; None without one."""
    try:
        text = config["textFormat"]["structure"]["jsonSchema"]["schema"]
        return json.loads(text) if isinstance(text, str) else text
    except (KeyError, TypeError, ValueError):
        return None
