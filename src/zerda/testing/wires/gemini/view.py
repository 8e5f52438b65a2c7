"""A generateContent request as a model reads it, for ``MockLLMServer.answer_like_a_model``
(``zerda/testing/_modellike.py``): ``tools[].functionDeclarations``, ``toolConfig.
functionCallingConfig`` (mode ``AUTO``/``ANY``/``NONE``/``VALIDATED`` and
``allowedFunctionNames``: https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes),
whether the last turn holds ``functionResponse`` parts, and ``generationConfig``'s
``responseMimeType`` with ``responseJsonSchema`` or ``responseSchema``
(https://ai.google.dev/gemini-api/docs/structured-output). google-genai sends some models as
they are, in snake_case (Vertex AI's ``allowed_function_names``), so both spellings are
read. Vertex AI sends the same body."""

from __future__ import annotations

from typing import Any

from zerda.testing._modellike import Choice, OfferedTool, RequestView
from zerda.testing._script import RecordedRequest

_MODES: dict[Any, Choice] = {"NONE": "none", "ANY": "required"}


def _get(obj: Any, camel: str) -> Any:
    """``obj[camel]``, or its snake_case spelling; None when neither is there."""
    if not isinstance(obj, dict):
        return None
    if camel in obj:
        return obj[camel]
    return obj.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def read(req: RecordedRequest) -> RequestView:
    body = req.body if isinstance(req.body, dict) else {}
    calling = _get(_get(body, "toolConfig"), "functionCallingConfig")
    mode = str(_get(calling, "mode") or "AUTO").upper()
    allowed = _get(calling, "allowedFunctionNames")
    tools = _declarations(_get(body, "tools"))
    if isinstance(allowed, list) and allowed:
        tools = tuple(t for t in tools if t.name in allowed)
    choice = _MODES.get(mode, "auto")
    forced = None
    if choice == "required" and len(tools) == 1 and isinstance(allowed, list):
        choice, forced = "named", tools[0].name
    config = _get(body, "generationConfig")
    schema = _get(config, "responseJsonSchema") or _get(config, "responseSchema")
    return RequestView(
        tools=tools,
        choice=choice,
        forced=forced,
        after_tool_result=_last_holds_function_response(_get(body, "contents")),
        wants_json=_get(config, "responseMimeType") == "application/json" or schema is not None,
        schema=schema,
    )


def _declarations(tools: Any) -> tuple[OfferedTool, ...]:
    """Every function declaration, its schema from ``parametersJsonSchema`` (JSON Schema)
    or ``parameters`` (Gemini's Schema)."""
    out = []
    for tool in tools if isinstance(tools, list) else []:
        declarations = _get(tool, "functionDeclarations")
        for decl in declarations if isinstance(declarations, list) else []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                schema = _get(decl, "parametersJsonSchema") or decl.get("parameters")
                out.append(OfferedTool(decl["name"], schema))
    return tuple(out)


def _last_holds_function_response(contents: Any) -> bool:
    last = contents[-1] if isinstance(contents, list) and contents else None
    parts = _get(last, "parts")
    return isinstance(parts, list) and any(_get(p, "functionResponse") is not None for p in parts)
