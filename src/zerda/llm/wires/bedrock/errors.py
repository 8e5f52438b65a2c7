"""Bedrock's errors: botocore's ClientError codes and transport exceptions as Zerda errors,
and the retry-after headers.
"""

from __future__ import annotations

from typing import Any

from zerda.llm._retry import retry_after_from_headers
from zerda.llm.errors import (
    AuthenticationError,
    ConnectionError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    TimeoutError,
    ZerdaError,
    error_from_status,
    is_retryable_status,
    malformed_response,
)

# botocore ClientError codes (lower-cased: converse-stream's in-stream exceptions are
# camelCase, e.g. "throttlingException") -> error class.
_ERROR_CODES: dict[str, type[ZerdaError]] = {
    "throttlingexception": RateLimitError,
    "toomanyrequestsexception": RateLimitError,
    "servicequotaexceededexception": RateLimitError,
    "validationexception": InvalidRequestError,
    "accessdeniedexception": PermissionDeniedError,
    "resourcenotfoundexception": NotFoundError,
    "modeltimeoutexception": TimeoutError,
    "serviceunavailableexception": ServerError,
    "internalserverexception": ServerError,
    "modelerrorexception": ServerError,
    "modelnotreadyexception": ServerError,
    "modelstreamerrorexception": ServerError,
    "unrecognizedclientexception": AuthenticationError,
    "invalidsignatureexception": AuthenticationError,
    "incompletesignatureexception": AuthenticationError,
    "expiredtokenexception": AuthenticationError,
    "invalidclienttokenid": AuthenticationError,
    "missingauthenticationtokenexception": AuthenticationError,
}


def _map_client_error(exc: Any) -> ZerdaError:
    error = exc.response.get("Error") or {}
    status = (exc.response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    code = str(error.get("Code") or "")
    text = str(error.get("Message") or exc)
    # With no error type header, botocore reports the HTTP status as the code.
    message = f"{code}: {text}" if code and not code.isdigit() else text
    cls = _ERROR_CODES.get(code.lower())
    if cls is None:
        return error_from_status(status, message, "bedrock")
    # The status decides what is retried (DESIGN.md §5), whatever the code: a 424
    # ModelErrorException is a server error, but not a retried one. In-stream exceptions
    # carry no status: their type decides.
    retryable = is_retryable_status(status) if status is not None else None
    return cls(message, status_code=status, provider="bedrock", retryable=retryable)


def _retry_after(exc: BaseException) -> float | None:
    """Bedrock's ``x-amz-retry-after`` (milliseconds), else ``Retry-After``."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    headers = (response.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
    headers = {str(k).lower(): v for k, v in headers.items()}  # botocore's are lower-case
    try:
        return float(headers["x-amz-retry-after"]) / 1000
    except (KeyError, TypeError, ValueError):
        return retry_after_from_headers(headers)


def _raised_in_parser(exc: BaseException) -> bool:
    """Whether ``exc`` came from botocore's response parsers, which fail with a bare
    AttributeError or TypeError on a body of the wrong shape (``[]``, ``null``)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__") == "botocore.parsers"


def _map_transport_error(exc: BaseException) -> ZerdaError | None:
    from botocore import exceptions as bex
    from urllib3 import exceptions as uex

    if isinstance(exc, (AttributeError, TypeError, KeyError)) and _raised_in_parser(exc):
        return malformed_response("bedrock", f"it does not have the Converse shape: {exc}")

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (bex.ReadTimeoutError, bex.ConnectTimeoutError, uex.ReadTimeoutError)):
        return TimeoutError(text, provider="bedrock")
    if isinstance(
        exc, (bex.ConnectionError, bex.HTTPClientError, uex.ProtocolError, uex.HTTPError)
    ):
        return ConnectionError(text, provider="bedrock")
    if isinstance(
        exc, (bex.NoCredentialsError, bex.PartialCredentialsError, bex.CredentialRetrievalError)
    ):
        return AuthenticationError(text, provider="bedrock")
    if isinstance(exc, (bex.TokenRetrievalError, bex.ProfileNotFound)):
        return AuthenticationError(text, provider="bedrock")
    if isinstance(exc, bex.ParamValidationError):
        return InvalidRequestError(text, provider="bedrock")
    from botocore.eventstream import ParserError
    from botocore.parsers import ResponseParserError

    if isinstance(exc, ParserError):  # an event stream whose framing or checksums are broken
        return malformed_response("bedrock", f"its event stream could not be read: {exc}")
    if isinstance(exc, ResponseParserError):
        return malformed_response("bedrock", f"it could not be parsed: {exc}")
    return None
