"""Anthropic error mapping on SDKs older than 2.5, simulated on whatever SDK is installed.

``APIStatusError.api_message`` / ``.type`` first appear in anthropic 2.5: before, the
message and type are read from the body's ``error`` object
(https://docs.anthropic.com/en/api/errors). Older SDKs also raise a bare ``ValueError``
for an exception frame of Bedrock's invoke-with-response-stream, where 2.5+ turns the
frame into an ``error`` event. Both must map as the current SDK maps them.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from zerda.llm import create_interface, errors

anthropic = pytest.importorskip("anthropic")


def _status_error(status: int, body: Any, *, old_sdk: bool) -> Any:
    """A real ``APIStatusError`` (a stub response: no HTTP library needed); ``old_sdk``
    removes the attributes anthropic < 2.5 lacks."""
    response = SimpleNamespace(status_code=status, headers={}, request=None)
    exc = anthropic.APIStatusError(f"Error code: {status} - {body}", response=response, body=body)
    if old_sdk:
        exc.__dict__.pop("api_message", None)
        exc.__dict__.pop("type", None)
        assert not hasattr(exc, "api_message") and not hasattr(exc, "type")
    return exc


@pytest.fixture(scope="module")
def llm() -> Any:
    return create_interface("anthropic", model="claude-haiku-4-5", api_key="sk-test")


def _body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


@pytest.mark.parametrize("old_sdk", [True, False], ids=["old-sdk", "current-sdk"])
@pytest.mark.parametrize(
    ("status", "body", "raised", "message"),
    [
        (429, _body("rate_limit_error", "slow down"), errors.RateLimitError, "slow down"),
        (400, _body("invalid_request_error", "bad"), errors.InvalidRequestError, "bad"),
        # Bedrock's own error body: {"message"}, no "error" object.
        (503, {"message": "busy"}, errors.ServerError, "busy"),
        # An in-stream `event: error` (HTTP 200): error.type decides the class.
        (200, _body("overloaded_error", "boom"), errors.ServerError, "overloaded_error: boom"),
        (200, _body("rate_limit_error", "wait"), errors.RateLimitError, "rate_limit_error: wait"),
        (200, _body("invalid_request_error", "no"), errors.InvalidRequestError, None),
    ],
)
def test_status_error_without_api_message_or_type(
    llm: Any, old_sdk: bool, status: int, body: Any, raised: type, message: str | None
) -> None:
    error = llm._map_error(_status_error(status, body, old_sdk=old_sdk))
    assert type(error) is raised
    assert error.message == (message or "invalid_request_error: no")
    assert error.provider == "anthropic"


def test_old_and_current_sdk_map_alike(llm: Any) -> None:
    body = _body("overloaded_error", "boom")
    old = llm._map_error(_status_error(529, body, old_sdk=True))
    new = llm._map_error(_status_error(529, body, old_sdk=False))
    assert old.to_dict() == new.to_dict()
    assert old.to_dict()["message"] == "boom"


def _bad_frame(exception_type: str, body: bytes) -> ValueError:
    """What anthropic < 2.5's Bedrock stream decoder raises for an exception frame."""
    frame = {
        "status_code": 400,
        "headers": {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        "body": body,
    }
    return ValueError(f"Bad response code, expected 200: {frame}")


@pytest.mark.parametrize(
    ("exception_type", "body", "message"),
    [
        ("serviceUnavailableException", b'{"message":"overloaded"}', "overloaded"),
        ("validationException", b"not json", "not json"),
    ],
)
def test_bedrock_stream_exception_frame(
    llm: Any, exception_type: str, body: bytes, message: str
) -> None:
    """Mapped as anthropic 2.5+ maps the `error` event it makes of the frame: error type
    the frame's exception type (not a Messages API type, so a server error)."""
    error = llm._map_error(_bad_frame(exception_type, body))
    assert type(error) is errors.ServerError
    assert error.message == f"{exception_type}: {message}"
    assert error.provider == "anthropic"


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("some other value error"),
        ValueError("Bad response code, expected 200: {not a literal"),
        ValueError("Bad response code, expected 200: [1, 2]"),
    ],
    ids=["other", "unparsable", "not-a-dict"],
)
def test_other_value_errors_are_not_mapped(llm: Any, exc: ValueError) -> None:
    assert llm._map_error(exc) is None
