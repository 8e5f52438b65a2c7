"""The mechanics of Zerda's retries: reading Retry-After headers and exponential backoff.
Backoff matches the Stainless SDKs (openai, anthropic, groq). Whether and how long to wait
is decided once, by :func:`zerda.llm.errors.retry_delay`, for every provider.
"""

from __future__ import annotations

import random
from typing import Any

INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0


def retry_after_from_headers(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return float(value)
        except ValueError:
            # An HTTP date is rare; its parser is not worth loading at import time.
            from datetime import datetime, timezone
            from email.utils import parsedate_to_datetime

            moment = parsedate_to_datetime(value)
            return (moment - datetime.now(timezone.utc)).total_seconds()
    except (TypeError, ValueError):
        return None


def backoff_delay(attempt: int) -> float:
    """Exponential backoff with jitter (``attempt`` counts from 0)."""
    delay = min(INITIAL_RETRY_DELAY * 2**attempt, MAX_RETRY_DELAY)
    return delay * (1 - 0.25 * random.random())
