"""Retries: one policy for every provider (the SDKs' own retries are off).

Every SDK call goes through :meth:`Retrying._retrying` (or its async twin): a failure is
mapped to the error shape and :func:`zerda.llm.errors.retry_delay` decides whether to wait
and try again, within the call's timeout (``_RETRY_BUDGET``).

The waits are ``zerda.llm.base._sleep`` / ``_sleep_async``, looked up there at each wait,
so that a test may replace them to record the waits instead of sleeping.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TypeVar

from zerda.llm.errors import retry_delay
from zerda.llm.interface._host import Host

T = TypeVar("T")

# The caller's timeout for the call being made in this context (thread or task): the waits
# between its retries never add up past it. Set for each call by _checked_request.
_RETRY_BUDGET: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "zerda_retry_budget", default=None
)


class Retrying(Host):
    """``_retrying`` and the hooks that decide its waits."""

    def _retry_after(self, exc: BaseException) -> float | None:
        """Seconds the server asked to wait (``Retry-After``), from the SDK's exception: its
        HTTP response's headers, or headers it carries itself. Providers whose SDK keeps
        them elsewhere override this."""
        from zerda.llm._retry import retry_after_from_headers

        for holder in (getattr(exc, "response", None), exc):
            after = retry_after_from_headers(getattr(holder, "headers", None))
            if after is not None:
                return after
        return None

    def _retry_delay(self, exc: BaseException, attempt: int, waited: float) -> float | None:
        """Seconds to wait before retry ``attempt`` (from 0) after ``exc``, having waited
        ``waited`` already; None: do not retry. :func:`zerda.llm.errors.retry_delay`
        decides, on the error ``exc`` maps to, for every provider."""
        if attempt >= self.max_retries:
            return None
        error = self._to_error(exc)
        budget = _RETRY_BUDGET.get(self.timeout)
        return retry_delay(error, attempt, self._retry_after(exc), waited=waited, budget=budget)

    def _retrying(self, send: Callable[[], T]) -> T:
        """``send()``, retried per ``_retry_delay`` up to ``max_retries`` times. Every
        provider's calls go through here, so one policy holds everywhere."""
        attempt, waited = 0, 0.0
        while True:
            try:
                return send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, waited)
                if delay is None:
                    raise
            _home()._sleep(delay)
            waited += delay
            attempt += 1

    async def _retrying_async(self, send: Callable[[], Awaitable[T]]) -> T:
        """As :meth:`_retrying`; only the wait is awaited."""
        attempt, waited = 0, 0.0
        while True:
            try:
                return await send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, waited)
                if delay is None:
                    raise
            await _home()._sleep_async(delay)
            waited += delay
            attempt += 1


def _home() -> ModuleType:
    """``zerda.llm.base``, where the waits live (imported by then: it imports this)."""
    from zerda.llm import base

    return base
