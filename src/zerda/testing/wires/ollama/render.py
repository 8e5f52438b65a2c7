"""Ollama's native /api/chat wire format (JSON and NDJSON), plus its OpenAI-compatible
/v1/chat/completions endpoint.

Native responses carry tool-call arguments as objects, an ``id`` per call (``call_`` and 8
lowercase alphanumerics, unless the script gives one) and ``function.index``, say ``done_reason: "stop"`` even when calling tools, and count
tokens as ``prompt_eval_count``/``eval_count``. A stream sends all tool calls in one chunk,
as Ollama does, so ``fragments`` and ``interleave`` apply to text only.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from zerda.testing import _ids
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script, ScriptedCall
from zerda.testing.wires.openai.render import (
    OpenAIRenderer,
    resolve_stop,
    script_usage,
    split_fragments,
)

# Ollama has no content filter (done_reason is stop or length): a model that refuses says so
# in its text and stops, so a Script's refusal ends as end_turn here.
REFUSAL_STOP = "end_turn"

# Unified stop reason -> done_reason. Ollama has only stop and length; the others are sent
# as their unified names, which a client can only treat as "other".
_DONE_REASONS = {
    "end_turn": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "content_filter": "content_filter",
    "other": "other",
}


class OllamaOpenAIRenderer(OpenAIRenderer):
    """Ollama's /v1/chat/completions: OpenAI's shape with Ollama's ids and fingerprint."""

    provider = "ollama"
    stream_content_type = "text/event-stream"
    # Ollama's /v1 reasoning (recording ollama/pydantic-ai__test_ollama.test_ollama_cloud_tool_output__i00).
    reasoning_field = "reasoning"

    def new_call_id(self) -> str:
        return "call_" + _ids.mistral_call_id().lower()[:8]  # e.g. call_mo1wm122

    def envelope(self, script: Script, req: RecordedRequest, obj: str, rid: str) -> dict[str, Any]:
        base = super().envelope(script, req, obj, rid)
        del base["service_tier"]
        return {**base, "id": "chatcmpl-" + rid[-3:], "system_fingerprint": "fp_ollama"}


_OPENAI_COMPAT = OllamaOpenAIRenderer()


def _is_openai_compat(req: RecordedRequest) -> bool:
    return req.path.startswith("/v1/")


def wants_stream(req: RecordedRequest) -> bool:
    if _is_openai_compat(req):
        return _OPENAI_COMPAT.wants_stream(req)
    # /api/chat streams unless the request says "stream": false.
    return not (isinstance(req.body, dict) and req.body.get("stream") is False)


def render(script: Script, req: RecordedRequest) -> Reply:
    if _is_openai_compat(req):
        return _OPENAI_COMPAT.render(script, req)
    if wants_stream(req):
        lines = [_ndjson(c) for c in _stream_chunks(script, req)]
        headers = {"content-type": "application/x-ndjson"}
        return Reply(200, headers, chunks=lines, closing_chunks=1)  # the "done" line
    body = {**_head(script, req), "message": _message(script), **_done(script)}
    return Reply(200, {"content-type": "application/json; charset=utf-8"}, body=_dumps(body))


def render_error(err: ErrorReply) -> Reply:
    return Reply(
        err.status,
        {"content-type": "application/json; charset=utf-8"},
        # A body of its own: the /v1 endpoint answers in OpenAI's shape (validate.py).
        body=_dumps(err.body if err.body is not None else {"error": err.message}),
    )


def render_stream_error(err: ErrorReply) -> bytes:
    """Ollama reports a failure mid-stream as one ``{"error": ...}`` line."""
    return _ndjson({"error": err.message})


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


def _ndjson(obj: Any) -> bytes:
    return _dumps(obj) + b"\n"


def _head(script: Script, req: RecordedRequest) -> dict[str, Any]:
    model = script.model
    if model is None and isinstance(req.body, dict):
        model = req.body.get("model")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"model": model or "mock-model", "created_at": stamp}


def _tool_call(call: ScriptedCall, index: int) -> dict[str, Any]:
    """Today's native tool call: the ``id`` and ``function.index`` (recording
    ollama/langchaingo@8d98658ae2a1__llms.ollama.TestCloudToolCall__i00:
    ``{"id": "call_mo1wm122", "function": {"index": 0, "name", "arguments"}}``)."""
    # A str argument is sent as is: the only way to show a client non-object arguments.
    function = {"index": index, "name": call.name, "arguments": call.arguments}
    return {"id": call.id, "function": function}


def _tool_calls(script: Script) -> list[dict[str, Any]]:
    calls = _OPENAI_COMPAT.with_ids(script.tool_calls)  # Ollama's one id style on both paths
    return [_tool_call(c, i) for i, c in enumerate(calls)]


def _message(script: Script) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": script.text or ""}
    if script.reasoning:  # https://docs.ollama.com/capabilities/thinking
        message["thinking"] = script.reasoning
    if script.tool_calls:
        message["tool_calls"] = _tool_calls(script)
    return message


def _done(script: Script) -> dict[str, Any]:
    reason = script.native_stop_reason or _DONE_REASONS[resolve_stop(script)]
    prompt, completion = script_usage(script)
    return {
        "done": True,
        "done_reason": reason,
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": 200_000,
        "eval_count": completion,
        "eval_duration": 700_000,
    }


def _stream_chunks(script: Script, req: RecordedRequest) -> list[dict[str, Any]]:
    head = _head(script, req)
    thinking = split_fragments(script.reasoning, script.fragments) if script.reasoning else []
    texts = split_fragments(script.text, script.fragments) if script.text else []
    # The thinking streams first, in chunks of its own with an empty content.
    messages = [{"role": "assistant", "content": "", "thinking": piece} for piece in thinking]
    messages += [{"role": "assistant", "content": piece} for piece in texts]
    out = [{**head, "message": message, "done": False} for message in messages]
    if script.tool_calls:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "",
            "tool_calls": _tool_calls(script),
        }
        out.append({**head, "message": message, "done": False})
    final = {**head, "message": {"role": "assistant", "content": ""}, **_done(script)}
    out.append(final)
    return out
