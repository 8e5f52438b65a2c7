"""zerda.llm: the public surface.

Importing this package imports no provider SDK and no pydantic: what needs them is loaded
on first use (``tool_from_function``, the provider classes through ``create_interface``).
"""

from __future__ import annotations

from zerda.llm import _gc

# The collector is paused while Zerda's modules load: everything they create lives as long
# as the process, so young collections in between would only walk it and promote it, and
# pull the process's next full collection forward (docs/decisions.md, "Importing
# zerda.llm pauses the garbage collector").
with _gc.paused():
    from typing import TYPE_CHECKING, Any

    from zerda.llm._ratelimit import RateLimiter
    from zerda.llm.base import BaseLLMInterface, Request
    from zerda.llm.errors import (
        AuthenticationError,
        ConnectionError,
        InvalidRequestError,
        NotFoundError,
        OutputValidationError,
        PermissionDeniedError,
        RateLimitError,
        ServerError,
        TimeoutError,
        UnknownError,
        ZerdaError,
    )
    from zerda.llm.messages import tool_result
    from zerda.llm.parts import audio, document, image
    from zerda.llm.providers import create_interface
    from zerda.llm.tools import ToolCall

if TYPE_CHECKING:
    from zerda.llm._profile import ModelProfile, profile
    from zerda.llm._tool_decorator import PAUSE, tool
    from zerda.llm.functions import tool_from_function, tool_from_model

__all__ = [
    "AuthenticationError",
    "BaseLLMInterface",
    "ConnectionError",
    "InvalidRequestError",
    "ModelProfile",
    "NotFoundError",
    "OutputValidationError",
    "PAUSE",
    "PermissionDeniedError",
    "RateLimitError",
    "RateLimiter",
    "Request",
    "ServerError",
    "TimeoutError",
    "ToolCall",
    "UnknownError",
    "ZerdaError",
    "audio",
    "create_interface",
    "document",
    "image",
    "profile",
    "tool",
    "tool_from_function",
    "tool_from_model",
    "tool_result",
]


# Loaded on first access: pydantic is imported only by those who build tools from Python
# functions; the model profiles (with the price and limit tables) and the tool decorator
# are not needed to build an interface (import + client, benchmarks/bench_imports.py).
_LAZY = {
    "tool_from_function": "zerda.llm.functions",
    "tool_from_model": "zerda.llm.functions",
    "ModelProfile": "zerda.llm._profile",
    "profile": "zerda.llm._profile",
    "PAUSE": "zerda.llm._tool_decorator",
    "tool": "zerda.llm._tool_decorator",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'zerda.llm' has no attribute {name!r}")
