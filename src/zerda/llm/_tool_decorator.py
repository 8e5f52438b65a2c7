"""``@zerda.llm.tool``: a function's tool settings, and ``zerda.llm.PAUSE``.

The decorator returns the function itself (it stays an ordinary function) with its settings
attached; :mod:`zerda.llm.functions` reads ``name``, ``description`` and ``strict`` when it
builds the tool dict, and the tool loop reads ``requires_approval`` and ``timeout``
(docs/loop.md). Nothing here imports pydantic or asyncio: ``import zerda.llm`` loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

__all__ = ["PAUSE", "ToolSettings", "check_timeout", "settings_of", "tool"]

F = TypeVar("F", bound=Callable[..., Any])
ATTRIBUTE = "__zerda_tool__"


class _Pause:
    """The answer of an ``approve`` callback that decides later: the run pauses."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "zerda.llm.PAUSE"

    def __reduce__(self) -> str:
        return "PAUSE"  # one object, also after pickling


PAUSE: Any = _Pause()


@dataclass(frozen=True)
class ToolSettings:
    """What ``@tool(...)`` says about a function; None / False: the default."""

    name: str | None = None
    description: str | None = None
    requires_approval: bool = False
    timeout: float | None = None
    strict: bool = False


def check_timeout(value: Any, where: str) -> float | None:
    """``value`` as seconds (None: no timeout); a ValueError naming ``where`` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{where} must be a positive number of seconds or None, not {value!r}")
    return float(value)


def _settings(
    name: Any, description: Any, requires_approval: Any, timeout: Any, strict: Any
) -> ToolSettings:
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"@tool(name=...) must be a non-empty string, not {name!r}")
    if description is not None and not isinstance(description, str):
        raise ValueError(f"@tool(description=...) must be a string, not {description!r}")
    for flag, value in (("requires_approval", requires_approval), ("strict", strict)):
        if not isinstance(value, bool):
            raise ValueError(f"@tool({flag}=...) must be True or False, not {value!r}")
    seconds = check_timeout(timeout, "@tool(timeout=...)")
    return ToolSettings(name, description, requires_approval, seconds, strict)


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    timeout: float | None = None,
    strict: bool = False,
) -> Callable[[F], F]: ...


def tool(
    fn: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    timeout: float | None = None,
    strict: bool = False,
) -> Any:
    """Marks a function as a tool with settings, bare (``@tool``) or with arguments.

    ``name`` and ``description`` replace the function's name and docstring summary in the
    tool dict; ``strict=True`` asks for strict argument schemas where the provider has them;
    ``requires_approval=True`` makes the loop ask ``approve=`` (or pause) before each call;
    ``timeout`` (seconds) wins over ``run(tool_timeout=...)`` for this tool.
    """
    settings = _settings(name, description, requires_approval, timeout, strict)

    def mark(function: F) -> F:
        if isinstance(function, type) or not callable(function):
            raise TypeError(f"@tool decorates a function, not {function!r}")
        try:
            setattr(function, ATTRIBUTE, settings)
        except (AttributeError, TypeError):  # a builtin: no attributes can be set on it
            raise TypeError(f"@tool cannot mark {function!r}: wrap it in a `def`") from None
        return function

    return mark if fn is None else mark(fn)


def settings_of(fn: Any) -> ToolSettings | None:
    """The settings ``@tool`` attached to ``fn`` (a bound method reads its function's)."""
    settings = getattr(fn, ATTRIBUTE, None)
    return settings if isinstance(settings, ToolSettings) else None
