"""The mechanics of Zerda's retries (the decision is tested in tests/reliability)."""

from __future__ import annotations

import pytest

from zerda.llm._retry import backoff_delay, retry_after_from_headers


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "120"}, 0.12),
        ({"retry-after-ms": "120", "retry-after": "9"}, 0.12),
        ({}, None),
        (None, None),
        ({"retry-after": "soon"}, None),
    ],
)
def test_retry_after_from_headers(headers: dict[str, str] | None, seconds: float | None) -> None:
    assert retry_after_from_headers(headers) == seconds


def test_retry_after_as_an_http_date_in_the_past_is_negative() -> None:
    assert retry_after_from_headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) < 0


def test_backoff_is_exponential_with_jitter() -> None:
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (10, 8.0)]:
        delay = backoff_delay(attempt)
        assert 0.75 * ceiling <= delay <= ceiling
