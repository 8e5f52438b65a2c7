"""Gemini Developer API wire format: ``POST /v1beta/models/{model}:generateContent`` (JSON)
and ``:streamGenerateContent?alt=sse`` (SSE ``data: {...}\\r\\n\\r\\n`` lines).

Gemini sends function calls whole, never as argument fragments: in streams, ``fragments``
splits the text only, and the function-call parts arrive together in the last chunk with
the finish reason and usage (``interleave`` changes nothing). Tool calls carry no id unless
the script gives one. ``thoughtSignature`` is on the first ``functionCall`` part of a turn,
as thinking models (Gemini 2.5 and later) send it, with :data:`THOUGHT_SIGNATURE` as its
value; ``provider_data["gemini"]["thought_signatures"]`` (one per call, ``None`` for none)
sets them instead, and Gemini 1.x and 2.0 models send none.

Gemini's ``args`` is always an object, so a script's str arguments (the invalid-JSON case)
are sent as a JSON string, which google-genai rejects with a validation error: that case
cannot reach an application through the Gemini SDK.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from typing import Any

from zerda.testing._counting import script_tokens
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script
from zerda.testing.wires.gemini.hosted import candidate_metadata, server_parts
from zerda.testing.wires.openai.render import (
    resolve_stop,
    script_usage,
    split_fragments,
    usage_part,
)

_NATIVE_STOP = {
    "end_turn": "STOP",
    "tool_use": "STOP",  # Gemini says STOP when it calls functions
    "max_tokens": "MAX_TOKENS",
    "stop_sequence": "STOP",  # Gemini has no finish reason of its own for a stop string
    "content_filter": "SAFETY",
    "other": "OTHER",
}

_ERROR_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

_JSON = {"content-type": "application/json; charset=UTF-8"}
_SSE = {"content-type": "text/event-stream"}
_ID_CHARS = string.ascii_letters + string.digits + "-_"

# The mock's thought signature: opaque base64, as Gemini's are. A client must send it back
# on the same part of the model turn (https://ai.google.dev/gemini-api/docs/thought-signatures).
THOUGHT_SIGNATURE = "Cj4BemVyZGEgbW9jayB0aG91Z2h0IHNpZ25hdHVyZTogc2VuZCBpdCBiYWNrIGFzIGl0IGNhbWU="
# Models that do not think and sign no call (recorded gemini-2.0-flash, gemini-1.5-flash
# exchanges carry no thoughtSignature; every gemini-2.5 and gemini-3 one with calls does).
_UNSIGNED_MODELS = re.compile(r"(models/)?gemini-(1\.|2\.0)")


def wants_stream(req: RecordedRequest) -> bool:
    return req.path.endswith(":streamGenerateContent")


def render(script: Script, req: RecordedRequest) -> Reply:
    response_id = "".join(secrets.choice(_ID_CHARS) for _ in range(23))
    model = script.model or _path_model(req)
    if wants_stream(req) and req.query.get("alt") != "sse":
        # Without alt=sse the API streams one JSON array, element by element.
        pieces = [_dumps(c) for c in _stream_chunks(script, model, response_id)]
        chunks = [(b"[" if i == 0 else b",\r\n") + p for i, p in enumerate(pieces)]
        chunks[-1] += b"]"
        return Reply(200, dict(_JSON), chunks=chunks, closing_chunks=1)
    if wants_stream(req):
        chunks = [_sse(c) for c in _stream_chunks(script, model, response_id)]
        # The last chunk carries finishReason and usage; a stream_error replaces it.
        return Reply(200, dict(_SSE), chunks=chunks, closing_chunks=1)
    body = _response(_parts(script, model), script, model, response_id, final=True)
    return Reply(200, dict(_JSON), body=_dumps(body))


def render_error(err: ErrorReply) -> Reply:
    return Reply(err.status, dict(_JSON), body=_dumps(_error_body(err)))


def render_count(script: Script, req: RecordedRequest) -> Reply:
    """``models.countTokens`` (Gemini API and Vertex AI): ``totalTokens`` and the prompt's
    tokens by modality (https://ai.google.dev/api/tokens#response-body)."""
    total = script_tokens(script, req.body)
    body = {
        "totalTokens": total,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": total}],
    }
    return Reply(200, dict(_JSON), body=_dumps(body))


def render_stream_error(err: ErrorReply) -> bytes:
    """The ``data: {"error": ...}`` chunk google-genai raises as an APIError mid-stream."""
    return _sse(_error_body(err))


# -- bodies --------------------------------------------------------------------------------


def _response(
    parts: list[dict[str, Any]], script: Script, model: str, response_id: str, *, final: bool
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if final:
        candidate["finishReason"] = _finish_reason(script)
        # Grounding and URL context come with the last chunk (hosted.py).
        candidate.update(candidate_metadata(script))
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(script, final=final),
        "modelVersion": model,
        "responseId": response_id,
    }


def _parts(script: Script, model: str) -> list[dict[str, Any]]:
    parts = [_thought(script.reasoning)] if script.reasoning else []
    parts += server_parts(script)  # the hosted tools' parts, before the text
    parts += [{"text": script.text}] if script.text else []
    parts.extend(_call_parts(script, model))
    return parts


def _thought(text: str) -> dict[str, Any]:
    """A thought summary part, as ``include_thoughts`` returns it
    (https://ai.google.dev/gemini-api/docs/thinking#summaries)."""
    return {"text": text, "thought": True}


def _call_parts(script: Script, model: str) -> list[dict[str, Any]]:
    signatures = _thought_signatures(script, model)
    parts = []
    for position, call in enumerate(script.tool_calls):
        # Gemini sends args as an object; a str argument can only be sent as itself.
        function_call: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if call.id is not None:
            function_call["id"] = call.id
        part: dict[str, Any] = {"functionCall": function_call}
        signature = signatures[position] if position < len(signatures) else None
        if signature is not None:
            part["thoughtSignature"] = signature
        parts.append(part)
    return parts


def _stream_chunks(script: Script, model: str, response_id: str) -> list[dict[str, Any]]:
    thoughts = split_fragments(script.reasoning, script.fragments) if script.reasoning else []
    texts = split_fragments(script.text, script.fragments) if script.text else []
    call_parts = _call_parts(script, model)
    # The last chunk carries the finish reason: the calls' chunk, else the last text's.
    chunk_parts = [[_thought(t)] for t in thoughts] + [[p] for p in server_parts(script)]
    chunk_parts += [[{"text": t}] for t in texts]
    if call_parts or not chunk_parts:
        chunk_parts.append(call_parts or [{"text": ""}])
    last = len(chunk_parts) - 1
    return [
        _response(parts, script, model, response_id, final=i == last)
        for i, parts in enumerate(chunk_parts)
    ]


def _sse(data: dict[str, Any]) -> bytes:
    return b"data: " + _dumps(data) + b"\r\n\r\n"


def _error_body(err: ErrorReply) -> dict[str, Any]:
    status = err.error_type or _ERROR_STATUSES.get(err.status, "UNKNOWN")
    error = {"code": err.status, "message": err.message, "status": status}
    return {"error": {**error, **(err.fields or {})}}


# -- shared pieces -------------------------------------------------------------------------


def _thought_signatures(script: Script, model: str) -> list[str | None]:
    """The script's signatures, else today's: Gemini 2.5 and later put one on the first
    ``functionCall`` part of a turn and none on the others (recordings
    gemini/pydantic-ai__google.test_output.test_google_default_tools_use_validated_mode__i00,
    gemini-2.5-flash; gemini/pydantic-ai__test_google.test_google_instructions_only_with_tool_calls__i00,
    gemini-3-flash-preview, three calls, the first signed); 1.x and 2.0 models sign nothing
    (gemini/pydantic-ai__test_google.test_google_tool_output__i00, gemini-2.0-flash)."""
    data = (script.provider_data or {}).get("gemini") or {}
    if "thought_signatures" in data:
        return list(data["thought_signatures"] or [])
    if not script.tool_calls or _UNSIGNED_MODELS.match(model):
        return []
    return [THOUGHT_SIGNATURE]


def _finish_reason(script: Script) -> str:
    if script.native_stop_reason is not None:
        return script.native_stop_reason
    return _NATIVE_STOP[resolve_stop(script)]


def _usage(script: Script, *, final: bool) -> dict[str, Any]:
    """Token counts; chunks before the last report the prompt only, as Gemini does.
    ``candidatesTokenCount`` leaves out ``thoughtsTokenCount``; zero counts are left out
    (recorded gemini exchanges)."""
    prompt, output = script_usage(script)
    thoughts = usage_part(script, "reasoning_tokens")
    cached = usage_part(script, "cache_read_tokens")
    usage: dict[str, Any] = {"promptTokenCount": prompt}
    if final:
        usage["candidatesTokenCount"] = output - thoughts
    usage["totalTokenCount"] = prompt + (output if final else 0)
    if cached:
        usage["cachedContentTokenCount"] = cached
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if final and thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def _path_model(req: RecordedRequest) -> str:
    """``gemini-2.5-flash`` from ``/v1beta/models/gemini-2.5-flash:generateContent``."""
    tail = req.path.rsplit("/models/", 1)[-1]
    return tail.split(":", 1)[0] or "gemini-mock"


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")
