"""Anthropic Messages API wire format (``POST /v1/messages``), JSON and SSE.

Content blocks come in the order the real API sends them: thinking blocks (from
``provider_data["anthropic"]["thinking"]``, else one signed block of ``Script.reasoning``), then text, then ``tool_use`` blocks. Streams
send each block whole before the next one starts, so ``Script.interleave`` changes nothing
here: the real protocol never interleaves content blocks.
"""

from __future__ import annotations

import json
from typing import Any

from zerda.testing._counting import script_tokens
from zerda.testing._ids import anthropic_call_id, message_id
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script
from zerda.testing.wires.anthropic import hosted as _hosted
from zerda.testing.wires.openai.render import (
    resolve_stop,
    script_usage,
    split_fragments,
    usage_part,
)

_NATIVE_STOP = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "refusal",
    "other": "pause_turn",
}

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_JSON = {"content-type": "application/json"}
_SSE = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}


def wants_stream(req: RecordedRequest) -> bool:
    return isinstance(req.body, dict) and req.body.get("stream") is True


def render(script: Script, req: RecordedRequest) -> Reply:
    if wants_stream(req):
        # message_delta and message_stop close the stream; a stream_error replaces them.
        return Reply(200, dict(_SSE), chunks=_stream_events(script, req), closing_chunks=2)
    return Reply(200, dict(_JSON), body=_dumps(_message(script, req)))


def render_error(err: ErrorReply) -> Reply:
    request_id = message_id("req_011C")
    body = {"type": "error", "error": _error_object(err), "request_id": request_id}
    headers = {**_JSON, "request-id": request_id}
    return Reply(err.status, headers, body=_dumps(body))


def render_count(script: Script, req: RecordedRequest) -> Reply:
    """``POST /v1/messages/count_tokens`` (and Vertex AI's ``count-tokens:rawPredict``):
    ``{"input_tokens": n}`` (https://docs.anthropic.com/en/api/messages-count-tokens)."""
    return Reply(200, dict(_JSON), body=_dumps({"input_tokens": script_tokens(script, req.body)}))


def render_stream_error(err: ErrorReply) -> bytes:
    """The in-stream ``event: error`` Anthropic sends when it fails mid-stream."""
    error = _error_object(err, default_type="overloaded_error")
    return _event("error", {"type": "error", "error": error})


# -- JSON ---------------------------------------------------------------------------------


def _message(script: Script, req: RecordedRequest) -> dict[str, Any]:
    usage = script_usage(script)
    return {
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": _model(script, req),
        "content": _content_blocks(script, req),
        "stop_reason": _stop_reason(script),
        "stop_sequence": _stop_sequence(script, req),
        "usage": _usage(script, usage[1]),
    }


def _usage(script: Script, output_tokens: int) -> dict[str, Any]:
    """Today's usage object: input without the cache tokens, the cache fields, and the
    service tier (recorded anthropic exchanges all carry them); the server tools' requests
    when the script ran some."""
    read, write = usage_part(script, "cache_read_tokens"), usage_part(script, "cache_write_tokens")
    usage = {
        "input_tokens": script_usage(script)[0] - read - write,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }
    server = _hosted.server_tool_use(script)
    if server is not None:
        usage["server_tool_use"] = server
    return usage


