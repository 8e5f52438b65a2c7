"""Mistral's chat completions wire format: what differs from OpenAI's.

Mistral's tool-call ids are 9 characters ``[a-zA-Z0-9]``; messages carry
``"tool_calls": null`` when there are none; a stream sends each tool call whole in one
delta (so ``fragments`` and ``interleave`` apply to text only) and the usage on the finish
chunk; errors are ``{"object": "error", ...}``.
"""

from __future__ import annotations

import uuid
from typing import Any

from zerda.testing import _ids
from zerda.testing._script import ErrorReply, RecordedRequest, Script, ScriptedCall
from zerda.testing.wires.openai.render import (
    OpenAIRenderer,
    arguments_text,
    given_usage_details,
    script_usage,
)


class MistralRenderer(OpenAIRenderer):
    provider = "mistral"

    def new_call_id(self) -> str:
        return _ids.mistral_call_id()

    def response_id(self) -> str:
        return uuid.uuid4().hex

    def usage(self, script: Script) -> dict[str, Any]:
        prompt, completion = script_usage(script)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            **given_usage_details(script, reasoning=False),
        }

    def envelope(self, script: Script, req: RecordedRequest, obj: str, rid: str) -> dict[str, Any]:
        base = super().envelope(script, req, obj, rid)
        del base["service_tier"], base["system_fingerprint"]
        return base

    def message(self, script: Script, calls: list[ScriptedCall]) -> dict[str, Any]:
        tool_calls = [self.tool_call(c, i) for i, c in enumerate(calls)] or None
        content: Any = script.text or ""
        if script.reasoning:  # a thinking chunk, then the text's (recorded mistral-small answer)
            thinking = {**_thinking(script.reasoning), "closed": True}
            content = [thinking, *([{"type": "text", "text": script.text}] if script.text else [])]
        return {"role": "assistant", "content": content, "tool_calls": tool_calls}

    def citation_deltas(self, script: Script) -> list[dict[str, Any]]:
        """None: Mistral's chat completions carry no annotations (its message above has
        none either), so a script's citations are not rendered here."""
        return []

    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        """A thinking chunk as the content of a delta (recording
        mistral/pydantic-ai__test_mistral.test_mistral_model_thinking_part_iter__i00)."""
        return {"content": [_thinking(piece)]}

    def choice_extras(self) -> dict[str, Any]:
        return {}  # Mistral's choices carry no logprobs (recorded mistral exchanges)

    def tool_call(self, call: ScriptedCall, index: int | None = None) -> dict[str, Any]:
        # No "type" (recorded mistral exchanges); JSON responses number the calls.
        fn = {"name": call.name, "arguments": arguments_text(call)}
        return {"id": call.id, "function": fn, "index": index or 0}

    def first_delta(self, script: Script) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    def call_deltas(self, calls: list[ScriptedCall], script: Script) -> list[dict[str, Any]]:
        """All calls whole in one delta, with no ``index``: real Mistral streams omit it
        (recording mistral/magentic__chat_model.test_mistral_chat_model.test_mistral_chat_model_acomplete_async_parallel_function_call__i00),
        which clients that key calls by index must survive."""
        if not calls:
            return []
        return [{"tool_calls": [self._whole_call(c) for c in calls]}]

    @staticmethod
    def _whole_call(call: ScriptedCall) -> dict[str, Any]:
        return {"id": call.id, "function": {"name": call.name, "arguments": arguments_text(call)}}

    def finish_chunk(self, script: Script, base: dict[str, Any]) -> dict[str, Any]:
        reason = self.finish_reason(script)
        choice = {"index": 0, "delta": {"content": ""}, "finish_reason": reason}
        return {**base, "choices": [choice], "usage": self.usage(script)}

    def stream_usage_chunks(
        self, script: Script, req: RecordedRequest, base: dict[str, Any]
    ) -> list[dict[str, Any]]:
        return []  # usage rides on the finish chunk

    def error_body(self, err: ErrorReply) -> dict[str, Any]:
        kind = err.error_type or super().error_body(err)["error"]["type"]
        body = {
            "object": "error",
            "message": err.message,
            "type": kind,
            "param": None,
            "code": str(err.status),
        }
        return {**body, **(err.fields or {})}


def _thinking(text: str) -> dict[str, Any]:
    """Mistral's reasoning content chunk (https://docs.mistral.ai/capabilities/reasoning/;
    recording mistral/pydantic-ai__test_thinking_wire_contract.test_reasoning_wire_contract_mistral-small-thinking-high__i00)."""
    return {"type": "thinking", "thinking": [{"type": "text", "text": text}]}


_RENDERER = MistralRenderer()
wants_stream = _RENDERER.wants_stream
render = _RENDERER.render
render_error = _RENDERER.render_error
render_stream_error = _RENDERER.render_stream_error
