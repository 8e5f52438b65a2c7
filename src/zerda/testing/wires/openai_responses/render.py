"""OpenAI Responses API wire format (``POST /v1/responses``), JSON and SSE.

Output items come in the order the real API sends them: reasoning items (from
``provider_data["openai-responses"]["reasoning"]``: ``[{"summary": [str], "encrypted_content":
str}]``), the hosted calls (``Script.server_tool_calls``, hosted.py), then the message (its
``Script.citations`` as annotations of its text), then one ``function_call`` item per call.
A stream sends each item as ``output_item.added``, its deltas (a hosted call: its progress
events) and ``output_item.done``, between ``response.created`` / ``in_progress`` and
``response.completed`` (``response.incomplete`` for max_tokens or a content filter), as in
https://platform.openai.com/docs/api-reference/responses-streaming.
"""

from __future__ import annotations

import json
import time
from typing import Any

from zerda.testing import _ids
from zerda.testing._counting import script_tokens
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script, ScriptedCall
from zerda.testing.wires.openai.render import (
    arguments_text,
    resolve_stop,
    script_usage,
    split_fragments,
    usage_part,
)
from zerda.testing.wires.openai_responses import hosted as _hosted

WIRE = "openai-responses"

# A Script's refusal is carried as such (a "refusal" content part), not as text.
REFUSAL_FIELD = True

# Unified stop reason -> (status, incomplete_details.reason).
_STATUS = {
    "max_tokens": ("incomplete", "max_output_tokens"),
    "content_filter": ("incomplete", "content_filter"),
}

# status -> (type, code) of the error body, as OpenAI sends them.
_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}

_JSON = {"content-type": "application/json"}
_SSE = {"content-type": "text/event-stream; charset=utf-8"}


def wants_stream(req: RecordedRequest) -> bool:
    return isinstance(req.body, dict) and bool(req.body.get("stream"))


def render(script: Script, req: RecordedRequest) -> Reply:
    items = _output_items(script)
    if wants_stream(req):
        # The last event (completed / incomplete) closes the stream; a stream_error replaces it.
        return Reply(200, dict(_SSE), chunks=_stream_events(script, req, items), closing_chunks=1)
    return Reply(200, dict(_JSON), body=_dumps(_response(script, req, items, final=True)))


def render_count(script: Script, req: RecordedRequest) -> Reply:
    """``POST /v1/responses/input_tokens``: ``{"object": "response.input_tokens",
    "input_tokens": n}`` (https://platform.openai.com/docs/api-reference/responses/input-tokens)."""
    body = {"object": "response.input_tokens", "input_tokens": script_tokens(script, req.body)}
    return Reply(200, dict(_JSON), body=_dumps(body))


def render_error(err: ErrorReply) -> Reply:
    body = err.body if err.body is not None else {"error": _error_object(err)}
    return Reply(err.status, dict(_JSON), body=_dumps(body))


def render_stream_error(err: ErrorReply) -> bytes:
    kind, code = _ERROR_KINDS.get(err.status, ("server_error", "server_error"))
    event = {
        "type": "error",
        "code": err.error_type or code or kind,
        "message": err.message,
        "param": None,
        "sequence_number": 0,
    }
    return _sse(event)


# --- pieces ------------------------------------------------------------------------------


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def _error_object(err: ErrorReply) -> dict[str, Any]:
    kind, code = _ERROR_KINDS.get(err.status, ("server_error", None))
    error = {"message": err.message, "type": err.error_type or kind, "param": None, "code": code}
    return {**error, **(err.fields or {})}


def _reasoning_items(script: Script) -> list[dict[str, Any]]:
    """provider_data's reasoning items, else one whose summary is the script's reasoning."""
    scripted = ((script.provider_data or {}).get(WIRE) or {}).get("reasoning") or []
    if not scripted and script.reasoning:
        scripted = [{"summary": [script.reasoning]}]
    return [
        {
            "id": _ids.completion_id("rs_"),
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": t} for t in r.get("summary") or []],
            "encrypted_content": r.get("encrypted_content") or "gAAAAmock" + _ids.completion_id(""),
        }
        for r in scripted
    ]


def _message_item(script: Script) -> dict[str, Any]:
    """The message: its text, and its refusal as a ``refusal`` part
    (https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses#refusals)."""
    parts: list[dict[str, Any]] = []
    if script.text:
        annotations = [_hosted.annotation(c) for c in script.citations]
        parts.append(
            {"type": "output_text", "annotations": annotations, "logprobs": [], "text": script.text}
        )
    if script.refusal:
        parts.append({"type": "refusal", "refusal": script.refusal})
    return {
        "id": _ids.completion_id("msg_"),
        "type": "message",
        "status": "completed",
        "content": parts,
        "role": "assistant",
    }


def _call_item(call: ScriptedCall) -> dict[str, Any]:
    return {
        "id": _ids.completion_id("fc_"),
        "type": "function_call",
        "status": "completed",
        "arguments": arguments_text(call),
        "call_id": call.id or _ids.openai_call_id(),
        "name": call.name,
    }


def _output_items(script: Script) -> list[dict[str, Any]]:
    """Reasoning, the hosted calls (hosted.py), the message, the function calls."""
    items = _reasoning_items(script) + [_hosted.hosted_item(c) for c in script.server_tool_calls]
    if script.text or script.refusal:
        items.append(_message_item(script))
    return items + [_call_item(c) for c in script.tool_calls]


