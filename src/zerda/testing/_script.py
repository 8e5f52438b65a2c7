"""The unified response script that MockLLMServer renders in each provider's wire format.

One ``Script`` (or ``Fault``/``Raw``) is queued per expected request. Renderers
(``wires/<wire>/render.py``) turn a ``Script`` into that provider's native JSON or stream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

# Unified stop reasons a script may ask for; "auto" means tool_use when tool calls are
# present, else end_turn. Renderers map them to the provider's native value.
StopReason = Literal[
    "auto", "end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter", "other"
]


@dataclass
class ScriptedCall:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (lets tests send invalid JSON)
    id: str | None = None  # None: the renderer makes an id in the provider's own style


@dataclass
class Script:
    """A successful response, described once for all providers."""

    text: str | None = None
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    # The reasoning text the model shows, in the wire's own shape: Anthropic signed thinking
    # blocks, Responses reasoning items (a summary), Gemini thought parts, Bedrock
    # reasoningContent, Ollama's thinking, Mistral thinking chunks, and on Chat Completions
    # reasoning_content (Groq and Ollama's /v1: reasoning). provider_data, where it gives
    # the same blocks itself, wins.
    reasoning: str | None = None
    # A refusal: what the model says instead of answering. OpenAI's wires carry it as such
    # (Chat Completions message.refusal / delta.refusal, a Responses "refusal" content
    # part); a wire with no refusal field sends it as text with its content-filter stop
    # reason (renderers declare REFUSAL_FIELD = True when they carry it, REFUSAL_STOP
    # when a refusal ends otherwise there).
    refusal: str | None = None
    stop_reason: StopReason = "auto"
    native_stop_reason: str | None = None  # sent verbatim instead of the mapped value
    # {"input_tokens", "output_tokens"} (all input, all output), optionally
    # "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"; None: 10 in, 5 out.
    usage: dict[str, int] | None = None
    # Keyed by provider, as in Zerda's assistant messages:
    #   {"gemini": {"thought_signatures": ["base64" | None, ...]}}  (one per tool call)
    #   {"anthropic": {"thinking": [{"type": "thinking", "thinking": str, "signature": str}
    #                               | {"type": "redacted_thinking", "data": str}]}}
    provider_data: dict[str, Any] | None = None
    model: str | None = None  # echoed in the body; None: the model the request named
    fragments: int = 1  # streams: text and each call's argument JSON split into N pieces
    interleave: bool = False  # streams: parallel calls' fragments interleaved
    delay: float = 0.0  # seconds to wait before answering
    chunk_delay: float = 0.0  # streams: seconds between chunks
    cut_after: int | None = None  # streams: drop the connection after N chunks
    invalid_json_body: bool = False  # JSON responses: send a body that is not valid JSON
    # What the provider ran itself (DESIGN §18), before the text, in the unified vocabulary:
    # {"type": "web_search" | "web_fetch" | "code_execution" | "file_search" | "mcp" |
    # "tool_search" | "other", "name"?, "input"?: dict, "output"?: str, "id"?: str}; each
    # wire renders them natively (Anthropic server_tool_use + result blocks, Responses
    # items, Gemini grounding metadata and code parts, Converse server tool blocks...).
    server_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    # Citations over ``text``: {"url", "title"?, "text"?, "start", "end"}, character
    # offsets into ``text``; rendered as the wire attaches them (Anthropic text blocks'
    # citations, Responses url_citation annotations, Gemini grounding supports...).
    citations: list[dict[str, Any]] = field(default_factory=list)
    # streams: after cut_after chunks (or at the end when cut_after is None), send the
    # provider's own in-stream error event (e.g. Anthropic's overloaded_error) and stop.
    stream_error: ErrorReply | None = None


def refusal_as_text(script: Script, stop: StopReason = "content_filter") -> Script:
    """The script as a wire with no refusal field sends a refusal: its text (after any
    other text), with the wire's refusal stop reason (``stop``: content_filter, or
    end_turn where the wire has no content filter) unless the script names one."""
    if not script.refusal:
        return script
    auto = script.stop_reason == "auto" and not script.tool_calls
    return replace(
        script,
        text=(script.text or "") + script.refusal,
        refusal=None,
        stop_reason=stop if auto else script.stop_reason,
    )


FaultKind = Literal["drop", "malformed", "empty", "hang"]


@dataclass
class ErrorReply:
    """An HTTP error with the provider's own error body."""

    status: int
    message: str = "mock error"
    error_type: str | None = None  # provider-specific code; None: derived from status
    retry_after: float | None = None
    delay: float = 0.0
    # Merged last into the provider's error object (the body itself where the error is the
    # body, as on Mistral and Bedrock): e.g. {"code": "tool_use_failed",
    # "failed_generation": "..."} for Groq, {"param": "messages.[1].role", "code": None}.
    fields: dict[str, Any] | None = None
    # The whole JSON body, in place of the provider's usual error shape, for the answers
    # that have another one (Mistral's gateway 401 is {"detail": "Unauthorized"}).
    body: Any = None


@dataclass
class Fault:
    """A transport-level fault: drop (close without answering), malformed (200 with a
    body that is not the provider's format), empty (200 with an empty body), hang (sleep
    ``delay`` seconds before answering nothing, for client timeouts)."""

    kind: FaultKind
    delay: float = 0.0


@dataclass
class Raw:
    """A recorded response served byte for byte."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    chunk_size: int | None = None  # stream the body in pieces of this many bytes


@dataclass
class Reply:
    """What a renderer returns: the server writes it as is.

    ``body`` for a plain response; ``chunks`` for a stream (each written and flushed in
    turn; the server honours ``Script.chunk_delay`` and ``Script.cut_after``)."""

    status: int
    headers: dict[str, str]
    body: bytes | None = None
    chunks: list[bytes] | None = None
    # streams: how many trailing chunks close the stream normally (finish reason, usage,
    # [DONE], message_stop...); a Script.stream_error with no cut_after replaces them.
    closing_chunks: int = 0


Queued = Script | ErrorReply | Fault | Raw


@dataclass(frozen=True)
class Responder:
    """A default answer computed from each request (``MockLLMServer.respond_with``):
    ``respond(request)`` returns a Script, an ErrorReply, or a dict of Script fields."""

    respond: Callable[[RecordedRequest], Script | ErrorReply | dict[str, Any]]


@dataclass
class RecordedRequest:
    """One request the server received, for tests to assert on."""

    provider: str
    method: str
    path: str  # without the provider prefix, e.g. "/v1/chat/completions"
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names; credentials removed
    body: Any  # parsed JSON, or None when the body is empty or not JSON
    raw_body: bytes = b""
    rejected_by: str | None = None  # the validation rule the request broke (strict servers)
