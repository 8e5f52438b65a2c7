"""The shapes of Zerda's plain JSON dicts, as ``TypedDict``s (DESIGN §20).

Results, messages, parts and stream events stay plain dicts at run time — a history is JSON
that any provider can continue and that can be stored anywhere — and these declarations let a
type checker and an editor see their keys: ``result["contnet"]`` is an error in mypy and
pyright, ``result["usage"]["input_tokens"]`` completes. Nothing here runs on a call; the module
is imported only by code that names these types.

Keys marked ``NotRequired`` are present only in some results (``parsed`` with
``response_format``, ``error`` on a failure, ``cost`` where the price is known...).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from zerda.llm.errors import ErrorType

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # pragma: no cover - Python 3.10: NotRequired came to typing in 3.11
    from typing_extensions import NotRequired, TypedDict

__all__ = [
    "AssistantMessage",
    "AudioPart",
    "Budget",
    "CachePointPart",
    "Citation",
    "Cost",
    "DocumentPart",
    "Decision",
    "DoneEvent",
    "ErrorInfo",
    "FilePart",
    "GenerateOptions",
    "ImagePart",
    "Message",
    "Messages",
    "Part",
    "PartialEvent",
    "ReasoningEvent",
    "ReasoningOptions",
    "RunOptions",
    "Result",
    "RunEvent",
    "RunResult",
    "ServerToolCall",
    "ServerToolCallEvent",
    "CitationEvent",
    "StopReason",
    "StreamEvent",
    "SystemMessage",
    "TextEvent",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEvent",
    "ToolChoice",
    "ToolMessage",
    "ToolResultEvent",
    "TurnEvent",
    "Usage",
    "UserMessage",
]

StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "content_filter",
    "error",
    "other",
    "paused",
    "budget",
]


class _ToolName(TypedDict):
    name: str


# None (the provider's default), "auto", "none", "required", a tool's name or {"name": ...}.
ToolChoice = Literal["auto", "none", "required"] | str | _ToolName


class ReasoningOptions(TypedDict, total=False):
    effort: Literal["minimal", "low", "medium", "high"]
    budget_tokens: int
    summary: bool


# --- content parts (DESIGN §4a) -----------------------------------------------------------


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImagePart(TypedDict):
    type: Literal["image"]
    data: NotRequired[str | bytes]
    url: NotRequired[str]
    media_type: NotRequired[str]


class DocumentPart(TypedDict):
    type: Literal["document"]
    data: NotRequired[str | bytes]
    url: NotRequired[str]
    media_type: NotRequired[str]
    name: NotRequired[str]


class AudioPart(TypedDict):
    type: Literal["audio"]
    data: NotRequired[str | bytes]
    url: NotRequired[str]
    media_type: NotRequired[str]


class FilePart(TypedDict):
    type: Literal["file"]
    uri: str
    media_type: NotRequired[str]


class CachePointPart(TypedDict):
    type: Literal["cache_point"]


Part = TextPart | ImagePart | DocumentPart | AudioPart | FilePart | CachePointPart


# --- messages (DESIGN §4) -----------------------------------------------------------------


class ToolCall(TypedDict):
    id: str | None
    name: str
    arguments: dict[str, Any]


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[Part]


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[Part]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ToolCall]]
    provider_data: NotRequired[dict[str, Any]]
    server_tool_calls: NotRequired[list[ServerToolCall]]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str | None
    name: NotRequired[str | None]
    content: str | dict[str, Any] | list[Any]
    is_error: NotRequired[bool]


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


# --- results (DESIGN §3, §12, §18, §21) ------------------------------------------------------


class Usage(TypedDict):
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None
    server_tool_requests: NotRequired[dict[str, int]]


class Cost(TypedDict):
    input: float
    output: float
    total: float
    currency: str


class ErrorInfo(TypedDict):
    type: ErrorType
    message: str
    status_code: int | None
    provider: str | None
    retryable: bool


class ServerToolCall(TypedDict):
    id: str | None
    type: Literal[
        "web_search", "web_fetch", "code_execution", "file_search", "mcp", "tool_search", "other"
    ]
    name: str
    input: dict[str, Any]
    output: str | None


class Citation(TypedDict):
    url: str | None
    title: str | None
    text: str | None
    start: int | None
    end: int | None


class Result(TypedDict):
    """What ``generate`` returns, and the ``result`` of a stream's ``done`` event."""

    content: str | None
    tool_calls: list[ToolCall]
    stop_reason: StopReason
    usage: Usage | None
    reasoning: str | None
    message: AssistantMessage | None
    cost: Cost | None
    provider: NotRequired[str]
    parsed: NotRequired[Any]
    parse_error: NotRequired[str]
    error: NotRequired[ErrorInfo]
    server_tool_calls: NotRequired[list[ServerToolCall]]
    citations: NotRequired[list[Citation]]
    raw: NotRequired[Any]


