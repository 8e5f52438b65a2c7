"""Assembly of streamed responses, shared by every provider's stream state.

A provider's stream state feeds native chunks into a :class:`StreamAccumulator`, which
turns them into Zerda's stream events and, at the end, into exactly the result generate
builds for the same response.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from zerda.llm.errors import excerpt, malformed_response
from zerda.llm.tools import ToolCall, _parse_json_arguments

Event = dict[str, Any]
ResultBuilder = Callable[
    [str | None, list[ToolCall], Any, Any, dict[str, Any] | None], dict[str, Any]
]


@dataclass
class _OpenCall:
    id: str | None
    name: str
    fragments: list[str] = field(default_factory=list)
    arguments: Any = None  # set when the provider sends whole arguments (dict or text)


class StreamAccumulator:
    """Collects text, tool calls (keyed by the provider's index or block, never by position
    in the stream), the native stop reason, usage and provider data."""

    def __init__(self, provider: str | None = None) -> None:
        self.provider = provider
        # Set by the provider's _feed on its stream's final event (finish_reason,
        # message_stop, done...): a stream that ends without it is incomplete.
        self.finished = False
        self.text_parts: list[str] = []
        self.calls: list[ToolCall] = []
        self.native_stop: Any = None
        self.usage: dict[str, Any] | None = None
        self.provider_data: dict[str, Any] = {}
        # Provider-specific state across chunks that is not a tool call (e.g. reasoning
        # blocks being assembled); a provider keys it by its own name.
        self.scratch: dict[str, Any] = {}
        self._open: dict[Hashable, _OpenCall] = {}

    @property
    def content(self) -> str | None:
        return "".join(self.text_parts) or None

    def text(self, delta: Any) -> list[Event]:
        if not delta:
            return []
        if not isinstance(delta, str):
            raise malformed_response(
                self.provider, f"a text delta is not a string: {excerpt(delta)}"
            )
        self.text_parts.append(delta)
        return [{"type": "text", "text": delta}]

    def start_call(self, key: Hashable, call_id: str | None, name: str) -> list[Event]:
        """Opens a call; a call already open under ``key`` is completed first (some
        providers reuse index 0 for every parallel call)."""
        events = self.end_call(key) if key in self._open else []
        self._open[key] = _OpenCall(call_id, name)
        return events

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def open_call(self, key: Hashable) -> _OpenCall | None:
        """The call being assembled under ``key`` (id, name, fragments so far), if any."""
        return self._open.get(key)

    def add_arguments(self, key: Hashable, fragment: str | None) -> None:
        if fragment and key in self._open:
            self._open[key].fragments.append(fragment)

    def end_call(self, key: Hashable) -> list[Event]:
        open_call = self._open.pop(key, None)
        if open_call is None:
            return []
        raw = open_call.arguments
        if raw is None:
            raw = "".join(open_call.fragments)
        return self._complete(ToolCall(open_call.id, open_call.name, _parse_json_arguments(raw)))

    def whole_call(self, call_id: str | None, name: str, arguments: Any) -> list[Event]:
        """A call that arrived complete in one chunk (Gemini, Ollama)."""
        if not isinstance(arguments, (dict, str)) and arguments is not None:
            arguments = dict(arguments)
        return self._complete(ToolCall(call_id, name, _parse_json_arguments(arguments or {})))

    def end_all_calls(self) -> list[Event]:
        events: list[Event] = []
        for key in list(self._open):
            events += self.end_call(key)
        return events

    def _complete(self, call: ToolCall) -> list[Event]:
        self.calls.append(call)
        return [
            {
                "type": "tool_call",
                "tool_call": {"id": call.id, "name": call.name, "arguments": call.arguments},
            }
        ]

    def result(self, build: ResultBuilder) -> dict[str, Any]:
        return build(
            self.content, self.calls, self.native_stop, self.usage, self.provider_data or None
        )
