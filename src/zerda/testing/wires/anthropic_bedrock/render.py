"""Claude on Bedrock's InvokeModel (``POST /model/{id}/invoke``) and
InvokeModelWithResponseStream (``/invoke-with-response-stream``), as the anthropic SDK's
``AnthropicBedrock`` client reads them.

The bodies are the Messages API's (``wires/anthropic/render.py``); a stream is the same events,
each JSON event base64-encoded as the ``bytes`` of an event-stream ``chunk`` message
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html).
Errors are Bedrock's (``wires/bedrock/render.py``).
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace

from zerda.testing._eventstream import encode_event
from zerda.testing._script import ErrorReply, RecordedRequest, Reply, Script
from zerda.testing.wires.anthropic import render as _render_anthropic
from zerda.testing.wires.bedrock import render as _render_bedrock

render_error = _render_bedrock.render_error
render_stream_error = _render_bedrock.render_stream_error


def wants_stream(req: RecordedRequest) -> bool:
    return req.path.endswith("/invoke-with-response-stream")


def render(script: Script, req: RecordedRequest) -> Reply:
    if not wants_stream(req):
        return _render_anthropic.render(script, req)
    # The Messages renderer streams when the body says so; InvokeModel says it in the path.
    body = {**(req.body if isinstance(req.body, dict) else {}), "stream": True}
    sse = _render_anthropic.render(script, replace(req, body=body))
    chunks = [_chunk(event) for event in sse.chunks or []]
    headers = {"content-type": "application/vnd.amazon.eventstream"}
    return Reply(200, headers, chunks=chunks, closing_chunks=sse.closing_chunks)


def _chunk(sse_event: bytes) -> bytes:
    """One ``event: …\\ndata: {json}`` as the event-stream chunk carrying that JSON."""
    data = next(
        line[len(b"data: ") :] for line in sse_event.splitlines() if line.startswith(b"data: ")
    )
    payload = json.dumps(json.loads(data), separators=(",", ":")).encode()
    return encode_event("chunk", {"bytes": base64.b64encode(payload).decode()})


__all__ = ["ErrorReply", "render", "render_error", "render_stream_error", "wants_stream"]
