"""Client-side rate limiting: requests and tokens per minute (docs/scale.md, "Rate limits").

``rate_limit={"rpm": 600, "tpm": 100_000}`` on an interface gives it a :class:`RateLimiter`
shared by every interface of the process with the same provider, account and limits (base
URL and API key; an AWS region and credentials, a Google Cloud project and location) — the
threads of a sync pool, the tasks of an event loop and the copies a worker unpickles all
draw from one limiter. A ``RateLimiter`` passed as ``rate_limit=`` is shared by the
interfaces given it.

Each limit is a sliding window: no 60 seconds hold more than ``rpm`` requests (or ``tpm``
tokens), the first minute included. Every attempt of a call — each retry too — *reserves*
before it is sent (a request, and its estimated tokens: :mod:`zerda.llm._estimate`, plus the
output budget it asks for), at the earliest moment the windows allow, and first come, first
served; the estimate is corrected with the usage the provider reports. Reserving never
blocks under the lock: the wait is slept (or awaited) by the caller, so sync threads and
async tasks share the limiter alike.

The provider's rate-limit headers are honoured where the SDK's HTTP client lets Zerda read
them (OpenAI, Groq: ``x-ratelimit-remaining-requests`` / ``-tokens`` and
``x-ratelimit-reset-requests`` / ``-tokens`` as durations such as ``6m0s``; Anthropic:
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}``
with RFC 3339 reset times): what the server says is left caps the calls until its reset.
A call never waits for such a reset longer than :data:`MAX_SERVER_WAIT` (the cap
Retry-After has, zerda.llm.errors.MAX_RETRY_AFTER) nor past its timeout: it fails at once
with a retryable ``rate_limit`` error instead, with nothing reserved. Its turn under its own
``rpm`` / ``tpm`` is waited for however long the queue (the pace the caller asked for).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from zerda.llm._estimate import estimate_input_tokens
from zerda.llm.errors import MAX_RETRY_AFTER, RateLimitError

if TYPE_CHECKING:
    from zerda.llm._request import Request

__all__ = ["RateLimiter", "shared_limiter"]

_KINDS = ("requests", "tokens")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}

WINDOW = 60.0
# A reservation leaves the window this long after its minute, so that a send booked at the
# exact end of one never lands inside it through a clock's rounding.
_SLACK = 1e-6
# The longest wait for a reset the provider's headers announce (the cap on Retry-After).
MAX_SERVER_WAIT = MAX_RETRY_AFTER


class _Window:
    """The reservations of one limit (requests or tokens) that the last minute holds, in
    the order of their send times: ``[time, amount, settled]``."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.entries: deque[list[Any]] = deque()
        self.total = 0.0

    def expire(self, now: float) -> None:
        """Forgets what no window from ``now`` on holds any more."""
        while self.entries and self.entries[0][0] + WINDOW + _SLACK <= now:
            self.total -= self.entries.popleft()[1]

    def earliest(self, amount: float, start: float) -> float:
        """The first moment from ``start`` (no earlier than every reservation held) at
        which ``amount`` more keeps the last 60 s within the limit. An amount over the
        limit goes once the window is otherwise empty."""
        need = self.total + amount - self.limit
        if need <= 1e-9:
            return start
        freed = 0.0
        for moment, held, _ in self.entries:
            freed += held
            if freed >= need - 1e-9:
                return max(start, moment + WINDOW + _SLACK)
        return max(start, self.entries[-1][0] + WINDOW + _SLACK) if self.entries else start

    def book(self, amount: float, moment: float) -> None:
        self.entries.append([moment, amount, False])
        self.total += amount

    def settle(self, estimated: float, used: float) -> None:
        """The newest unsettled reservation of ``estimated`` now holds ``used``."""
        for entry in reversed(self.entries):
            if not entry[2] and entry[1] == estimated:
                entry[1], entry[2] = used, True
                self.total += used - estimated
                return


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
        self._windows = {
            kind: _Window(limit) for kind, limit in zip(_KINDS, (rpm, tpm), strict=True) if limit
        }
        self._last = clock()  # the latest send time booked: first come, first served
        # What the server last said is left, and when that count resets (monotonic).
        self._server: dict[str, tuple[float, float]] = {}

    def __repr__(self) -> str:
        return f"RateLimiter(rpm={self.rpm!r}, tpm={self.tpm!r})"

    def __reduce__(self) -> Any:
        # A lock cannot travel: a worker gets a limiter with the same limits, shared there.
        return (type(self), (self.rpm, self.tpm))

    # --- reserving -------------------------------------------------------------------------

    def reserve(self, tokens: int, *, max_wait: float | None = None) -> float:
        """Reserves one request and ``tokens``; returns the seconds to wait before sending.

        Raises :class:`~zerda.llm.errors.RateLimitError` (retryable), reserving nothing,
        when the provider's headers say nothing is left until a reset further away than
        :data:`MAX_SERVER_WAIT` or ``max_wait`` (the call's timeout). The turn under this
        limiter's own limits is never refused: the caller asked for that pace."""
        with self._lock:
            now = self.clock()
            amounts = dict(zip(_KINDS, (1, tokens), strict=True))
            start = max(now, self._last)
            for window in self._windows.values():
                window.expire(start)
            moment = max(
                [start, *(w.earliest(amounts[k], start) for k, w in self._windows.items())]
            )
            kind, server_wait = self._server_wait(amounts, now)
            _refuse_past(kind, server_wait, max_wait)
            moment = max(moment, now + server_wait)
            for name, window in self._windows.items():
                window.book(amounts[name], moment)
            self._take_server(amounts)
            self._last = moment
            return moment - now

    def _server_wait(self, amounts: dict[str, int], now: float) -> tuple[str, float]:
        """(kind, seconds) of the longest wait the provider's counts impose on ``amounts``."""
        worst = ("", 0.0)
        for kind, amount in amounts.items():
            cap = self._server.get(kind)
            if cap is None:
                continue
            remaining, reset_at = cap
            if now >= reset_at:
                del self._server[kind]
            elif remaining - amount < 0 and reset_at - now > worst[1]:
                worst = (kind, reset_at - now)
        return worst

    def _take_server(self, amounts: dict[str, int]) -> None:
        for kind, amount in amounts.items():
            cap = self._server.get(kind)
            if cap is not None:
                self._server[kind] = (cap[0] - amount, cap[1])

    def settle(self, estimated: int, used: int | None) -> None:
        """Corrects a reservation of ``estimated`` tokens with the tokens the provider
        reported using (the newest such reservation not corrected yet)."""
        if used is None:
            return
        with self._lock:
            window = self._windows.get("tokens")
            if window is not None:
                window.settle(estimated, used)

    def wait(self, tokens: int, *, max_wait: float | None = None) -> float:
        """Reserves (see :meth:`reserve`) and sleeps until the reservation's turn; returns
        the seconds slept."""
        delay = self.reserve(tokens, max_wait=max_wait)
        if delay > 0:
            self.sleep(delay)
        return delay

    async def wait_async(self, tokens: int, *, max_wait: float | None = None) -> float:
        delay = self.reserve(tokens, max_wait=max_wait)
        if delay <= 0:
            return delay
        if self.async_sleep is not None:
            await self.async_sleep(delay)
            return delay
        import asyncio  # loaded: this runs on an event loop

        await asyncio.sleep(delay)
        return delay

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


