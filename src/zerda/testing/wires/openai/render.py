"""OpenAI Chat Completions wire format (JSON and SSE), and the base of Groq and Mistral.

``OpenAIRenderer`` holds the shared shape; the Groq and Mistral modules subclass it and
override only what their APIs do differently (ids, usage fields, where usage goes in a
stream, error bodies).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from zerda.testing import _ids
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script, ScriptedCall

DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5}

# A Script's refusal is carried as such (message.refusal, delta.refusal), not as text.
REFUSAL_FIELD = True

# Unified stop reason -> finish_reason (DESIGN.md §3, inverted). "other" has no native
# counterpart, so an unrecognised value is sent, which is what "anything else" means.
_FINISH_REASONS = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "content_filter": "content_filter",
    "other": "other",
}

# status -> (type, code) as OpenAI sends them.
_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    409: ("conflict_error", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def split_fragments(text: str, n: int) -> list[str]:
    """Split ``text`` into at most ``n`` consecutive, non-empty pieces (one piece when
    ``n <= 1`` or the text is empty)."""
    if n <= 1 or len(text) <= 1:
        return [text]
    size = math.ceil(len(text) / n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def arguments_text(call: ScriptedCall) -> str:
    """Arguments as the JSON text OpenAI-likes send; a str is sent verbatim."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def resolve_stop(script: Script) -> str:
    """The unified stop reason, with "auto" resolved from the presence of tool calls."""
    if script.stop_reason == "auto":
        return "tool_use" if script.tool_calls else "end_turn"
    return script.stop_reason


def script_usage(script: Script) -> tuple[int, int]:
    """(input_tokens, output_tokens), defaults filled in."""
    usage = {**DEFAULT_USAGE, **(script.usage or {})}
    return int(usage["input_tokens"]), int(usage["output_tokens"])


def usage_part(script: Script, key: str) -> int:
    """An optional usage count of the script (``cache_read_tokens``, ``cache_write_tokens``,
    ``reasoning_tokens``, in DESIGN.md §12's sense), 0 when not given."""
    return int((script.usage or {}).get(key) or 0)


