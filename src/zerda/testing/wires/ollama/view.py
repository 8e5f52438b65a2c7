"""An Ollama ``/api/chat`` request as a model reads it, for
``MockLLMServer.answer_like_a_model`` (``zerda/testing/_modellike.py``): its function tools
(Ollama has no tool_choice: the model decides), whether the last message is a tool's
result, and ``format`` (``"json"`` or a JSON Schema:
https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion). Its
OpenAI-compatible ``/v1/chat/completions`` is read as OpenAI's."""

from __future__ import annotations

from zerda.testing._modellike import RequestView
from zerda.testing._script import RecordedRequest
from zerda.testing.wires.openai import view as chat_completions


def read(req: RecordedRequest) -> RequestView:
    if req.path.startswith("/v1/"):
        return chat_completions.read(req)
    body = req.body if isinstance(req.body, dict) else {}
    fmt = body.get("format")
    return RequestView(
        tools=chat_completions.function_tools(body.get("tools")),
        after_tool_result=chat_completions.last_is_tool(body.get("messages")),
        wants_json=fmt == "json" or isinstance(fmt, dict),
        schema=fmt if isinstance(fmt, dict) else None,
    )