def _refuse_past(kind: str, server_wait: float, max_wait: float | None) -> None:
    """Raises RateLimitError when the provider's reset is further away than a call waits:
    :data:`MAX_SERVER_WAIT`, or its timeout ``max_wait``."""
    cap = MAX_SERVER_WAIT if max_wait is None else min(MAX_SERVER_WAIT, max_wait)
    if server_wait <= cap:
        return
    limit = (
        f"the call's timeout of {max_wait:g} s"
        if cap == max_wait
        else f"the {MAX_SERVER_WAIT:g} s Zerda waits at most for a provider's limit"
    )
    raise RateLimitError(
        f"the provider's rate-limit headers say no {kind} are left until their reset "
        f"in {server_wait:.0f} s, past {limit}: not sent"
    )


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


def account_digest(*parts: str | None) -> str:
    """A digest telling accounts apart by what identifies them (an access key id, a
    profile name...), for a wire's limiter scope: nothing given to it is kept."""
    if not any(parts):
        return ""
    return _fingerprint("\0".join(part or "" for part in parts))


def shared_limiter(
    setting: Mapping[str, Any] | RateLimiter,
    provider: str,
    base_url: str | None,
    api_key: str | None,
    scope: tuple[str, ...] = (),
) -> RateLimiter:
    """The process's limiter for this account and these limits (``setting`` from
    ``rate_limit=``); a RateLimiter given is used as is. ``scope`` tells apart the accounts
    an API key does not (an AWS region and credentials, a Google Cloud project and
    location); it never holds a secret, only a digest of one."""
    if isinstance(setting, RateLimiter):
        return setting
    rpm, tpm = setting.get("rpm"), setting.get("tpm")
    key = (provider, base_url, _fingerprint(api_key), scope, rpm, tpm)
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


def estimate_tokens(native: Mapping[str, Any], req: Request | None = None) -> int:
    """Tokens a request may use before its usage is known: its input as the providers
    count it (:func:`zerda.llm._estimate.estimate_input_tokens` on the unified request
    ``req``: text at about four characters a token, media by their size, never by their
    base64 or the bytes a native body holds), plus the output budget it asks for. Without
    ``req``, the native body's size as text."""
    if req is None:
        return estimate_input_tokens([native]) + _max_output(native)
    estimate = estimate_input_tokens(req.messages, tools=req.tools, system=req.system)
    return estimate + max(_max_output(native), req.max_tokens or 0)


def _max_output(native: Mapping[str, Any]) -> int:
    for name in ("max_tokens", "max_completion_tokens", "num_predict"):
        value = native.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0
