"""Groq's OpenAI-compatible wire format: what differs from OpenAI's.

Groq adds timing fields to ``usage``, an ``x_groq`` object (request id; in streams the
usage on the last chunk, whether or not ``stream_options.include_usage`` was sent), and
sends in-stream errors as ``event: error``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

from zerda.testing import _ids
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script, ScriptedCall
from zerda.testing.wires.openai.render import OpenAIRenderer, given_usage_details, script_usage, sse


class GroqRenderer(OpenAIRenderer):
    provider = "groq"
    stream_content_type = "text/event-stream"
    # Groq's parsed reasoning (reasoning_format "parsed"): message.reasoning, delta.reasoning
    # (https://console.groq.com/docs/reasoning).
    reasoning_field = "reasoning"

    def response_id(self) -> str:
        return f"chatcmpl-{uuid.uuid4()}"

    def usage(self, script: Script) -> dict[str, Any]:
        prompt, completion = script_usage(script)
        return {
            "queue_time": 0.001,
            "prompt_tokens": prompt,
            "prompt_time": 0.002,
            "completion_tokens": completion,
            "completion_time": 0.003,
            "total_tokens": prompt + completion,
            "total_time": 0.005,
            **given_usage_details(script, reasoning=True),
        }

    def envelope(self, script: Script, req: RecordedRequest, obj: str, rid: str) -> dict[str, Any]:
        base = super().envelope(script, req, obj, rid)
        base["service_tier"] = "on_demand"
        return base

    def completion(
        self, script: Script, req: RecordedRequest, calls: list[ScriptedCall]
    ) -> dict[str, Any]:
        body = super().completion(script, req, calls)
        return {**body, "usage_breakdown": None, "x_groq": {"id": _request_id()}}

    def message(self, script: Script, calls: list[ScriptedCall]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": script.text}
        message.update(self.reasoning_part(script))
        if calls:
            message["tool_calls"] = [self.tool_call(c) for c in calls]
        if script.server_tool_calls:
            message["executed_tools"] = [
                self.executed_tool(i, c, script) for i, c in _numbered(script)
            ]
        if script.citations:
            message["annotations"] = self.annotations(script)
        return message

    # -- built-in tools (https://console.groq.com/docs/tool-use/built-in-tools) -----------

    def wants_gpt_oss(self, script: Script) -> bool:
        return "gpt-oss" in (script.model or "")

    def executed_tool(self, index: int, call: dict[str, Any], script: Script) -> dict[str, Any]:
        """One scripted server call as ``message.executed_tools[i]``: Compound's shape
        (``type`` the tool: search / visit / python, JSON arguments, ``output``), or gpt-oss's
        (``type: "function"``, the tool in ``name``, a python call's code as plain text and its
        output in ``code_results``), as the code execution page shows both
        (https://console.groq.com/docs/code-execution)."""
        name = _native_name(call)
        arguments = call.get("input") or {}
        output = call.get("output")
        if self.wants_gpt_oss(script) and name == "python":
            code = arguments.get("code") if set(arguments) == {"code"} else None
            return {
                "name": name,
                "index": index,
                "type": "function",
                "arguments": code if isinstance(code, str) else json.dumps(arguments),
                "search_results": {"results": None},
                "code_results": [{"text": output or ""}],
            }
        return {
            "index": index,
            "type": name,
            "arguments": json.dumps(arguments, ensure_ascii=False),
            "output": output or "",
            "search_results": {"results": []},
        }

    def annotations(self, script: Script) -> list[dict[str, Any]]:
        """Groq's annotations are citations of the request's documents (its SDK's
        ``document_citation``, character offsets into the content): a scripted citation's
        title (else its URL) is the document id."""
        return [
            {
                "type": "document_citation",
                "document_citation": {
                    "document_id": c.get("title") or c.get("url") or "",
                    "start_index": c["start"],
                    "end_index": c["end"],
                },
            }
            for c in script.citations
        ]

    def server_call_deltas(self, script: Script) -> list[dict[str, Any]]:
        """Each executed tool twice, as pydantic-ai's Groq stream reader expects: its
        arguments first, then its results under the same index."""
        out: list[dict[str, Any]] = []
        for index, call in _numbered(script):
            whole = self.executed_tool(index, call, script)
            head = {k: v for k, v in whole.items() if k in ("index", "type", "name", "arguments")}
            tail = {k: v for k, v in whole.items() if k != "arguments"}
            out += [{"executed_tools": [head]}, {"executed_tools": [tail]}]
        return out

    def first_delta(self, script: Script) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    def render(self, script: Script, req: RecordedRequest) -> Reply:
        # The request's model decides the executed tools' shape (gpt-oss or Compound): the
        # script carries it (the body echoes the same model).
        if script.server_tool_calls and script.model is None:
            script = replace(script, model=self.model(script, req))
        return super().render(script, req)

    def finish_chunk(self, script: Script, base: dict[str, Any]) -> dict[str, Any]:
        chunk = super().finish_chunk(script, base)
        usage = self.usage(script)
        return {**chunk, "x_groq": {"id": _request_id(), "usage": usage}, "usage": usage}

    def stream_usage_chunks(
        self, script: Script, req: RecordedRequest, base: dict[str, Any]
    ) -> list[dict[str, Any]]:
        return []  # usage rides on the finish chunk

    def error_body(self, err: ErrorReply) -> dict[str, Any]:
        error = super().error_body(err)["error"]
        if "param" not in (err.fields or {}):
            del error["param"]  # Groq's errors carry no param
        return {"error": error}

    def render_stream_error(self, err: ErrorReply) -> bytes:
        """Groq's in-stream error: ``event: error`` with the error and its status, e.g.
        ``fields={"code": "tool_use_failed", "failed_generation": "..."}`` for a model
        output Groq could not parse as a tool call (groq-python handles ``event: error``,
        https://github.com/groq/groq-python/pull/119)."""
        error = {**self.error_body(err)["error"], "status_code": err.status}
        return sse({"error": error}, event="error")

    def stream_envelope(self, base: dict[str, Any]) -> dict[str, Any]:
        # Groq's stream chunks carry no service_tier (recorded groq streams).
        return {k: v for k, v in base.items() if k != "service_tier"}


# A unified server call type -> the name Compound gives the executed tool.
_COMPOUND_NAMES = {"web_search": "search", "web_fetch": "visit", "code_execution": "python"}


def _native_name(call: dict[str, Any]) -> str:
    name = call.get("name")
    if isinstance(name, str) and name:
        return name
    return _COMPOUND_NAMES.get(call["type"], call["type"])


def _numbered(script: Script) -> list[tuple[int, dict[str, Any]]]:
    return list(enumerate(script.server_tool_calls))


def _request_id() -> str:
    return "req_" + _ids.mistral_call_id().lower() + _ids.mistral_call_id().lower()


_RENDERER = GroqRenderer()
wants_stream = _RENDERER.wants_stream
render = _RENDERER.render
render_error = _RENDERER.render_error
render_stream_error = _RENDERER.render_stream_error
