"""AWS Bedrock Converse wire format: ``POST /model/{modelId}/converse`` (JSON) and
``/converse-stream`` (binary AWS event-stream, see ``_eventstream``).

Stream events follow the real order: ``messageStart``; text as ``contentBlockDelta`` events
with no ``contentBlockStart`` (as Bedrock sends text); each tool call as
``contentBlockStart`` (toolUseId, name), ``contentBlockDelta`` input-JSON fragments and
``contentBlockStop``; then ``messageStop`` and ``metadata`` (usage). Content blocks are
sequential in the real protocol, so ``Script.interleave`` changes nothing here.
"""

from __future__ import annotations

import json
import secrets
import string
import uuid
from typing import Any
from urllib.parse import urlsplit

from zerda.testing._counting import script_tokens
from zerda.testing._eventstream import encode_event, encode_exception
from zerda.testing._ids import bedrock_call_id
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script
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
    "content_filter": "content_filtered",
    "other": "malformed_model_output",
}

_ERROR_TYPES = {
    400: "ValidationException",
    # AWS answers bad credentials with this code (botocore maps it to an auth failure);
    # a queued 401 is rendered as that auth error, not as a validation error.
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}

# ConverseStream's modelled in-stream exceptions, by the HTTP status they stand for.
_STREAM_EXCEPTIONS = {
    400: "validationException",
    429: "throttlingException",
    500: "internalServerException",
    503: "serviceUnavailableException",
}

_PADDING = string.ascii_lowercase + string.ascii_uppercase + string.digits
_ERROR_NAMESPACE = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
_LATENCY_MS = 120


def wants_stream(req: RecordedRequest) -> bool:
    return req.path.endswith("/converse-stream")


def render(script: Script, req: RecordedRequest) -> Reply:
    headers = {"x-amzn-requestid": str(uuid.uuid4())}
    if wants_stream(req):
        headers["content-type"] = "application/vnd.amazon.eventstream"
        # messageStop and metadata close the stream; a stream_error replaces them.
        return Reply(200, headers, chunks=_stream_events(script), closing_chunks=2)
    headers["content-type"] = "application/json"
    return Reply(200, headers, body=_dumps(_response(script)))


def render_count(script: Script, req: RecordedRequest) -> Reply:
    """``CountTokens``: ``{"inputTokens": n}``
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html)."""
    headers = {"x-amzn-requestid": str(uuid.uuid4()), "content-type": "application/json"}
    return Reply(200, headers, body=_dumps({"inputTokens": script_tokens(script, req.body)}))


def render_error(err: ErrorReply) -> Reply:
    """Bedrock's error: ``{"message"}`` with the code in ``x-amzn-ErrorType``; a
    ``retry_after`` also goes in ``x-amz-retry-after`` (ms), which botocore honours."""
    kind = err.error_type or _ERROR_TYPES.get(
        err.status, "InternalServerException" if err.status >= 500 else "ValidationException"
    )
    headers = {
        "content-type": "application/json",
        "x-amzn-requestid": str(uuid.uuid4()),
        "x-amzn-errortype": kind + _ERROR_NAMESPACE,
    }
    if err.retry_after is not None:
        headers["x-amz-retry-after"] = str(int(err.retry_after * 1000))
    return Reply(err.status, headers, body=_dumps({"message": err.message}))


def render_stream_error(err: ErrorReply) -> bytes:
    """An event-stream ``exception`` message; botocore raises it as EventStreamError."""
    kind = err.error_type or _STREAM_EXCEPTIONS.get(err.status, "modelStreamErrorException")
    return encode_exception(kind, err.message)


# -- JSON ---------------------------------------------------------------------------------


def _response(script: Script) -> dict[str, Any]:
    return {
        "metrics": {"latencyMs": _LATENCY_MS},
        "output": {"message": {"content": _content(script), "role": "assistant"}},
        "stopReason": _stop_reason(script),
        "usage": _usage(script),
    }


# The mock's reasoning signature (opaque, as Bedrock's for Claude are), sent back with the
# reasoning text (https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html).
REASONING_SIGNATURE = "WmVyZGEgbW9jayByZWFzb25pbmcgc2lnbmF0dXJl"


