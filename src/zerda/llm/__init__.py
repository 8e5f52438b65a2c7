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
    from typing import TYPE_CHECKING

    from zerda.llm import _lazy
    from zerda.llm._ratelimit import RateLimiter
    from zerda.llm.base import BaseLLMInterface
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
    from zerda.llm.providers import create_interface

if TYPE_CHECKING:
    from zerda.llm._profile import ModelProfile, profile
    from zerda.llm._request import Request
    from zerda.llm._tool_decorator import PAUSE, tool
    from zerda.llm.functions import tool_from_function, tool_from_model
    from zerda.llm.messages import tool_result
    from zerda.llm.parts import audio, document, image
    from zerda.llm.tools import ToolCall

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
# functions; the model profiles (with the price and limit tables), the tool decorator and
# the request checks (messages, parts, tools) are not needed to build an interface (import +
# client, docs/decisions.md, "Building an interface loads only what building needs").
_LAZY = {
    "tool_from_function": "zerda.llm.functions",
    "tool_from_model": "zerda.llm.functions",
    "ModelProfile": "zerda.llm._profile",
    "profile": "zerda.llm._profile",
    "PAUSE": "zerda.llm._tool_decorator",
    "tool": "zerda.llm._tool_decorator",
    "Request": "zerda.llm._request",
    "ToolCall": "zerda.llm.tools",
    "tool_result": "zerda.llm.messages",
    "audio": "zerda.llm.parts",
    "document": "zerda.llm.parts",
    "image": "zerda.llm.parts",
}

__getattr__ = _lazy.attributes(__name__, _LAZY)
