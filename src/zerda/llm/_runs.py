"""``run`` / ``run_async``: the tool loop (DESIGN.md §8) as a method, written once for
BaseLLMInterface and FallbackInterface.

The loop itself (:mod:`zerda.llm.loop`) is imported on the first run: it needs asyncio,
which an interface that never runs the loop does not load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ToolLoop:
    """``run`` / ``run_async`` over the class's ``generate`` / ``generate_async``."""

    def run(
        self, messages: Any, *, tools: Sequence[Any] = (), max_turns: int = 10, **kwargs: Any
    ) -> dict[str, Any]:
        """The automatic tool loop (DESIGN.md §8); see :mod:`zerda.llm.loop`."""
        from zerda.llm.loop import run

        return run(self, messages, tools=tools, max_turns=max_turns, **kwargs)  # type: ignore[arg-type]

    async def run_async(
        self, messages: Any, *, tools: Sequence[Any] = (), max_turns: int = 10, **kwargs: Any
    ) -> dict[str, Any]:
        from zerda.llm.loop import run_async

        return await run_async(self, messages, tools=tools, max_turns=max_turns, **kwargs)  # type: ignore[arg-type]
