"""Tools that carry their own executor.

``tools=`` takes dicts (descriptions only), Python functions (executed by the tool loop after
validating their arguments) and, through this hook, objects that describe a tool AND execute
it themselves: the tools of an MCP server (:mod:`zerda.llm.mcp`) are such objects, executed by
the server. ``generate`` sends their description; ``run`` / ``run_async`` call them.

A subclass gives ``name``, ``description`` and ``parameters`` (a JSON Schema object) and the
two executors. Nothing here imports an SDK or pydantic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, NamedTuple

__all__ = ["ExecutableTool", "ToolOutput"]


class ToolOutput(NamedTuple):
    """What an executor returns: the tool message's content and whether it is an error."""

    content: Any
    is_error: bool = False


class ExecutableTool(ABC):
    """A tool description with its executor; see the module docstring."""

    name: str
    description: str
    parameters: dict[str, Any]
    # Read by the tool loop (docs/loop.md), as @zerda.llm.tool sets them on a function:
    # ask approve= (or pause) before each call; seconds before the call is answered as
    # timed out (None: run's tool_timeout). Set them on an instance or a subclass.
    requires_approval: bool = False
    timeout: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The unified tool dict ``generate`` sends (a new dict each time)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    @abstractmethod
    def call(self, arguments: dict[str, Any]) -> ToolOutput:
        """Executes the tool from the sync loop (``run``)."""

    @abstractmethod
    async def call_async(self, arguments: dict[str, Any]) -> ToolOutput:
        """Executes the tool from the async loop (``run_async``)."""