def _content(script: Script) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if script.reasoning:  # ReasoningContentBlock, before the text (Converse API reference)
        text = {"text": script.reasoning, "signature": REASONING_SIGNATURE}
        blocks.append({"reasoningContent": {"reasoningText": text}})
    for use, result in _server_blocks(script):
        blocks += [{"toolUse": use}, {"toolResult": result}]
    for segment, citations in _text_segments(script):
        if citations:
            cited = {"content": [{"text": segment}], "citations": citations}
            blocks.append({"citationsContent": cited})
        else:
            blocks.append({"text": segment})
    for call, call_id in _calls_with_ids(script):
        # Converse sends input as a JSON document; a str argument can only be sent as itself.
        tool_use = {"toolUseId": call_id, "name": call.name, "input": call.arguments}
        blocks.append({"toolUse": tool_use})
    return blocks


# -- event stream ---------------------------------------------------------------------------


def _stream_events(script: Script) -> list[bytes]:
    events = [_event("messageStart", {"role": "assistant"})]
    index = 0
    if script.reasoning:
        events.extend(_reasoning_block(index, script.reasoning, script.fragments))
        index += 1
    for use, result in _server_blocks(script):
        events += _server_use_block(index, use, script.fragments)
        events += _server_result_block(index + 1, result)
        index += 2
    for text, citations in _text_segments(script):
        events.extend(_text_block(index, text, script.fragments, citations))
        index += 1
    for call, call_id in _calls_with_ids(script):
        events.extend(_tool_block(index, call_id, call.name, call.arguments, script.fragments))
        index += 1
    events.append(_event("messageStop", {"stopReason": _stop_reason(script)}))
    metadata = {"metrics": {"latencyMs": _LATENCY_MS}, "usage": _usage(script)}
    events.append(_event("metadata", metadata))
    return events


def _text_block(
    index: int, text: str, fragments: int, citations: list[dict[str, Any]] | None = None
) -> list[bytes]:
    """Text deltas; a cited span's citations follow as ``citation`` deltas of the same
    block (CitationsDelta, https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CitationsDelta.html)."""
    deltas: list[dict[str, Any]] = [{"text": piece} for piece in split_fragments(text, fragments)]
    deltas += [{"citation": c} for c in citations or ()]
    return [*_deltas(index, deltas), _stop(index)]


def _server_use_block(index: int, use: dict[str, Any], fragments: int) -> list[bytes]:
    """A system tool's call, as the recorded code-interpreter stream sends it: a typed
    toolUse start, its input as JSON fragments, a stop."""
    start = {key: use[key] for key in ("toolUseId", "name", "type")}
    pieces = split_fragments(json.dumps(use["input"]), fragments)
    deltas = [{"toolUse": {"input": piece}} for piece in pieces]
    head = _event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": start}})
    return [head, *_deltas(index, deltas), _stop(index)]


def _server_result_block(index: int, result: dict[str, Any]) -> list[bytes]:
    """Its result: a toolResult start (toolUseId, type, status), one ``toolResult`` delta
    holding the content list, a stop (recording bedrock/pydantic-ai__test_bedrock.
    test_bedrock_model_code_execution_tool_stream__i00)."""
    start = {key: result[key] for key in ("toolUseId", "type", "status")}
    head = _event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolResult": start}})
    return [head, *_deltas(index, [{"toolResult": result["content"]}]), _stop(index)]


def _reasoning_block(index: int, text: str, fragments: int) -> list[bytes]:
    """Reasoning deltas, then its signature, with no contentBlockStart
    (ReasoningContentBlockDelta: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlockDelta.html)."""
    deltas = [{"reasoningContent": {"text": piece}} for piece in split_fragments(text, fragments)]
    deltas.append({"reasoningContent": {"signature": REASONING_SIGNATURE}})
    return [*_deltas(index, deltas), _stop(index)]


def _tool_block(index: int, call_id: str, name: str, arguments: Any, fragments: int) -> list[bytes]:
    start = {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call_id, "name": name}}}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    deltas = [{"toolUse": {"input": piece}} for piece in split_fragments(text, fragments)]
    return [_event("contentBlockStart", start), *_deltas(index, deltas), _stop(index)]


def _deltas(index: int, deltas: list[dict[str, Any]]) -> list[bytes]:
    return [
        _event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
        for delta in deltas
    ]


def _stop(index: int) -> bytes:
    return _event("contentBlockStop", {"contentBlockIndex": index})


