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
        if not isinstance(message, str):  # a provider's error body may hold any JSON value
            message = str(message)
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
    """A request refused (by Zerda before sending, or by the provider). ``capability`` is
    True when the request is well formed but this row cannot take it (a part, a medium, a
    feature or a parameter it lacks, checked against its traits): a fallback then moves on
    to its next interface, which may take it (docs/errors.md, "Capability refusals")."""

    type = "invalid_request"

    def __init__(self, message: str, *, capability: bool = False, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.capability = capability


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
        "cost": None,  # DESIGN §21: a failed call has no usage to price
        "error": error.to_dict(),
    }


# --- the decisions every provider shares -----------------------------------------------

# A Retry-After longer than this is not waited for: the call fails at once with its
# (retryable) error and the caller decides. Stainless SDKs (openai, anthropic, groq) honour
# at most 60 s too; waiting longer inside one call would look like a hang.
MAX_RETRY_AFTER = 60.0


def retry_delay(
    error: ZerdaError,
    attempt: int,
    retry_after: float | None,
    *,
    waited: float = 0.0,
    budget: float | None = None,
) -> float | None:
    """Seconds to wait before retry number ``attempt`` (from 0) after ``error``, or None:
    do not retry. The one retry decision of every provider (docs/errors.md, Retries):

    - only errors whose ``retryable`` is true (connection errors, timeouts, 408, 409, 429,
      5xx; never a broken 200 body or an error inside a started stream);
    - a positive Retry-After up to :data:`MAX_RETRY_AFTER` is waited as given; a longer one
      is not retried at all; without one, exponential backoff with jitter;
    - with a ``budget`` (the caller's ``timeout``), the waits of one call never add up to
      more than it: a wait that would pass it is not started.
    """
    if not error.retryable:
        return None
    if retry_after is not None and retry_after > MAX_RETRY_AFTER:
        return None
    from zerda.llm import _retry  # its random import is not needed at import time

    delay = retry_after if retry_after is not None and retry_after > 0 else None
    if delay is None:
        delay = _retry.backoff_delay(attempt)
    if budget is not None and waited + delay > budget:
        return None
    return delay


def excerpt(value: Any, limit: int = 300) -> str:
    """``repr(value)``, cut to ``limit`` characters: a raw part quoted in an error."""
    try:
        text = repr(value)
    except RecursionError:  # a provider's part nested past the recursion limit
        return f"<a {type(value).__name__} nested too deeply to show>"
    return text if len(text) <= limit else text[:limit] + "..."


def malformed_response(provider: str | None, problem: str) -> ServerError:
    """A 200 whose body (or stream) is not the provider's documented shape: not JSON,
    ``{}``, ``[]``, ``null``, an HTML page, a part missing what it must have. The provider's
    fault, and not retried: the same request gets the same body (docs/errors.md)."""
    return ServerError(
        f"{provider or 'the provider'} sent a malformed response: {problem}",
        provider=provider,
        retryable=False,
    )


def stream_ended_early(provider: str | None, final_event: str) -> ServerError:
    """A stream that ended cleanly before its final event (``final_event``, e.g. OpenAI's
    finish_reason, Anthropic's message_stop): the answer is incomplete, so it is an error
    whose result keeps the text received (docs/errors.md, Streams). Not retried: text may
    already have reached the caller."""
    return ServerError(
        f"the {provider or 'provider'} stream ended before its final event ({final_event}): "
        "the answer is incomplete",
        provider=provider,
        retryable=False,
    )
