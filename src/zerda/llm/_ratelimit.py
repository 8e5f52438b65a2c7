"""Client-side rate limiting: requests and tokens per minute (docs/scale.md, "Rate limits").

``rate_limit={"rpm": 600, "tpm": 100_000}`` on an interface gives it a :class:`RateLimiter`
shared by every interface of the process with the same provider, base URL, API key and
limits — the threads of a sync pool, the tasks of an event loop and the copies a worker
unpickles all draw from one pair of buckets. A ``RateLimiter`` passed as ``rate_limit=`` is
shared by the interfaces given it.

Each bucket holds one minute of its limit and refills continuously. A call *reserves* before
it is sent (a request, and its estimated tokens: the native request's size at about four
characters a token), waits until the reservation is covered, and is corrected with the usage
the provider reports. Reserving never blocks under the lock: the wait is slept (or awaited)
by the caller, so sync threads and async tasks share the limiter alike.

The provider's rate-limit headers are honoured where the SDK's HTTP client lets Zerda read
them (OpenAI, Groq: ``x-ratelimit-remaining-requests`` / ``-tokens`` and
``x-ratelimit-reset-requests`` / ``-tokens`` as durations such as ``6m0s``; Anthropic:
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}``
with RFC 3339 reset times): what the server says is left caps the calls until its reset.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["RateLimiter", "shared_limiter"]

_KINDS = ("requests", "tokens")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


class _Bucket:
    """``per_minute`` units, refilled continuously; the level may go negative (reserved
    ahead), and the deficit says how long the last reservation waits."""

    def __init__(self, per_minute: float, now: float) -> None:
        self.capacity = per_minute
        self.rate = per_minute / 60.0
        self.level = per_minute
        self.updated = now

    def take(self, amount: float, now: float) -> float:
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now
        self.level -= amount
        return -self.level / self.rate if self.level < 0 else 0.0

    def give_back(self, amount: float) -> None:
        self.level = min(self.capacity, self.level + amount)


class RateLimiter:
    """Requests (``rpm``) and tokens (``tpm``) per minute, either or both; with neither, it
    only honours the provider's headers. ``clock`` (monotonic seconds), ``wall`` (Unix time,
    for reset timestamps), ``sleep`` and ``async_sleep`` are injectable for tests."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
            ):
                raise ValueError(f"rate_limit: {name} must be a positive number, not {value!r}")
        self.rpm, self.tpm = rpm, tpm
        self.clock, self.wall, self.sleep = clock, wall, sleep
        self.async_sleep = async_sleep
        self._lock = threading.Lock()
        now = clock()
        self._buckets = {
            kind: _Bucket(limit, now)
            for kind, limit in zip(_KINDS, (rpm, tpm), strict=True)
            if limit
        }
        # What the server last said is left, and when that count resets (monotonic).
        self._server: dict[str, tuple[float, float]] = {}

    def __repr__(self) -> str:
        return f"RateLimiter(rpm={self.rpm!r}, tpm={self.tpm!r})"

    def __reduce__(self) -> Any:
        # A lock cannot travel: a worker gets a limiter with the same limits, shared there.
        return (type(self), (self.rpm, self.tpm))

    # --- reserving -------------------------------------------------------------------------

    def reserve(self, tokens: int) -> float:
        """Reserves one request and ``tokens``; returns the seconds to wait before sending."""
        with self._lock:
            now = self.clock()
            wait = 0.0
            for kind, amount in zip(_KINDS, (1, tokens), strict=True):
                bucket = self._buckets.get(kind)
                if bucket is not None:
                    wait = max(wait, bucket.take(amount, now))
                wait = max(wait, self._server_wait(kind, amount, now))
            return wait

    def _server_wait(self, kind: str, amount: float, now: float) -> float:
        cap = self._server.get(kind)
        if cap is None:
            return 0.0
        remaining, reset_at = cap
        if now >= reset_at:
            del self._server[kind]
            return 0.0
        self._server[kind] = (remaining - amount, reset_at)
        return reset_at - now if remaining - amount < 0 else 0.0

    def settle(self, estimated: int, used: int | None) -> None:
        """Corrects a reservation with the tokens the provider reported using."""
        if used is None:
            return
        with self._lock:
            bucket = self._buckets.get("tokens")
            if bucket is not None:
                bucket.give_back(estimated - used)

    def wait(self, tokens: int) -> None:
        delay = self.reserve(tokens)
        if delay > 0:
            self.sleep(delay)

    async def wait_async(self, tokens: int) -> None:
        delay = self.reserve(tokens)
        if delay <= 0:
            return
        if self.async_sleep is not None:
            await self.async_sleep(delay)
            return
        import asyncio  # loaded: this runs on an event loop

        await asyncio.sleep(delay)

    # --- the provider's headers ------------------------------------------------------------

    def observe(self, headers: Mapping[str, str]) -> None:
        """Caps the next calls by what the server says is left, until its reset."""
        found = _from_headers(headers, self.wall())
        if not found:
            return
        with self._lock:
            now = self.clock()
            for kind, (remaining, reset_in) in found.items():
                self._server[kind] = (remaining, now + reset_in)

    def observe_response(self, response: Any) -> None:
        """An httpx response event hook."""
        self.observe(response.headers)

    async def observe_response_async(self, response: Any) -> None:
        self.observe(response.headers)


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()}


