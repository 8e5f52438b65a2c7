"""Rate limits (docs/scale.md, "Rate limits"): each request waits for the process's limiter
of its account, which the usage and the rate-limit headers the provider reports correct."""

from __future__ import annotations

from typing import Any

from zerda.llm import _ratelimit
from zerda.llm._ratelimit import RateLimiter
from zerda.llm.interface._host import Host


class Limits(Host):
    """Admitting a request under ``rate_limit``, and settling it with what it used."""

    @property
    def _limiter(self) -> RateLimiter | None:
        """The process's limiter for this account and limits; None without ``rate_limit``."""
        if self.rate_limit is None:
            return None
        if self._rate_limiter is None:
            self._rate_limiter = _ratelimit.shared_limiter(
                self.rate_limit, self.provider, self.base_url, self.api_key
            )
        return self._rate_limiter

    def _admit(self, native: dict[str, Any]) -> int:
        """Waits until the limiter lets this request go; returns the tokens reserved."""
        limiter = self._limiter
        if limiter is None:
            return 0
        tokens = _ratelimit.estimate_tokens(native)
        limiter.wait(tokens)
        return tokens

    async def _admit_async(self, native: dict[str, Any]) -> int:
        limiter = self._limiter
        if limiter is None:
            return 0
        tokens = _ratelimit.estimate_tokens(native)
        await limiter.wait_async(tokens)
        return tokens

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
