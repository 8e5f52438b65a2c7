"""``generate`` / ``stream`` and their async twins as declared to a type checker (DESIGN §20),
written once for BaseLLMInterface and FallbackInterface.

Each method takes the arguments of :class:`zerda.llm.types.GenerateOptions`, merges
``native={...}`` into them (:func:`call_options`) and hands them to the class's own bodies:
``_generation`` (driven sync or async, :mod:`zerda.llm._drive`) and ``_events`` /
``_events_async`` (the stream). The results are plain dicts; the casts only tell the type
checker their declared shapes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from zerda.llm._drive import Body, drive, drive_async

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from zerda.llm.types import GenerateOptions, Messages, Result, StreamEvent


def call_options(kwargs: Mapping[str, Any]) -> tuple[bool | None, dict[str, Any]]:
    """(``raise_errors``, the other arguments of a call) with the SDK's own keywords given in
    ``native={...}`` merged in, as if they had been passed as ``**native``: the typed
    signatures declare Zerda's arguments and ``native``; any other keyword still works at run
    time."""
    options = dict(kwargs)
    raise_errors = options.pop("raise_errors", None)
    native = options.pop("native", None)
    if native is None:
        return raise_errors, options
    if not isinstance(native, Mapping):
        raise TypeError(f"native must be a dict of the SDK's keywords, not {type(native).__name__}")
    both = sorted(set(native) & set(options))
    if both:
        raise TypeError(f"{', '.join(map(repr, both))} given both as an argument and in native=")
    return raise_errors, {**options, **native}


class TypedCalls:
    """The four public call methods over the class's bodies (see the module docstring)."""

    def _check_open(self) -> None:  # noqa: B027 - an optional hook: an interface refuses calls once closed
        """Raises when the object may make no more calls."""

    def _generation(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> Body[dict[str, Any]]:
        raise NotImplementedError

    def _events(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def _events_async(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError

    def generate(self, messages: Messages, **kwargs: Unpack[GenerateOptions]) -> Result:
        """One call. Arguments: DESIGN.md §3 (system, tools, tool_choice, max_tokens,
        temperature, top_p, stop, parallel_tool_calls, timeout, reasoning, response_format,
        ...; the SDK's own keywords in ``native={...}``), declared in
        :class:`zerda.llm.types.GenerateOptions`."""
        self._check_open()
        raise_errors, options = call_options(kwargs)
        return cast("Result", drive(self._generation(messages, raise_errors, options)))

    async def generate_async(self, messages: Messages, **kwargs: Unpack[GenerateOptions]) -> Result:
        """:meth:`generate`, awaited."""
        self._check_open()
        raise_errors, options = call_options(kwargs)
        return cast("Result", await drive_async(self._generation(messages, raise_errors, options)))

    def stream(
        self, messages: Messages, **kwargs: Unpack[GenerateOptions]
    ) -> Iterator[StreamEvent]:
        """Yields text, reasoning and tool_call events, then always a done event (DESIGN.md §7)."""
        raise_errors, options = call_options(kwargs)
        return cast("Iterator[StreamEvent]", self._events(messages, raise_errors, options))

    def stream_async(
        self, messages: Messages, **kwargs: Unpack[GenerateOptions]
    ) -> AsyncIterator[StreamEvent]:
        """:meth:`stream` for ``async for``."""
        raise_errors, options = call_options(kwargs)
        events = self._events_async(messages, raise_errors, options)
        return cast("AsyncIterator[StreamEvent]", events)