def parse_duration(text: str) -> float | None:
    """OpenAI's reset durations: ``1s``, ``6m0s``, ``20ms``, ``2m59.56s``, ``1h2m``."""
    text = text.strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        try:
            return float(text)
        except ValueError:
            return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def _seconds_until(timestamp: str, wall_now: float) -> float | None:
    try:
        moment = datetime.fromisoformat(timestamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, moment.timestamp() - wall_now)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _from_headers(headers: Mapping[str, str], wall_now: float) -> dict[str, tuple[float, float]]:
    """kind -> (remaining, seconds until reset), from either header family; an incomplete
    or unreadable pair is ignored (never a crash on what a provider sends)."""
    h = _lower(headers)
    found: dict[str, tuple[float, float]] = {}
    for kind in _KINDS:
        remaining = _number(h.get(f"x-ratelimit-remaining-{kind}"))
        reset = h.get(f"x-ratelimit-reset-{kind}")
        reset_in = parse_duration(reset) if reset is not None else None
        if remaining is not None and reset_in is not None:
            found[kind] = (remaining, reset_in)
    # Anthropic: tokens is the tightest of tokens, input-tokens and output-tokens.
    names = {"requests": ("requests",), "tokens": ("tokens", "input-tokens", "output-tokens")}
    for kind, families in names.items():
        for family in families:
            remaining = _number(h.get(f"anthropic-ratelimit-{family}-remaining"))
            reset = h.get(f"anthropic-ratelimit-{family}-reset")
            reset_in = _seconds_until(reset, wall_now) if reset is not None else None
            if remaining is None or reset_in is None:
                continue
            if kind not in found or remaining < found[kind][0]:
                found[kind] = (remaining, reset_in)
    return found


# --- one limiter per provider account and limits, per process ----------------------------

_SHARED: dict[tuple[Any, ...], RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def _fingerprint(api_key: str | None) -> str:
    # The key itself is never kept here: only enough of its digest to tell accounts apart.
    return hashlib.sha256(api_key.encode()).hexdigest()[:16] if api_key else ""


def shared_limiter(
    setting: Mapping[str, Any] | RateLimiter,
    provider: str,
    base_url: str | None,
    api_key: str | None,
) -> RateLimiter:
    """The process's limiter for this account and these limits (``setting`` from
    ``rate_limit=``); a RateLimiter given is used as is."""
    if isinstance(setting, RateLimiter):
        return setting
    rpm, tpm = setting.get("rpm"), setting.get("tpm")
    key = (provider, base_url, _fingerprint(api_key), rpm, tpm)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = RateLimiter(rpm, tpm)
        return _SHARED[key]


def check_setting(setting: Any) -> None:
    """``rate_limit=`` is None, a RateLimiter or a dict of rpm/tpm: refused at construction."""
    if setting is None or isinstance(setting, RateLimiter):
        return
    if not isinstance(setting, Mapping):
        raise TypeError(
            "rate_limit must be a dict such as {'rpm': 600, 'tpm': 100000} or a RateLimiter, "
            f"not {type(setting).__name__}"
        )
    unknown = sorted(set(setting) - {"rpm", "tpm"})
    if unknown:
        raise ValueError(
            f"rate_limit: unknown key(s) {', '.join(map(repr, unknown))} (valid: 'rpm', 'tpm')"
        )
    RateLimiter(setting.get("rpm"), setting.get("tpm"))  # checks the numbers


def estimate_tokens(native: Mapping[str, Any]) -> int:
    """Tokens a request may use before its usage is known: its size at about four
    characters a token, plus the output budget it asks for when it names one."""
    size = len(json.dumps(native, default=str, ensure_ascii=False))
    return size // 4 + _max_output(native)


def _max_output(native: Mapping[str, Any]) -> int:
    for name in ("max_tokens", "max_completion_tokens", "num_predict"):
        value = native.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0
