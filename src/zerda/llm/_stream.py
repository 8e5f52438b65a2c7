"""Assembly of streamed responses, shared by every provider's stream state.

A provider's stream state feeds native chunks into a :class:`StreamAccumulator`, which
turns them into Zerda's stream events and, at the end, into exactly the result generate
builds for the same response.

Tool-call deltas (DESIGN.md §7) are made here, once, for every provider: each call gets an
``index`` in order of first appearance; its argument fragments become ``tool_call_delta``
events as they arrive (the first one carrying the name and id; fragments that arrive before
the name are held until it comes); a call that arrives whole gets one delta holding its
arguments as JSON text; all of a call's deltas come before its ``tool_call`` event. With a
``response_format``, ``partial`` events carry the object so far: from the text in native
mode, from the answer tool's arguments in tool mode (that call is the answer: it ends as
one text event holding the answer's JSON, not as a tool call).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zerda.llm.errors import excerpt, malformed_response
from zerda.llm.tools import ToolCall, _parse_json_arguments

if TYPE_CHECKING:
    from zerda.llm._structured import OutputSpec, PartialParser

Event = dict[str, Any]
# Results.make_result: (content, calls, native stop, usage, provider_data, reasoning) and
# the keywords server_tool_calls= and citations= (DESIGN §18).
ResultBuilder = Callable[..., dict[str, Any]]


@dataclass
class _OpenCall:
    id: str | None
    name: str
    fragments: list[str] = field(default_factory=list)
    arguments: Any = None  # set when the provider sends whole arguments (dict or text)
    index: int = 0  # the call's position in the turn
    sent: int = 0  # how many fragments went out as tool_call_delta events


class StreamAccumulator:
    """Collects text, reasoning text, tool calls (keyed by the provider's index or block,
    never by position in the stream), the native stop reason, usage and provider data."""

    def __init__(self, provider: str | None = None) -> None:
        self.provider = provider
        # Set by the provider's _feed on its stream's final event (finish_reason,
        # message_stop, done...): a stream that ends without it is incomplete.
        self.finished = False
        self.text_parts: list[str] = []
        self.reasoning_parts: list[str] = []
        self.calls: list[ToolCall] = []
        self.native_stop: Any = None
        self.usage: dict[str, Any] | None = None
        self.provider_data: dict[str, Any] = {}
        # What the provider ran and cited (DESIGN §18), in order.
        self.server_calls: list[dict[str, Any]] = []
        self.citations: list[dict[str, Any]] = []
        self._chars = 0  # characters of text so far: citation offsets
        # Provider-specific state across chunks that is not a tool call (e.g. reasoning
        # blocks being assembled); a provider keys it by its own name.
        self.scratch: dict[str, Any] = {}
        self._open: dict[Hashable, _OpenCall] = {}
        self._next_index = 0
        self._output: OutputSpec | None = None
        self._partial: PartialParser | None = None

    def expect_output(self, output: OutputSpec | None) -> None:
        """A response_format call: emit ``partial`` events (module docstring)."""
        if output is None:
            return
        from zerda.llm._structured import PartialParser

        self._output = output
        self._partial = PartialParser()

    @property
    def content(self) -> str | None:
        return "".join(self.text_parts) or None

    @property
    def reasoning_text(self) -> str | None:
        return "".join(self.reasoning_parts) or None

    def text(self, delta: Any) -> list[Event]:
        if not delta:
            return []
        if not isinstance(delta, str):
            raise malformed_response(
                self.provider, f"a text delta is not a string: {excerpt(delta)}"
            )
        self.text_parts.append(delta)
        self._chars += len(delta)
        events: list[Event] = [{"type": "text", "text": delta}]
        if self._partial is not None and self._output is not None and self._output.mode == "native":
            events += self._partial.feed("".join(self.text_parts))  # the answer is the text
        return events

    @property
    def content_length(self) -> int:
        """Characters of text so far (offsets of citations into ``content``)."""
        return self._chars

    def server_call(self, call: dict[str, Any]) -> list[Event]:
        """A call the provider ran, complete (zerda.llm._server_tools.server_call's shape):
        recorded for the result, and its ``server_tool_call`` event (the call under that
        key, as a ``tool_call`` event holds its call: the call has a ``type`` of its own)."""
        self.server_calls.append(call)
        return [{"type": "server_tool_call", "server_tool_call": call}]

    def citation(self, cited: dict[str, Any]) -> list[Event]:
        """A citation over the text (zerda.llm._server_tools.citation's shape)."""
        self.citations.append(cited)
        return [{"type": "citation", "citation": cited}]

    def reasoning(self, delta: Any) -> list[Event]:
        """A piece of the reasoning text; the pieces joined are the result's reasoning."""
        if not delta:
            return []
        if not isinstance(delta, str):
            raise malformed_response(
                self.provider, f"a reasoning delta is not a string: {excerpt(delta)}"
            )
        self.reasoning_parts.append(delta)
        return [{"type": "reasoning", "text": delta}]

    def start_call(self, key: Hashable, call_id: str | None, name: str) -> list[Event]:
        """Opens a call; a call already open under ``key`` is completed first (some
        providers reuse index 0 for every parallel call)."""
        events = self.end_call(key) if key in self._open else []
        self._open[key] = self._new_call(call_id, name)
        return events

    def _new_call(self, call_id: str | None, name: str) -> _OpenCall:
        call = _OpenCall(call_id, name, index=self._next_index)
        self._next_index += 1
        return call

    def name_call(self, key: Hashable, name: str) -> list[Event]:
        """Names an open call whose name arrived after its first chunk; held fragments
        go out now."""
        call = self._open.get(key)
        if call is None or call.name:
            return []
        call.name = name
        return self._deltas(call)

    def _is_answer(self, name: str) -> bool:
        out = self._output
        return out is not None and out.mode == "tool" and name == out.name

    def _deltas(self, call: _OpenCall) -> list[Event]:
        """The fragments of ``call`` not sent yet, as events: tool_call_delta, or partial
        objects for the answer tool. Held back until the call has a name."""
        if not call.name or call.sent == len(call.fragments):
            return []
        if self._is_answer(call.name):
            call.sent = len(call.fragments)
            return self._partial.feed("".join(call.fragments)) if self._partial else []
        events = [self._delta(call, f) for f in call.fragments[call.sent :]]
        call.sent = len(call.fragments)
        return events

    @staticmethod
    def _delta(call: _OpenCall, fragment: str) -> Event:
        return {
            "type": "tool_call_delta",
            "index": call.index,
            "id": call.id,
            "name": call.name,
            "arguments": fragment,
        }

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def open_call(self, key: Hashable) -> _OpenCall | None:
        """The call being assembled under ``key`` (id, name, fragments so far), if any."""
        return self._open.get(key)

    def add_arguments(self, key: Hashable, fragment: str | None) -> list[Event]:
        """Records an argument fragment; returns its tool_call_delta (or partial) events."""
        call = self._open.get(key)
        if not fragment or call is None:
            return []
        call.fragments.append(fragment)
        return self._deltas(call)

    def end_call(self, key: Hashable) -> list[Event]:
        open_call = self._open.pop(key, None)
        if open_call is None:
            return []
        raw = open_call.arguments
        if raw is None:
            raw = "".join(open_call.fragments)
        events = self._last_deltas(open_call, raw)
        call = ToolCall(open_call.id, open_call.name, _parse_json_arguments(raw))
        return events + self._complete(call, self._is_answer(call.name))

    def _last_deltas(self, call: _OpenCall, raw: Any) -> list[Event]:
        """What is still owed before a call completes: held fragments (a call that never
        got a name goes out nameless), and a whole-text delta when none was sent (whole
        arguments, or none at all: ``{}``, so that the fragments still parse)."""
        if call.arguments is not None:
            text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
            call.fragments, call.sent = [text], 0
        elif not "".join(call.fragments).strip():
            call.fragments.append("{}")
        if not call.name:
            events = [self._delta(call, f) for f in call.fragments[call.sent :]]
            call.sent = len(call.fragments)
            return events
        return self._deltas(call)

    def whole_call(self, call_id: str | None, name: str, arguments: Any) -> list[Event]:
        """A call that arrived complete in one chunk (Gemini, Ollama)."""
        if not isinstance(arguments, (dict, str)) and arguments is not None:
            arguments = dict(arguments)
        open_call = self._new_call(call_id, name)
        open_call.arguments = arguments if arguments is not None else {}
        return self._last_deltas(open_call, open_call.arguments) + self._complete(
            ToolCall(call_id, name, _parse_json_arguments(arguments or {})),
            self._is_answer(name),
        )

    def end_all_calls(self) -> list[Event]:
        events: list[Event] = []
        for key in list(self._open):
            events += self.end_call(key)
        return events

    def _complete(self, call: ToolCall, is_answer: bool = False) -> list[Event]:
        self.calls.append(call)
        if is_answer:  # the answer of tool-mode structured output: it is the content
            from zerda.llm._structured import answer_text

            return self.text(answer_text(call.arguments))
        return [
            {
                "type": "tool_call",
                "tool_call": {"id": call.id, "name": call.name, "arguments": call.arguments},
            }
        ]

    def final_partial(self, result: dict[str, Any]) -> list[Event]:
        """The last ``partial`` (the parsed object's JSON form), before ``done``."""
        if self._partial is None or result.get("parsed") is None:
            return []
        return self._partial.final(result["parsed"])

    def result(self, build: ResultBuilder) -> dict[str, Any]:
        return build(
            self.content,
            self.calls,
            self.native_stop,
            self.usage,
            self.provider_data or None,
            self.reasoning_text,
            server_tool_calls=self.server_calls or None,
            citations=self.citations or None,
        )