def given_usage_details(script: Script, *, reasoning: bool) -> dict[str, Any]:
    """``prompt_tokens_details.cached_tokens`` and (with ``reasoning``)
    ``completion_tokens_details.reasoning_tokens``, only when the script gives them: Groq
    and Mistral send no zero details, and Mistral no reasoning count (their recordings)."""
    cached = usage_part(script, "cache_read_tokens")
    prompt = {"cached_tokens": cached} if cached else {}
    thought = usage_part(script, "reasoning_tokens") if reasoning else 0
    completion = {"reasoning_tokens": thought} if thought else {}
    details = {"prompt_tokens_details": prompt, "completion_tokens_details": completion}
    return {k: v for k, v in details.items() if v}


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: ``data: <json>`` (after ``event:`` when named)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class OpenAIRenderer:
    """Renders Scripts as OpenAI's /v1/chat/completions responses."""

    provider = "openai"
    json_content_type = "application/json"
    stream_content_type = "text/event-stream; charset=utf-8"
    # Where a Script's reasoning goes on the message and the delta: reasoning_content, as
    # DeepSeek (https://api-docs.deepseek.com/guides/reasoning_model), vLLM, xAI and
    # Fireworks send it (OpenAI's own Chat Completions return no reasoning text).
    reasoning_field = "reasoning_content"

    # -- public interface -------------------------------------------------------------

    def wants_stream(self, req: RecordedRequest) -> bool:
        return isinstance(req.body, dict) and bool(req.body.get("stream"))

    def render(self, script: Script, req: RecordedRequest) -> Reply:
        calls = self.with_ids(script.tool_calls)
        if self.wants_stream(req):
            chunks, closing = self.stream_chunks(script, req, calls)
            headers = {"content-type": self.stream_content_type}
            return Reply(200, headers, chunks=chunks, closing_chunks=closing)
        body = json.dumps(self.completion(script, req, calls), ensure_ascii=False).encode()
        return Reply(200, {"content-type": self.json_content_type}, body=body)

    def render_error(self, err: ErrorReply) -> Reply:
        body = json.dumps(self.error_body(err)).encode()
        return Reply(err.status, {"content-type": self.json_content_type}, body=body)

    def render_stream_error(self, err: ErrorReply) -> bytes:
        return sse(self.error_body(err))

    # -- pieces subclasses override ---------------------------------------------------

    def new_call_id(self) -> str:
        return _ids.openai_call_id()

    def response_id(self) -> str:
        return _ids.completion_id()

    def finish_reason(self, script: Script) -> str:
        if script.native_stop_reason is not None:
            return script.native_stop_reason
        return _FINISH_REASONS[resolve_stop(script)]

    def usage(self, script: Script) -> dict[str, Any]:
        prompt, completion = script_usage(script)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            **self.usage_details(script),
        }

    def usage_details(self, script: Script) -> dict[str, Any]:
        """The token details: prompt_tokens and completion_tokens already include them."""
        prompt = {"cached_tokens": usage_part(script, "cache_read_tokens"), "audio_tokens": 0}
        if usage_part(script, "cache_write_tokens"):
            prompt["cache_write_tokens"] = usage_part(script, "cache_write_tokens")
        return {
            "prompt_tokens_details": prompt,
            "completion_tokens_details": {
                "reasoning_tokens": usage_part(script, "reasoning_tokens"),
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def envelope(self, script: Script, req: RecordedRequest, obj: str, rid: str) -> dict[str, Any]:
        """The fields every response object and stream chunk carries."""
        return {
            "id": rid,
            "object": obj,
            "created": int(time.time()),
            "model": self.model(script, req),
            "service_tier": "default",
            "system_fingerprint": "fp_mock",
        }

    def stream_envelope(self, base: dict[str, Any]) -> dict[str, Any]:
        """The envelope of stream chunks (the JSON one unless a provider differs)."""
        return base

    def choice_extras(self) -> dict[str, Any]:
        """Fields every choice carries besides index, message/delta and finish_reason."""
        return {"logprobs": None}

    def message(self, script: Script, calls: list[ScriptedCall]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": script.text}
        message.update(self.reasoning_part(script))
        if calls:
            message["tool_calls"] = [self.tool_call(c) for c in calls]
        # A refusal comes with content null: https://platform.openai.com/docs/guides/structured-outputs#refusals
        message["refusal"] = script.refusal
        message["annotations"] = self.annotations(script)
        return message

    def annotations(self, script: Script) -> list[dict[str, Any]]:
        """The script's citations as ``url_citation`` annotations, character offsets into
        the content (https://platform.openai.com/docs/api-reference/chat/object). Chat
        Completions has no item for the search itself: a scripted server call is not sent
        (Zerda reads an answer citing URLs as one web_search call)."""
        return [
            {
                "type": "url_citation",
                "url_citation": {
                    "end_index": c["end"],
                    "start_index": c["start"],
                    "title": c.get("title") or "",
                    "url": c.get("url") or "",
                },
            }
            for c in script.citations
        ]

    def server_call_deltas(self, script: Script) -> list[dict[str, Any]]:
        """Stream deltas of the calls the provider ran, before the text (none here)."""
        return []

    def citation_deltas(self, script: Script) -> list[dict[str, Any]]:
        """The citations' delta after the text: the annotations, whole, with no content (a
        search model's last delta, seen in https://github.com/openai/openai-java/issues/297)."""
        annotations = self.annotations(script)
        return [{"annotations": annotations}] if annotations else []

    def reasoning_part(self, script: Script) -> dict[str, Any]:
        """The message field carrying the script's reasoning (none without one)."""
        return {self.reasoning_field: script.reasoning} if script.reasoning else {}

    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        """A stream delta carrying a piece of the reasoning."""
        return {self.reasoning_field: piece}

    def tool_call(self, call: ScriptedCall, index: int | None = None) -> dict[str, Any]:
        return {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments_text(call)},
        }

    def error_body(self, err: ErrorReply) -> dict[str, Any]:
        kind, code = _ERROR_KINDS.get(err.status, ("server_error", None))
        error = {
            "message": err.message,
            "type": err.error_type or kind,
            "param": None,
            "code": code,
        }
        return {"error": {**error, **(err.fields or {})}}

    def stream_usage_chunks(
        self, script: Script, req: RecordedRequest, base: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """OpenAI sends usage in a last chunk with no choices, only when asked to."""
        options = req.body.get("stream_options") if isinstance(req.body, dict) else None
        if not (isinstance(options, dict) and options.get("include_usage")):
            return []
        return [{**base, "choices": [], "usage": self.usage(script)}]

    def finish_chunk(self, script: Script, base: dict[str, Any]) -> dict[str, Any]:
        reason = self.finish_reason(script)
        choice = {"index": 0, "delta": {}, **self.choice_extras(), "finish_reason": reason}
        return {**base, "choices": [choice]}

    def first_delta(self, script: Script) -> dict[str, Any]:
        if script.refusal:  # as a refusal stream starts: content null, an empty refusal
            return {"role": "assistant", "content": None, "refusal": ""}
        return {"role": "assistant", "content": "", "refusal": None}

    def call_deltas(self, calls: list[ScriptedCall], script: Script) -> list[dict[str, Any]]:
        """Tool-call deltas: a header per call (id, name, empty arguments), then argument
        fragments by ``index``; interleaved across calls when the script asks."""
        headers = [self.call_header(c, i) for i, c in enumerate(calls)]
        pieces = [
            [self.call_fragment(i, p) for p in split_fragments(arguments_text(c), script.fragments)]
            for i, c in enumerate(calls)
        ]
        if not script.interleave:
            return [d for h, ps in zip(headers, pieces, strict=True) for d in (h, *ps)]
        out = list(headers)
        for row in range(max((len(ps) for ps in pieces), default=0)):
            out.extend(ps[row] for ps in pieces if row < len(ps))
        return out

    def call_header(self, call: ScriptedCall, index: int) -> dict[str, Any]:
        fn = {"name": call.name, "arguments": ""}
        return {"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": fn}]}

    def call_fragment(self, index: int, piece: str) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}

    # -- assembly -----------------------------------------------------------------------

    def model(self, script: Script, req: RecordedRequest) -> str:
        if script.model:
            return script.model
        if isinstance(req.body, dict) and isinstance(req.body.get("model"), str):
            return str(req.body["model"])
        return "mock-model"

    def with_ids(self, calls: list[ScriptedCall]) -> list[ScriptedCall]:
        """The calls, each with an id in this provider's style when it had none."""
        return [
            c if c.id is not None else ScriptedCall(c.name, c.arguments, self.new_call_id())
            for c in calls
        ]

    def completion(
        self, script: Script, req: RecordedRequest, calls: list[ScriptedCall]
    ) -> dict[str, Any]:
        choice = {
            "index": 0,
            "message": self.message(script, calls),
            **self.choice_extras(),
            "finish_reason": self.finish_reason(script),
        }
        body = self.envelope(script, req, "chat.completion", self.response_id())
        return {**body, "choices": [choice], "usage": self.usage(script)}

    def deltas(self, script: Script, calls: list[ScriptedCall]) -> list[dict[str, Any]]:
        """The first delta, the reasoning's, the server calls', the text's and its
        citations', the refusal's, the calls'."""
        out = [self.first_delta(script)]
        out += self.text_deltas(self.reasoning_delta, script.reasoning, script)
        out += self.server_call_deltas(script)
        out += self.text_deltas(lambda p: {"content": p}, script.text, script)
        out += self.citation_deltas(script)
        out += self.text_deltas(lambda p: {"refusal": p}, script.refusal, script)
        out.extend(self.call_deltas(calls, script))
        return out

    @staticmethod
    def text_deltas(
        delta: Callable[[str], dict[str, Any]], text: str | None, script: Script
    ) -> list[dict[str, Any]]:
        """A text in the script's number of pieces, each as ``delta`` makes it."""
        return [delta(p) for p in split_fragments(text, script.fragments)] if text else []

    def stream_chunks(
        self, script: Script, req: RecordedRequest, calls: list[ScriptedCall]
    ) -> tuple[list[bytes], int]:
        """The SSE chunks, and how many of them close the stream (finish, usage, [DONE])."""
        base = self.stream_envelope(
            self.envelope(script, req, "chat.completion.chunk", self.response_id())
        )
        content = [
            {
                **base,
                "choices": [
                    {"index": 0, "delta": d, **self.choice_extras(), "finish_reason": None}
                ],
            }
            for d in self.deltas(script, calls)
        ]
        closing = [self.finish_chunk(script, base), *self.stream_usage_chunks(script, req, base)]
        chunks = [sse(e) for e in content + closing] + [b"data: [DONE]\n\n"]
        return chunks, len(closing) + 1


_RENDERER = OpenAIRenderer()
wants_stream = _RENDERER.wants_stream


def render(script: Script, req: RecordedRequest) -> Reply:
    """Chat Completions, or the Responses API where the SDK's ``responses.create`` lands
    with this row's base URL (``POST /v1/responses``): that endpoint's own renderer
    (imported here: it builds on this module)."""
    if req.path.endswith("/responses"):
        from zerda.testing.wires.openai_responses import render as responses

        return responses.render(script, req)
    return _RENDERER.render(script, req)


render_error = _RENDERER.render_error
render_stream_error = _RENDERER.render_stream_error
