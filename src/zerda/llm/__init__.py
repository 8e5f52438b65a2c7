"""zerda.llm: the public surface.

Importing this package imports no provider SDK and no pydantic: what needs them is loaded
on first use (``tool_from_function``, the provider classes through ``create_interface``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zerda.llm._profile import ModelProfile, profile
from zerda.llm._ratelimit import RateLimiter
from zerda.llm._tool_decorator import PAUSE, tool
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


def __getattr__(name: str) -> Any:
    # pydantic is imported only by those who build tools from Python functions.
    if name in ("tool_from_function", "tool_from_model"):
        from zerda.llm import functions

        return getattr(functions, name)
    raise AttributeError(f"module 'zerda.llm' has no attribute {name!r}")