class RunResult(Result):
    """What ``run`` returns: the last turn's result with the whole transcript."""

    messages: list[Message]
    turns: int
    pending: NotRequired[list[ToolCall]]


# --- stream events (DESIGN §7, §18, §19), discriminated by "type" ----------------------------


class TextEvent(TypedDict):
    type: Literal["text"]
    text: str


class ReasoningEvent(TypedDict):
    type: Literal["reasoning"]
    text: str


class ToolCallDeltaEvent(TypedDict):
    type: Literal["tool_call_delta"]
    index: int
    id: str | None
    name: str
    arguments: str


class ToolCallEvent(TypedDict):
    type: Literal["tool_call"]
    tool_call: ToolCall


class PartialEvent(TypedDict):
    type: Literal["partial"]
    partial: Any


class ToolResultEvent(TypedDict):
    type: Literal["tool_result"]
    call: ToolCall
    result: Any
    is_error: bool


class TurnEvent(TypedDict):
    type: Literal["turn"]
    index: int


class ServerToolCallEvent(TypedDict):
    """A call the provider ran, once complete (DESIGN §18)."""

    type: Literal["server_tool_call"]
    server_tool_call: ServerToolCall


class CitationEvent(TypedDict):
    """A citation over the text (DESIGN §18), as it arrives."""

    type: Literal["citation"]
    citation: Citation


class DoneEvent(TypedDict):
    type: Literal["done"]
    result: Result


StreamEvent = (
    TextEvent
    | ReasoningEvent
    | ToolCallDeltaEvent
    | ToolCallEvent
    | PartialEvent
    | ServerToolCallEvent
    | CitationEvent
    | DoneEvent
)
# What a streamed run yields: every turn's events, tool results and turn markers.
RunEvent = StreamEvent | ToolResultEvent | TurnEvent

# --- the arguments of generate / stream / run (DESIGN §3, §6, §11, §13, §19) -----------------

# A tool: a unified or OpenAI-style dict, a Python function, a pydantic model, an MCP tool.
Tool = Mapping[str, Any] | Callable[..., Any]
Messages = str | Sequence[Message | Mapping[str, Any]]


class GenerateOptions(TypedDict, total=False):
    """The keyword arguments of ``generate``, ``stream`` and their async twins. The SDK's own
    keywords that Zerda does not model go in ``native`` (``**native`` still works at run time
    but is not part of this declaration, so that a misspelt argument is a type error)."""

    system: str | Sequence[Part | Mapping[str, Any]] | None
    tools: Sequence[Tool] | None
    tool_choice: ToolChoice | None
    max_tokens: int | None
    temperature: float | None
    top_p: float | None
    stop: str | Sequence[str] | None
    parallel_tool_calls: bool | None
    timeout: float | None
    reasoning: bool | Literal["minimal", "low", "medium", "high"] | ReasoningOptions | None
    response_format: Any
    structured_output: Literal["auto", "native", "tool"] | None
    cache: bool
    repair: bool
    raise_errors: bool | None
    include_raw: bool
    native: Mapping[str, Any]


class Budget(TypedDict, total=False):
    """``run(budget=...)``: the loop ends with ``stop_reason: "budget"`` when one is reached."""

    tool_calls: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cost: float


# What ``approve(call)`` and ``decisions={call_id: ...}`` answer: run it, refuse it, refuse it
# with this text for the model, run it with these arguments ({"arguments": {...}}), or (only
# ``approve``) zerda.llm.PAUSE to decide later.
Decision = bool | str | Mapping[str, Any]


class RunOptions(GenerateOptions, total=False):
    """The keyword arguments of ``run`` and its twins: generate's, and the loop's own
    (docs/loop.md)."""

    max_turns: int
    on_tool_call: Callable[[ToolCall], Any] | None
    output_retries: int
    approve: Callable[[ToolCall], Any] | None
    decisions: Mapping[str | int, Decision] | None
    tool_timeout: float | None
    budget: Budget | None
    stop_on: Sequence[str]
    final_answer: bool
    max_concurrency: int | None
