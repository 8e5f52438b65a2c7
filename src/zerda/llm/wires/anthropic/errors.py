"""Anthropic's error types and the HTTP statuses they stand for: one table for the errors of
an in-stream ``event: error`` (sent with HTTP 200) and of a Message Batches result.
https://docs.anthropic.com/en/api/errors
"""

from __future__ import annotations

ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
