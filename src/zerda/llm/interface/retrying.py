"""Retries: one policy for every provider (the SDKs' own retries are off).

Every SDK call goes through :meth:`Retrying._retrying` (or its async twin): a failure is
mapped to the error shape and :func:`zerda.llm.errors.retry_delay` decides whether to wait
and try again, within the call's timeout (``_RETRY_BUDGET``). Each retry of a call admitted
under a rate limit waits for its turn again (:func:`readmit`, docs/scale.md "Rate limits"):
a retry is an attempt like the first, within the same limits.

The waits are ``zerda.llm.base._sleep`` / ``_sleep_async``, looked up there at each wait,
so that a test may replace them to record the waits instead of sleeping.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import NamedTuple, TypeVar

from zerda.llm._ratelimit import RateLimiter
from zerda.llm.errors import RateLimitError, retry_delay
from zerda.llm.interface._host import Host

T = TypeVar("T")

# The caller's timeout for the call being made in this context (thread or task): the waits
# between its retries never add up past it. Set for each call by _checked_request.
_RETRY_BUDGET: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "zerda_retry_budget", default=None
)


class Admission(NamedTuple):
    """What a call reserved under its limiter (``Limits._admit``): each retry of it
    reserves as much again."""

    limiter: RateLimiter
    tokens: int


# The admission of the call being made in this context, until its _retrying takes it.
_ADMISSION: contextvars.ContextVar[Admission | None] = contextvars.ContextVar(
    "zerda_admission", default=None
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
        """``send()``, retried per ``_retry_delay`` up to ``max_retries`` times, each retry
        admitted by the rate limiter like the first attempt. Every provider's calls go
        through here, so one policy holds everywhere."""
        admission = take_admission()
        attempt, waited = 0, 0.0
        while True:
            try:
                return send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, waited)
                if delay is None:
                    raise
                failure = exc
            _home()._sleep(delay)
            # Its turn under the rate limit (a queue, not a retry wait: not counted).
            if not readmit(admission, self._budget_left(waited + delay)):
                raise failure  # the provider's limit resets past the call's timeout
            waited += delay
            attempt += 1

    async def _retrying_async(self, send: Callable[[], Awaitable[T]]) -> T:
        """As :meth:`_retrying`; only the waits are awaited."""
        admission = take_admission()
        attempt, waited = 0, 0.0
        while True:
            try:
                return await send()
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, waited)
                if delay is None:
                    raise
                failure = exc
            await _home()._sleep_async(delay)
            if not await readmit_async(admission, self._budget_left(waited + delay)):
                raise failure
            waited += delay
            attempt += 1

    def _budget_left(self, waited: float) -> float | None:
        """Seconds the call's timeout still leaves for waiting, having waited ``waited``."""
        budget = _RETRY_BUDGET.get(self.timeout)
        return None if budget is None else max(0.0, budget - waited)


def take_admission() -> Admission | None:
    """The admission ``_admit`` noted for the call now being sent, taken once: a later
    ``_retrying`` in this context (a batch poll) is no attempt of that call."""
    admission = _ADMISSION.get()
    if admission is not None:
        _ADMISSION.set(None)
    return admission


def readmit(admission: Admission | None, max_wait: float | None) -> bool:
    """Reserves a retry of an admitted call and sleeps until its turn; False when the
    provider's headers say its limit resets past ``max_wait`` (the time the call's timeout
    leaves) or 60 s away: then the retry is not made."""
    if admission is None:
        return True
    try:
        admission.limiter.wait(admission.tokens, max_wait=max_wait)
    except RateLimitError:
        return False
    return True


async def readmit_async(admission: Admission | None, max_wait: float | None) -> bool:
    if admission is None:
        return True
    try:
        await admission.limiter.wait_async(admission.tokens, max_wait=max_wait)
    except RateLimitError:
        return False
    return True


def _home() -> ModuleType:
    """``zerda.llm.base``, where the waits live (imported by then: it imports this)."""
    from zerda.llm import base

    return base
