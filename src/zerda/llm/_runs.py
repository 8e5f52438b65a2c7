"""``run`` / ``run_async`` / ``run_stream`` / ``run_stream_async``: the tool loop
(docs/loop.md) as methods, written once for BaseLLMInterface and FallbackInterface.

The loop itself (:mod:`zerda.llm.loop`) is imported on the first run: it needs asyncio,
which an interface that never runs the loop does not load. The arguments are declared in
:class:`zerda.llm.types.RunOptions` (a type checker sees them; ``**native`` keywords still
work at run time).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Literal, cast, overload

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from zerda.llm.types import Messages, RunEvent, RunOptions, RunResult


class ToolLoop:
    """The loop's methods over the class's ``generate`` / ``stream`` and their async twins.
    The loop's own arguments (``approve``, ``decisions``, ``tool_timeout``, ``budget``,
    ``stop_on``, ``final_answer``, ``max_concurrency``, ``on_tool_call``,
    ``output_retries``) are documented in :func:`zerda.llm.loop.run`; the others go to each
    turn's ``generate``."""

    @overload
    def run(
        self, messages: Messages, *, stream: Literal[False] = ..., **kwargs: Unpack[RunOptions]
    ) -> RunResult: ...

    @overload
    def run(
        self, messages: Messages, *, stream: Literal[True], **kwargs: Unpack[RunOptions]
    ) -> Iterator[RunEvent]: ...

    def run(
        self, messages: Messages, *, stream: bool = False, **kwargs: Unpack[RunOptions]
    ) -> RunResult | Iterator[RunEvent]:
        """The tool loop (docs/loop.md); see :mod:`zerda.llm.loop`."""
        from zerda.llm.loop import run

        options: dict[str, Any] = dict(kwargs)
        return run(self, messages, stream=stream, **options)  # type: ignore[arg-type, no-any-return]

    @overload
    async def run_async(
        self, messages: Messages, *, stream: Literal[False] = ..., **kwargs: Unpack[RunOptions]
    ) -> RunResult: ...

    @overload
    async def run_async(
        self, messages: Messages, *, stream: Literal[True], **kwargs: Unpack[RunOptions]
    ) -> AsyncIterator[RunEvent]: ...

    async def run_async(
        self, messages: Messages, *, stream: bool = False, **kwargs: Unpack[RunOptions]
    ) -> RunResult | AsyncIterator[RunEvent]:
        from zerda.llm.loop import run_async

        options: dict[str, Any] = dict(kwargs)
        return await run_async(self, messages, stream=stream, **options)  # type: ignore[arg-type, no-any-return]

    def run_stream(self, messages: Messages, **kwargs: Unpack[RunOptions]) -> Iterator[RunEvent]:
        """``run(..., stream=True)``: every turn's stream events, ``tool_result`` and
        ``turn`` events, then one ``done`` holding the run's result."""
        from zerda.llm.loop import run_stream

        options: dict[str, Any] = dict(kwargs)
        events = run_stream(self, messages, **options)  # type: ignore[arg-type]
        return cast("Iterator[RunEvent]", events)

    def run_stream_async(
        self, messages: Messages, **kwargs: Unpack[RunOptions]
    ) -> AsyncIterator[RunEvent]:
        """:meth:`run_stream` for ``async for``."""
        from zerda.llm.loop import run_stream_async

        options: dict[str, Any] = dict(kwargs)
        events = run_stream_async(self, messages, **options)  # type: ignore[arg-type]
        return cast("AsyncIterator[RunEvent]", events)
