"""Groq's OpenAI-compatible wire format: what differs from OpenAI's.

Groq adds timing fields to ``usage``, an ``x_groq`` object (request id; in streams the
usage on the last chunk, whether or not ``stream_options.include_usage`` was sent), and
sends in-stream errors as ``event: error``.
"""

from __future__ import annotations

import uuid
from typing import Any

from zerda.testing import _ids
from zerda.testing._script import ErrorReply, RecordedRequest, Script, ScriptedCall
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
        return message

    def first_delta(self, script: Script) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

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


def _request_id() -> str:
    return "req_" + _ids.mistral_call_id().lower() + _ids.mistral_call_id().lower()


_RENDERER = GroqRenderer()
wants_stream = _RENDERER.wants_stream
render = _RENDERER.render
render_error = _RENDERER.render_error
render_stream_error = _RENDERER.render_stream_error
