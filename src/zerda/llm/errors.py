"""Error types and the error result shape (DESIGN.md §5).

By default a failed call returns :func:`error_result`; with ``raise_errors=True`` it raises the
matching :class:`ZerdaError` subclass, chained to the SDK's exception.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

ErrorType = Literal[
    "invalid_request",
    "authentication",
    "permission",
    "not_found",
    "rate_limit",
    "timeout",
    "connection",
    "server",
    "invalid_output",
    "unknown",
]

RETRYABLE_TYPES = frozenset({"rate_limit", "timeout", "connection", "server"})


class ZerdaError(Exception):
    """Base of every error Zerda raises for a failed call."""

    type: ClassVar[ErrorType] = "unknown"

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        provider: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.provider = provider
        self.retryable = self.type in RETRYABLE_TYPES if retryable is None else retryable

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": self.message,
            "status_code": self.status_code,
            "provider": self.provider,
            "retryable": self.retryable,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status_code={self.status_code!r}, provider={self.provider!r})"


class InvalidRequestError(ZerdaError):
    type = "invalid_request"


class AuthenticationError(ZerdaError):
    type = "authentication"


class PermissionDeniedError(ZerdaError):
    type = "permission"


class NotFoundError(ZerdaError):
    type = "not_found"


class RateLimitError(ZerdaError):
    type = "rate_limit"


class TimeoutError(ZerdaError):  # noqa: A001 - zerda.llm.errors.TimeoutError, by design
    type = "timeout"


class ConnectionError(ZerdaError):  # noqa: A001
    type = "connection"


class ServerError(ZerdaError):
    type = "server"


class UnknownError(ZerdaError):
    type = "unknown"


class OutputValidationError(ZerdaError):
    """The answer to a ``response_format`` call is not valid JSON or does not validate.
    ``result`` is the whole result (``content`` keeps the answer, ``parse_error`` says why)."""

    type = "invalid_output"

    def __init__(
        self, message: str, *, result: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.result = result


ERROR_CLASSES: dict[str, type[ZerdaError]] = {
    cls.type: cls
    for cls in (
        InvalidRequestError,
        AuthenticationError,
        PermissionDeniedError,
        NotFoundError,
        RateLimitError,
        TimeoutError,
        ConnectionError,
        ServerError,
        OutputValidationError,
        UnknownError,
    )
}


def error_class_for_status(status: int | None) -> type[ZerdaError]:
    """The error class an HTTP status means, the same for every provider."""
    if status is None:
        return UnknownError
    if status in (400, 413, 422):
        return InvalidRequestError
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status == 429:
        return RateLimitError
    if status == 408:
        return TimeoutError
    if status >= 500:
        return ServerError
    return UnknownError


def is_retryable_status(status: int | None) -> bool:
    """Statuses retried by every provider (DESIGN.md §5): 408, 409, 429 and 5xx."""
    return status is not None and (status in (408, 409, 429) or status >= 500)


def error_from_status(status: int | None, message: str, provider: str, **extra: Any) -> ZerdaError:
    return error_class_for_status(status)(
        message,
        status_code=status,
        provider=provider,
        retryable=is_retryable_status(status) if status is not None else None,
        **extra,
    )


def error_result(
    error: ZerdaError, content: str | None = None, reasoning: str | None = None
) -> dict[str, Any]:
    """The result of a failed call; ``content`` and ``reasoning`` keep the text streamed
    before the failure (None otherwise)."""
    return {
        "content": content,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": reasoning or None,
        "message": None,
        "error": error.to_dict(),
    }