def _content_blocks(script: Script, req: RecordedRequest) -> list[dict[str, Any]]:
    """Thinking, the server tools' blocks (DESIGN §18), the text (cut at its citations),
    the tool calls."""
    blocks = [dict(b) for b in _thinking(script)]
    blocks += _hosted.server_blocks(script, req)
    blocks += _hosted.text_blocks(script)
    for call in script.tool_calls:
        # Anthropic sends input as an object; a str argument can only be sent as itself.
        call_id = call.id or anthropic_call_id()
        blocks.append(
            {"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments}
        )
    return blocks


# -- SSE ----------------------------------------------------------------------------------


def _stream_events(script: Script, req: RecordedRequest) -> list[bytes]:
    start = _message(script, req)
    start.update(content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = _usage(script, 1)
    events = [_event("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(_stream_blocks(script, req)):
        block_events = _block_events(index, block, script.fragments)
        if index == 0:  # Anthropic pings right after the first block starts
            block_events.insert(1, _event("ping", {"type": "ping"}))
        events.extend(block_events)
    delta = {"stop_reason": _stop_reason(script), "stop_sequence": _stop_sequence(script, req)}
    events.append(
        _event(
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": _delta_usage(script)},
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


def _delta_usage(script: Script) -> dict[str, int]:
    """``message_delta``'s cumulative usage: input and cache counts too, as today's streams
    send them (recorded anthropic streams)."""
    usage = _usage(script, script_usage(script)[1])
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    delta = {**{k: usage[k] for k in keys}, "output_tokens": usage["output_tokens"]}
    if "server_tool_use" in usage:  # the final counts come in message_delta (recordings)
        delta["server_tool_use"] = usage["server_tool_use"]
    return delta


def _stream_blocks(script: Script, req: RecordedRequest) -> list[dict[str, Any]]:
    """Content blocks with tool inputs as the JSON text the stream sends in fragments."""
    blocks = _content_blocks(script, req)
    for block in blocks:
        if block["type"] in _INPUT_BLOCKS:
            block["input"] = _input_json(block["input"])
    return blocks


# The blocks whose input streams as input_json_delta fragments after an empty start.
_INPUT_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def _block_events(index: int, block: dict[str, Any], fragments: int) -> list[bytes]:
    kind = block["type"]
    start: dict[str, Any]
    if kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": p}
            for p in split_fragments(block["thinking"], fragments)
        ]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    elif kind == "text":
        # A cited block starts with no citations; each arrives as a citations_delta before
        # the text (recorded anthropic web search streams).
        start = {"type": "text", "text": "", **({"citations": []} if "citations" in block else {})}
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations", [])]
        deltas += [
            {"type": "text_delta", "text": p} for p in split_fragments(block["text"], fragments)
        ]
    elif kind in _INPUT_BLOCKS:
        start = {**block, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in split_fragments(block["input"], fragments)
        ]
    else:  # redacted_thinking (and any other block) arrives whole in its start event
        start, deltas = block, []
    events = [
        _event("content_block_start", _typed("content_block_start", index, content_block=start))
    ]
    events.extend(
        _event("content_block_delta", _typed("content_block_delta", index, delta=d)) for d in deltas
    )
    events.append(_event("content_block_stop", _typed("content_block_stop", index)))
    return events


def _typed(kind: str, index: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "index": index, **fields}


def _input_json(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments  # sent verbatim: lets tests stream invalid JSON
    # Anthropic streams an empty partial_json for a tool without parameters, never "{}".
    return json.dumps(arguments) if arguments else ""


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _dumps(data) + b"\n\n"


# -- shared pieces -------------------------------------------------------------------------


# The mock's thinking signature: opaque base64, as Anthropic's are; a client must send the
# block back unchanged (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).
THINKING_SIGNATURE = "WmVyZGEgbW9jayB0aGlua2luZyBzaWduYXR1cmU6IHNlbmQgaXQgYmFjayBhcyBpdCBjYW1l"


def _thinking(script: Script) -> list[dict[str, Any]]:
    """provider_data's thinking blocks, else one signed block of the script's reasoning."""
    data = (script.provider_data or {}).get("anthropic") or {}
    blocks = list(data.get("thinking") or [])
    if not blocks and script.reasoning:
        blocks = [
            {"type": "thinking", "thinking": script.reasoning, "signature": THINKING_SIGNATURE}
        ]
    return blocks


def _stop_reason(script: Script) -> str:
    if script.native_stop_reason is not None:
        return script.native_stop_reason
    return _NATIVE_STOP[resolve_stop(script)]


def _stop_sequence(script: Script, req: RecordedRequest) -> str | None:
    """The matched stop string: the first one the request asked for, as the API echoes it."""
    if _stop_reason(script) != "stop_sequence":
        return None
    sequences = req.body.get("stop_sequences") if isinstance(req.body, dict) else None
    return sequences[0] if sequences else "STOP"


def _model(script: Script, req: RecordedRequest) -> str:
    if script.model:
        return script.model
    model = req.body.get("model") if isinstance(req.body, dict) else None
    return str(model or "claude-mock")


def _error_object(err: ErrorReply, default_type: str = "api_error") -> dict[str, str]:
    kind = err.error_type or _ERROR_TYPES.get(err.status, default_type)
    return {"type": kind, "message": err.message}


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")