def _usage(script: Script) -> dict[str, Any]:
    """As the recordings show it: cached and reasoning counts always there (0 when the
    script gives none); ``cache_write_tokens`` only when the script gives it."""
    prompt, completion = script_usage(script)
    inputs = {"cached_tokens": usage_part(script, "cache_read_tokens")}
    if usage_part(script, "cache_write_tokens"):
        inputs["cache_write_tokens"] = usage_part(script, "cache_write_tokens")
    return {
        "input_tokens": prompt,
        "input_tokens_details": inputs,
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": usage_part(script, "reasoning_tokens")},
        "total_tokens": prompt + completion,
    }


def _model(script: Script, req: RecordedRequest) -> str:
    if script.model:
        return script.model
    body = req.body if isinstance(req.body, dict) else {}
    return str(body.get("model") or "mock-model")


def _response(
    script: Script, req: RecordedRequest, items: list[dict[str, Any]], *, final: bool
) -> dict[str, Any]:
    """The response object; before the end of a stream (``final=False``) in progress."""
    status, reason = _STATUS.get(resolve_stop(script), ("completed", None))
    if script.native_stop_reason is not None:
        status = script.native_stop_reason
    body = req.body if isinstance(req.body, dict) else {}
    return {
        "id": "resp_" + _ids.completion_id("")[:24],
        "object": "response",
        "created_at": int(time.time()),
        "status": status if final else "in_progress",
        "error": None,
        "incomplete_details": {"reason": reason} if final and reason else None,
        "instructions": body.get("instructions"),
        "model": _model(script, req),
        "output": items if final else [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "store": body.get("store", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": _hosted.echoed_tools(body.get("tools")),
        "usage": _usage(script) if final else None,
    }


# --- streams ------------------------------------------------------------------------------


def _item_events(index: int, item: dict[str, Any], script: Script) -> list[dict[str, Any]]:
    """One output item: added (empty), its deltas, done (whole)."""
    kind = item["type"]
    if kind == "message":
        return _message_events(index, item, script)
    if kind == "function_call":
        return _call_events(index, item, script)
    if kind == "reasoning":
        return _reasoning_events(index, item, script.fragments)
    return _hosted.hosted_events(index, item)


def _message_events(index: int, item: dict[str, Any], script: Script) -> list[dict[str, Any]]:
    added = {**item, "status": "in_progress", "content": []}
    events = [{"type": "response.output_item.added", "output_index": index, "item": added}]
    for n, part in enumerate(item["content"]):
        at = {"item_id": item["id"], "output_index": index, "content_index": n}
        events += _part_events(at, part, script.fragments)
    return events + [{"type": "response.output_item.done", "output_index": index, "item": item}]


def _part_events(at: dict[str, Any], part: dict[str, Any], fragments: int) -> list[dict[str, Any]]:
    """One content part: added (empty), its deltas, done. A refusal streams as
    ``response.refusal.delta`` / ``.done``, text as ``response.output_text.delta`` / ``.done``
    (https://platform.openai.com/docs/api-reference/responses-streaming)."""
    key, kind = ("refusal", "refusal") if part["type"] == "refusal" else ("text", "output_text")
    extra: dict[str, Any] = {} if key == "refusal" else {"logprobs": []}
    text = part[key]
    empty = {**part, key: ""} if key == "refusal" else {**part, key: "", "annotations": []}
    return [
        {"type": "response.content_part.added", **at, "part": empty},
        *(
            {"type": f"response.{kind}.delta", **at, "delta": piece, **extra}
            for piece in split_fragments(text, fragments)
        ),
        *_hosted.annotation_events(at, part),
        {"type": f"response.{kind}.done", **at, key: text, **extra},
        {"type": "response.content_part.done", **at, "part": part},
    ]


def _call_events(index: int, item: dict[str, Any], script: Script) -> list[dict[str, Any]]:
    at = {"item_id": item["id"], "output_index": index}
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "status": "in_progress", "arguments": ""},
        },
        *(
            {"type": "response.function_call_arguments.delta", **at, "delta": piece}
            for piece in split_fragments(item["arguments"], script.fragments)
        ),
        {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def _reasoning_events(index: int, item: dict[str, Any], fragments: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "summary": []},
        }
    ]
    for n, part in enumerate(item["summary"]):
        at = {"item_id": item["id"], "output_index": index, "summary_index": n}
        events += [
            {"type": "response.reasoning_summary_part.added", **at, "part": {**part, "text": ""}},
            *(
                {"type": "response.reasoning_summary_text.delta", **at, "delta": piece}
                for piece in split_fragments(part["text"], fragments)
            ),
            {"type": "response.reasoning_summary_text.done", **at, "text": part["text"]},
            {"type": "response.reasoning_summary_part.done", **at, "part": part},
        ]
    return events + [{"type": "response.output_item.done", "output_index": index, "item": item}]


def _stream_events(
    script: Script, req: RecordedRequest, items: list[dict[str, Any]]
) -> list[bytes]:
    final = _response(script, req, items, final=True)
    start = {**final, **_response(script, req, items, final=False), "id": final["id"]}
    events = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, item in enumerate(items):
        events += _item_events(index, item, script)
    done = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    events.append({"type": done, "response": final})
    return [_sse({**e, "sequence_number": n}) for n, e in enumerate(events)]
