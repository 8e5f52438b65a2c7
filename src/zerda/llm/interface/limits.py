"""Rate limits (docs/scale.md, "Rate limits"): every attempt of a request — the first, and
each retry — waits for the process's limiter of its account, which the usage and the
rate-limit headers the provider reports correct.

``_admit`` reserves the first attempt (before ``_call``) and notes what it reserved in this
context (thread or task); the call's ``_retrying`` takes that note and reserves it again
before each retry (``retrying.readmit``), so a retry is never sent past the limits. The
SDKs' own retries are off on every row (``interface/clients.py``): every attempt is Zerda's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zerda.llm import _ratelimit
from zerda.llm._ratelimit import RateLimiter
from zerda.llm.interface._host import Host
from zerda.llm.interface.retrying import _ADMISSION, _RETRY_BUDGET, Admission

if TYPE_CHECKING:
    from zerda.llm._request import Request


class Limits(Host):
    """Admitting a request under ``rate_limit``, and settling it with what it used."""

    @property
    def _limiter(self) -> RateLimiter | None:
        """The process's limiter for this account and limits; None without ``rate_limit``."""
        if self.rate_limit is None:
            return None
        if self._rate_limiter is None:
            self._rate_limiter = _ratelimit.shared_limiter(
                self.rate_limit, self.provider, self.base_url, self.api_key, self._limit_scope()
            )
        return self._rate_limiter

    def _limit_scope(self) -> tuple[str, ...]:
        """What tells this interface's account apart besides its base URL and API key. A
        wire whose account is no API key overrides it: an AWS region and credentials, a
        Google Cloud project and location (never a secret: a digest of one at most)."""
        return ()

    def _admit(self, native: dict[str, Any], req: Request | None = None) -> int:
        """Waits until the limiter lets this request go; returns the tokens reserved. A
        provider's reset further away than the call's timeout (or 60 s) raises
        RateLimitError, nothing sent."""
        _ADMISSION.set(None)
        limiter = self._limiter
        if limiter is None:
            return 0
        tokens = _ratelimit.estimate_tokens(native, req)
        limiter.wait(tokens, max_wait=self._wait_budget())
        _ADMISSION.set(Admission(limiter, tokens))
        return tokens

    async def _admit_async(self, native: dict[str, Any], req: Request | None = None) -> int:
        _ADMISSION.set(None)
        limiter = self._limiter
        if limiter is None:
            return 0
        tokens = _ratelimit.estimate_tokens(native, req)
        await limiter.wait_async(tokens, max_wait=self._wait_budget())
        _ADMISSION.set(Admission(limiter, tokens))
        return tokens

    def _wait_budget(self) -> float | None:
        """The call's timeout (its own, else the interface's): no provider's reset is
        waited for past it."""
        return _RETRY_BUDGET.get(self.timeout)

    def _settle(self, reserved: int, result: dict[str, Any]) -> None:
        """Corrects the token reservation with the usage the provider reported."""
        limiter = self._limiter
        usage = result.get("usage")
        if limiter is None or not isinstance(usage, dict):
            return
        used = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
        limiter.settle(reserved, used)

    def _with_rate_headers(self, kwargs: dict[str, Any], *, is_async: bool) -> dict[str, Any]:
        """Stainless client arguments (openai, groq, anthropic) with an HTTP client whose
        response hook hands the provider's rate-limit headers to the limiter; unchanged
        without a limiter, for an SDK without ``DefaultHttpxClient`` or when the caller
        gave an ``http_client``."""
        limiter = self._limiter
        factory = getattr(
            self.sdk, "DefaultAsyncHttpxClient" if is_async else "DefaultHttpxClient", None
        )
        if limiter is None or factory is None or kwargs.get("http_client") is not None:
            return kwargs
        hook = limiter.observe_response_async if is_async else limiter.observe_response
        return {**kwargs, "http_client": factory(event_hooks={"response": [hook]})}