# -- hosted tools and citations (DESIGN §18) ------------------------------------------------

# Converse's system tools (Amazon Nova's), by unified type
# (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_SystemTool.html).
_SYSTEM_TOOLS = {"web_search": "nova_grounding", "code_execution": "nova_code_interpreter"}


def _server_blocks(script: Script) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each scripted server call as the toolUse (``type: "server_tool_use"``) and the
    toolResult (typed ``<name>_result``) of the assistant's own message: the code
    interpreter's output as its ``json`` {stdOut, stdErr, exitCode, isError} (the recorded
    shape), any other as text (web grounding's result is text: "[HIDDEN]" in captures)."""
    out = []
    for call in script.server_tool_calls:
        name = call.get("name") or _SYSTEM_TOOLS.get(call["type"], call["type"])
        call_id = call.get("id") or bedrock_call_id()
        use = {"toolUseId": call_id, "name": name, "input": call.get("input") or {}}
        output = call.get("output")
        content: list[dict[str, Any]] = []
        if isinstance(output, str) and name == "nova_code_interpreter":
            run = {"stdOut": output, "stdErr": "", "exitCode": 0, "isError": False}
            content = [{"json": run}]
        elif isinstance(output, str):
            content = [{"text": output}]
        result = {"toolUseId": call_id, "content": content, "status": "success"}
        out.append(({**use, "type": "server_tool_use"}, {**result, "type": f"{name}_result"}))
    return out


def _text_segments(script: Script) -> list[tuple[str, list[dict[str, Any]]]]:
    """The text cut at the scripted citations' spans: each cited span a citationsContent
    block of its own (its generated ``content`` and ``citations``,
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CitationsContentBlock.html),
    the text between as text blocks. Citations of one span share its block; a span that
    overlaps the one before is cited over that one (Converse cannot say otherwise)."""
    text = script.text or ""
    spans: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for cited in script.citations:
        spans.setdefault((cited["start"], cited["end"]), []).append(_native_citation(cited))
    segments: list[tuple[str, list[dict[str, Any]]]] = []
    at = 0
    for (start, end), citations in sorted(spans.items()):
        if start < at and segments:
            segments[-1][1].extend(citations)
            continue
        if start > at:
            segments.append((text[at:start], []))
        segments.append((text[start:end], citations))
        at = end
    if at < len(text):
        segments.append((text[at:], []))
    return segments


def _native_citation(cited: dict[str, Any]) -> dict[str, Any]:
    """A Converse Citation with a web location (the shape web grounding cites with)."""
    url = cited.get("url") or ""
    native: dict[str, Any] = {"location": {"web": {"url": url, "domain": urlsplit(url).netloc}}}
    if cited.get("title"):
        native["title"] = cited["title"]
    if cited.get("text"):
        native["sourceContent"] = [{"text": cited["text"]}]
    return native


# -- shared pieces -------------------------------------------------------------------------


def _calls_with_ids(script: Script) -> list[tuple[Any, str]]:
    return [(call, call.id or bedrock_call_id()) for call in script.tool_calls]


def _stop_reason(script: Script) -> str:
    if script.native_stop_reason is not None:
        return script.native_stop_reason
    return _NATIVE_STOP[resolve_stop(script)]


def _usage(script: Script) -> dict[str, Any]:
    """Converse usage: ``inputTokens`` without cache tokens, the cache counts only when
    caching happened, and ``serverToolUsage`` (recorded bedrock exchanges)."""
    input_tokens, output_tokens = script_usage(script)
    read, write = usage_part(script, "cache_read_tokens"), usage_part(script, "cache_write_tokens")
    usage: dict[str, Any] = {
        "inputTokens": input_tokens - read - write,
        "outputTokens": output_tokens,
        "totalTokens": input_tokens + output_tokens,
    }
    if read or write:
        usage.update(cacheReadInputTokens=read, cacheWriteInputTokens=write)
    usage["serverToolUsage"] = {}
    return usage


def _event(event_type: str, payload: dict[str, Any]) -> bytes:
    """A stream event with Bedrock's ``p`` padding field (a run of letters and digits that
    varies the message length; recorded bedrock streams' events all carry it)."""
    return encode_event(event_type, {**payload, "p": _PADDING[: secrets.randbelow(50) + 1]})


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")
