"""The client-side rate limiter under adversarial conditions (issue 34, items 5, 6, 16, 17 and
the limiter-keying risk):

- a provider's rate-limit headers announcing a reset hours away never make a call wait past
  its timeout or the 60 s cap Retry-After has: it fails with a retryable ``rate_limit``;
- media count as the providers count them, not as the characters of their base64;
- every attempt of a call, each retry too, passes through the limiter;
- no 60 s window holds more than ``rpm`` requests (or ``tpm`` tokens), the first included;
- Bedrock and Vertex interfaces without a base URL share a limiter only within one region
  and account / project and location.

Nothing here sleeps: the limiter runs on a fake clock whose sleep records the waits, and
``zerda.llm.base._sleep`` records the waits between retries.
"""

from __future__ import annotations

import asyncio
import base64
import random
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.test_ratelimit import FakeClock as BaseClock
from tests.reliability._support import PROVIDERS, make_llm
from zerda.llm import RateLimiter, base, create_interface
from zerda.llm._estimate import estimate_input_tokens
from zerda.llm.errors import RateLimitError
from zerda.testing import MockLLMServer

# --- a fake clock -------------------------------------------------------------------------


class CountingLimiter(RateLimiter):
    """A RateLimiter that counts the reservations it granted."""

    granted = 0

    def reserve(self, tokens: int, **options: Any) -> float:
        wait = super().reserve(tokens, **options)
        self.granted += 1
        return wait


class FakeClock(BaseClock):
    """The limiter tests' fake clock, building :class:`CountingLimiter`s."""

    limiter_class = CountingLimiter

    def __init__(self) -> None:
        super().__init__(now=5000.0)

    def limiter(self, rpm: float | None = None, tpm: float | None = None) -> CountingLimiter:
        limiter = super().limiter(rpm, tpm)
        assert isinstance(limiter, CountingLimiter)
        return limiter


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries, recorded instead of slept."""
    recorded: list[float] = []

    async def record_async(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(base, "_sleep", recorded.append)
    monkeypatch.setattr(base, "_sleep_async", record_async)
    return recorded


@pytest.fixture
def llm_on(server: MockLLMServer) -> Iterator[Any]:
    """Interfaces built for one test (each with its own limiter), closed afterwards."""
    made: list[Any] = []

    def build(provider: str, **options: Any) -> Any:
        made.append(make_llm(server, provider, **options))
        return made[-1]

    yield build
    for llm in made:
        llm.close()


def _openai_body() -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


def _anthropic_body() -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 7, "output_tokens": 3},
    }


# --- item 5: a reset hours away is never waited for ----------------------------------------


def test_a_reset_hours_away_fails_at_once_with_nothing_reserved(clock: FakeClock) -> None:
    limiter = clock.limiter(rpm=600)
    limiter.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2h0m0s"})

    with pytest.raises(RateLimitError) as caught:
        limiter.wait(10)

    assert caught.value.retryable is True
    assert "7200 s" in caught.value.message and "not sent" in caught.value.message
    assert clock.slept == [] and limiter.granted == 0
    clock.now += 7200.0  # once the server's count has reset, calls go again at once
    assert limiter.reserve(10) == 0.0


@pytest.mark.parametrize(
    ("reset_in", "timeout", "outcome"),
    [
        (60.0, None, 60.0),  # the cap itself is waited
        (61.0, None, "refused"),  # past the 60 s cap of Retry-After
        (45.0, 30.0, "refused"),  # past the call's timeout
        (20.0, 30.0, 20.0),
    ],
)
def test_a_server_reset_is_waited_only_within_the_cap_and_the_timeout(
    clock: FakeClock, reset_in: float, timeout: float | None, outcome: Any
) -> None:
    limiter = clock.limiter()
    limiter.observe(
        {"x-ratelimit-remaining-tokens": "5", "x-ratelimit-reset-tokens": f"{reset_in}s"}
    )
    if outcome == "refused":
        with pytest.raises(RateLimitError, match="rate-limit headers say no tokens are left"):
            limiter.reserve(10, max_wait=timeout)
    else:
        assert limiter.reserve(10, max_wait=timeout) == pytest.approx(outcome)


def test_the_own_limits_are_a_queue_whatever_the_timeout(clock: FakeClock) -> None:
    # The pace the caller asked for: a call waits its turn (only a provider's far reset
    # is refused).
    limiter = clock.limiter(rpm=1)
    assert limiter.reserve(0, max_wait=5.0) == 0.0
    assert limiter.reserve(0, max_wait=5.0) == pytest.approx(60.0)


@pytest.mark.parametrize("provider", ["openai", "groq"])
def test_openai_headers_with_a_two_hour_reset_fail_the_next_call(
    server: MockLLMServer, llm_on: Any, clock: FakeClock, provider: str
) -> None:
    headers = {
        "content-type": "application/json",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "2h0m0s",
    }
    server.enqueue_raw(200, _openai_body(), headers, provider=provider)
    server.set_default(provider, text="too early")
    llm = llm_on(provider, rate_limit=clock.limiter(), timeout=None)

    assert llm.generate("hi")["content"] == "ok"
    result = llm.generate("hi")

    assert result["error"]["type"] == "rate_limit"
    assert result["error"]["retryable"] is True
    assert result["error"]["provider"] == provider
    assert clock.slept == []
    assert len(server.requests_for(provider)) == 1  # nothing sent
    with pytest.raises(RateLimitError):
        llm.generate("hi", raise_errors=True)
    events = list(llm.stream("hi"))
    assert events[-1]["result"]["error"]["type"] == "rate_limit"
    assert clock.slept == [] and len(server.requests_for(provider)) == 1


def test_a_far_anthropic_reset_fails_the_next_call_async(
    server: MockLLMServer, llm_on: Any, clock: FakeClock
) -> None:
    headers = {
        "content-type": "application/json",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2027-01-15T11:00:00Z",  # three hours away
    }
    server.enqueue_raw(200, _anthropic_body(), headers, provider="anthropic")
    server.set_default("anthropic", text="too early")
    llm = llm_on("anthropic", rate_limit=clock.limiter(), timeout=None)

    async def main() -> list[dict[str, Any]]:
        first = await llm.generate_async("hi")
        second = await llm.generate_async("hi")
        events = [e async for e in llm.stream_async("hi")]
        return [first, second, events[-1]["result"]]

    first, second, streamed = asyncio.run(main())

    assert first["content"] == "ok"
    assert second["error"]["type"] == streamed["error"]["type"] == "rate_limit"
    assert clock.slept == [] and len(server.requests_for("anthropic")) == 1


def test_a_near_reset_past_the_calls_timeout_is_not_waited(
    server: MockLLMServer, llm_on: Any, clock: FakeClock
) -> None:
    headers = {
        "content-type": "application/json",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "45s",
    }
    server.enqueue_raw(200, _openai_body(), headers, provider="openai")
    server.set_default("openai", text="after the reset")
    llm = llm_on("openai", rate_limit=clock.limiter(), timeout=None)
    llm.generate("hi")

    assert llm.generate("hi", timeout=10)["error"]["type"] == "rate_limit"
    assert clock.slept == []
    assert llm.generate("hi")["content"] == "after the reset"  # no timeout: 45 s is waited
    assert clock.slept == [pytest.approx(45.0)]


# --- item 6: media counted as the providers count them -------------------------------------


def _png(width: int, height: int, size: int = 0) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0\0\0\0"
    return head + bytes(max(0, size - len(head)))


def _jpeg(width: int, height: int, exif: int = 0) -> bytes:
    app1 = b"\xff\xe1" + struct.pack(">H", exif + 2) + b"E" * exif if exif else b""
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, height, width) + bytes(10)
    app0 = b"\xff\xe0\x00\x10JFIF\x00" + bytes(9)
    return b"\xff\xd8" + app0 + app1 + sof + b"\xff\xda" + bytes(64)


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + bytes(20)


def _webp(kind: bytes, width: int, height: int) -> bytes:
    if kind == b"VP8X":
        body = bytes(4) + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    elif kind == b"VP8L":
        body = b"\x2f" + ((width - 1) | (height - 1) << 14).to_bytes(4, "little")
    else:
        body = bytes(3) + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    chunk = kind + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk + bytes(16)


def _wav(seconds: float, rate: int = 16_000) -> bytes:
    byte_rate = rate * 2
    data = bytes(int(seconds * byte_rate))
    fmt = struct.pack("<HHIIHH", 1, 1, rate, byte_rate, 2, 16)
    return (
        b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE"
        + b"fmt " + struct.pack("<I", 16) + fmt
        + b"data" + struct.pack("<I", len(data)) + data
    )  # fmt: skip


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _media_tokens(part: dict[str, Any]) -> int:
    """The tokens one part adds to a user message's estimate."""
    with_part = [{"role": "user", "content": [{"type": "text", "text": "x"}, part]}]
    without = [{"role": "user", "content": [{"type": "text", "text": "x"}]}]
    return estimate_input_tokens(with_part) - estimate_input_tokens(without)


@pytest.mark.parametrize(
    ("raw", "media_type", "expected"),
    [
        # Anthropic's w*h/750 is the largest count for a 1000 px square: 1,334
        # (OpenAI 765, Gemini 4 tiles of 258 = 1,032).
        (_png(1000, 1000, 1_000_000), "image/png", 1334),
        # Resized to a 1568 px long edge and capped near 1,600 tokens (Anthropic); OpenAI
        # 765; Gemini 3x2 tiles of 258 = 1,548.
        (_jpeg(2000, 1500, exif=60_000), "image/jpeg", 1600),
        (_gif(300, 200), "image/gif", 258),  # Gemini's one small image; Anthropic 80
        (_webp(b"VP8X", 800, 600), "image/webp", 765),  # OpenAI: 4 tiles
        (_webp(b"VP8L", 512, 512), "image/webp", 350),  # Anthropic: 262144/750
        (_webp(b"VP8 ", 100, 50), "image/webp", 258),
        (_png(4000, 3000), "image/png", 24 * 258),  # Gemini: 6x4 tiles of 768 px
    ],
)
def test_an_image_counts_what_the_providers_document(
    raw: bytes, media_type: str, expected: int
) -> None:
    part = {"type": "image", "data": _b64(raw), "media_type": media_type}
    assert _media_tokens(part) == expected
    assert _media_tokens({**part, "data": raw}) == expected  # bytes are taken too


def test_a_one_megabyte_image_is_not_counted_as_its_base64() -> None:
    data = _b64(_png(2000, 1500, 1_000_000))
    messages = [
        {"role": "user", "content": [{"type": "image", "data": data, "media_type": "image/png"}]}
    ]
    assert 1_600 <= estimate_input_tokens(messages) < 1_700  # not ~340,000


def test_only_the_header_of_an_image_is_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    from zerda.llm import _estimate

    decoded: list[int] = []
    real = base64.b64decode

    def spy(text: Any, *args: Any, **kwargs: Any) -> bytes:
        decoded.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(_estimate.base64, "b64decode", spy)
    for raw in (_png(2000, 1500, 4_000_000), _jpeg(2000, 1500, exif=65_000)):
        part = {"type": "image", "data": _b64(raw), "media_type": "image/png"}
        assert _media_tokens(part) == 1600
    assert decoded and max(decoded) <= 64 and sum(decoded) < 1_000


def test_images_of_unknown_size_count_a_fixed_conservative_number() -> None:
    url = {"type": "image", "url": "https://example.com/cat.jpg"}
    file = {"type": "file", "uri": "gs://b/cat.png", "media_type": "image/png"}
    broken = {"type": "image", "data": "not base64 at all!", "media_type": "image/png"}
    svg = {"type": "image", "data": _b64(b"<svg/>"), "media_type": "image/svg+xml"}
    assert {_media_tokens(p) for p in (url, file, broken, svg)} == {1_600}


def test_audio_counts_its_seconds() -> None:
    wav = {"type": "audio", "data": _b64(_wav(10.0)), "media_type": "audio/wav"}
    mp3 = {"type": "audio", "data": _b64(b"ID3" + bytes(80_000 - 3)), "media_type": "audio/mpeg"}
    url = {"type": "file", "uri": "gs://b/talk.mp3", "media_type": "audio/mpeg"}
    assert _media_tokens(wav) == 321  # Gemini's 32 tokens a second (of 10.00 s and a header)
    assert _media_tokens(mp3) == 320  # 10 s at 64 kbit/s
    assert _media_tokens(url) == 60 * 32


def test_documents_count_by_pages_or_as_text() -> None:
    pdf = {
        "type": "document",
        "data": _b64(b"%PDF-1.7" + bytes(499_992)),
        "media_type": "application/pdf",
    }
    text = {"type": "document", "data": _b64(b"a" * 4_000), "media_type": "text/plain"}
    remote = {"type": "file", "uri": "file-abc123", "media_type": "application/pdf"}
    assert _media_tokens(pdf) == 10 * 1_500  # ~50 kB a page at Anthropic's 1,500 a page
    assert _media_tokens(text) == 1_000
    assert _media_tokens(remote) == 3_000


def test_text_tools_and_system_count_four_characters_a_token() -> None:
    tools = [{"name": "t", "description": "d" * 400, "parameters": {"type": "object"}}]
    plain = estimate_input_tokens([{"role": "user", "content": "x" * 4_000}])
    assert 1_000 <= plain <= 1_010
    assert estimate_input_tokens([], tools=tools) >= 100
    assert estimate_input_tokens([], system="s" * 800) >= 200


def test_odd_histories_are_estimated_without_crashing() -> None:
    looped: dict[str, Any] = {"role": "user", "content": "x"}
    looped["provider_data"] = looped
    deep: list[Any] = []
    level = deep
    for _ in range(5_000):
        level.append([])
        level = level[0]
    history = [
        looped,
        {"role": "tool", "tool_call_id": "c", "content": deep},
        {"role": "user", "content": [{"type": "image", "data": 10**5000}]},
    ]
    assert estimate_input_tokens(history) > 1_600


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_fresh_tpm_limiter_lets_a_call_with_a_large_image_go_at_once(
    server: MockLLMServer, llm_on: Any, clock: FakeClock, provider: str
) -> None:
    server.set_default(provider, text="a cat")
    limiter = clock.limiter(tpm=100_000)
    llm = llm_on(provider, rate_limit=limiter)
    image = {"type": "image", "data": _b64(_png(2000, 1500, 1_000_000)), "media_type": "image/png"}
    messages = [{"role": "user", "content": [{"type": "text", "text": "what is it?"}, image]}]

    assert llm.generate(messages)["content"] == "a cat"
    assert [e for e in llm.stream(messages)][-1]["result"]["content"] == "a cat"
    assert clock.slept == []


# --- item 16: every attempt passes through the limiter -------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_retry_waits_for_its_turn(
    server: MockLLMServer, llm_on: Any, clock: FakeClock, retry_waits: list[float], provider: str
) -> None:
    limiter = clock.limiter(rpm=1)
    llm = llm_on(provider, rate_limit=limiter, max_retries=2)  # timeout=5: a turn is a queue
    server.enqueue_error(500, provider, message="boom")
    server.enqueue_error(500, provider, message="boom")
    server.enqueue(provider, text="third time")

    assert llm.generate("hi")["content"] == "third time"

    assert len(server.requests_for(provider)) == 3
    assert limiter.granted == 3  # one reservation per attempt, SDK retries none
    assert len(retry_waits) == 2  # the backoff, then the limiter's turn:
    assert clock.slept == [pytest.approx(60.0), pytest.approx(60.0)]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "bedrock", "gemini"])
def test_each_retry_waits_for_its_turn_async_and_in_streams(
    server: MockLLMServer, llm_on: Any, clock: FakeClock, retry_waits: list[float], provider: str
) -> None:
    limiter = clock.limiter(rpm=1)
    llm = llm_on(provider, rate_limit=limiter, max_retries=2, timeout=None)
    server.enqueue_error(503, provider, message="busy")
    server.enqueue(provider, text="async")
    server.enqueue_error(503, provider, message="busy")
    server.enqueue(provider, text="streamed")

    async def main() -> list[Any]:
        first = await llm.generate_async("hi")
        events = [e async for e in llm.stream_async("hi")]
        return [first["content"], events[-1]["result"]["content"]]

    assert asyncio.run(main()) == ["async", "streamed"]
    assert limiter.granted == len(server.requests_for(provider)) == 4
    assert clock.slept == [pytest.approx(60.0)] * 3


_ERROR_BODIES = {
    "openai": {"error": {"message": "boom", "type": "server_error"}},
    "groq": {"error": {"message": "boom", "type": "internal_server_error"}},
    "anthropic": {"type": "error", "error": {"type": "api_error", "message": "boom"}},
}
_EXHAUSTED = {
    "openai": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "30s"},
    "groq": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "30s"},
    "anthropic": {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2027-01-15T08:00:30Z",
    },
}


@pytest.mark.parametrize("provider", ["openai", "groq", "anthropic"])
@pytest.mark.parametrize(("timeout", "retried"), [(5.0, False), (None, True)])
def test_a_retry_whose_provider_limit_resets_past_the_timeout_is_not_made(
    server: MockLLMServer,
    llm_on: Any,
    clock: FakeClock,
    retry_waits: list[float],
    provider: str,
    timeout: float | None,
    retried: bool,
) -> None:
    headers = {"content-type": "application/json", **_EXHAUSTED[provider]}
    server.enqueue_raw(500, _ERROR_BODIES[provider], headers, provider=provider)
    server.enqueue(provider, text="after the reset")
    llm = llm_on(provider, rate_limit=clock.limiter(rpm=100), max_retries=2, timeout=timeout)

    result = llm.generate("hi")

    if retried:  # the reset (30 s) is within the 60 s cap: waited, then retried
        assert result["content"] == "after the reset"
        assert clock.slept == [pytest.approx(30.0)]  # (the fake clock ignores the backoff)
    else:  # past the call's timeout: not waited, the attempt's own error
        assert (result["error"]["type"], result["error"]["status_code"]) == ("server", 500)
        assert clock.slept == []
    assert len(server.requests_for(provider)) == (2 if retried else 1)


def test_a_later_batch_call_is_no_retry_of_the_generate_before_it(
    server: MockLLMServer, llm_on: Any, clock: FakeClock, retry_waits: list[float]
) -> None:
    # What a call reserved is taken by its own retry loop: a batch submission retried
    # afterwards in the same thread does not wait for the limiter as a retry of it.
    limiter = clock.limiter(rpm=1)
    llm = llm_on("openai", rate_limit=limiter, timeout=None, max_retries=2)
    server.enqueue("openai", text="ok")
    assert llm.generate("hi")["content"] == "ok"
    server.enqueue_batch_fault("openai", status=503, message="busy")

    job = llm.batch([{"id": "a", "messages": "hi"}])

    assert job.id and len(retry_waits) == 1  # the submission was retried once
    assert clock.slept == [] and limiter.granted == 1


# --- item 17: no 60 s window holds more than the limit --------------------------------------


def _busiest_minute(sends: list[tuple[float, float]]) -> float:
    """The most any 60 s window (closed at both ends) holds of ``(time, amount)`` sends."""
    sends = sorted(sends)
    most, total, first = 0.0, 0.0, 0
    for moment, amount in sends:
        total += amount
        while sends[first][0] < moment - 60.0:
            total -= sends[first][1]
            first += 1
        most = max(most, total)
    return most


@pytest.mark.parametrize("rpm", [60, 600])
def test_no_minute_holds_more_than_rpm_requests_the_first_included(
    clock: FakeClock, rpm: int
) -> None:
    limiter = clock.limiter(rpm=rpm)
    start = clock.now
    sends = [(start + limiter.reserve(0), 1.0) for _ in range(3 * rpm)]
    assert _busiest_minute(sends) == rpm
    in_first_minute = [t for t, _ in sends if t < start + 60.0]
    assert len(in_first_minute) == rpm  # not 2 * rpm - 1


def test_callers_that_sleep_their_turn_keep_the_window(clock: FakeClock) -> None:
    limiter = clock.limiter(rpm=60)
    sends = []
    for _ in range(150):
        limiter.wait(0)
        sends.append((clock.now, 1.0))
        clock.now += 0.25  # the caller works a little between calls
    assert _busiest_minute(sends) <= 60
    assert sends[-1][0] - sends[0][0] < 3 * 60 + 30  # and the limit is still used


def test_threads_share_the_window(clock: FakeClock) -> None:
    limiter = clock.limiter(rpm=6)
    sends: list[tuple[float, float]] = []
    lock = threading.Lock()

    def task() -> None:
        wait = limiter.reserve(0)
        with lock:
            sends.append((clock.now + wait, 1.0))

    threads = [threading.Thread(target=task) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _busiest_minute(sends) == 6
    assert sorted({round(t - clock.now, 3) for t, _ in sends}) == [0.0, 60.0, 120.0, 180.0]


def test_no_minute_holds_more_than_tpm_tokens(clock: FakeClock) -> None:
    rng = random.Random(34)
    limiter = clock.limiter(tpm=10_000)
    sends = []
    for _ in range(400):
        tokens = rng.randint(1, 3_000)
        sends.append((clock.now + limiter.reserve(tokens), float(tokens)))
        clock.now += rng.random() * 2
    assert _busiest_minute(sends) <= 10_000


def test_the_reported_usage_frees_the_window(clock: FakeClock) -> None:
    limiter = clock.limiter(tpm=1_000)
    assert limiter.reserve(800) == 0.0
    limiter.settle(800, 100)  # it used far less than estimated
    assert limiter.reserve(400) == 0.0
    assert limiter.reserve(600) == pytest.approx(60.0)  # 1,100 would not fit the minute


def test_a_request_larger_than_tpm_goes_alone(clock: FakeClock) -> None:
    limiter = clock.limiter(tpm=1_000)
    assert limiter.reserve(300) == 0.0
    assert limiter.reserve(5_000) == pytest.approx(60.0)  # once the minute is empty
    assert limiter.reserve(10) == pytest.approx(120.0)


@pytest.mark.parametrize("provider", ["openai", "bedrock"])
def test_generate_calls_keep_the_window(
    server: MockLLMServer, llm_on: Any, clock: FakeClock, provider: str
) -> None:
    server.set_default(provider, text="ok")
    llm = llm_on(provider, rate_limit=clock.limiter(rpm=2), timeout=None)
    for _ in range(5):
        assert llm.generate("hi")["content"] == "ok"
    assert clock.slept == [pytest.approx(60.0), pytest.approx(60.0)]


# --- risk: the limiter's key for accounts without an API key --------------------------------

_LIMITS = {"rpm": 123, "tpm": 45_678}


def _limiter_of(provider: str, **options: Any) -> RateLimiter:
    llm = create_interface(provider, model="m", rate_limit=_LIMITS, **options)
    try:
        return llm._limiter  # type: ignore[no-any-return]
    finally:
        llm.close()


def test_bedrock_limiters_are_per_region_and_account() -> None:
    keys = {"aws_access_key_id": "AKIAEXAMPLE1", "aws_secret_access_key": "secret-one-1234"}
    east = _limiter_of("bedrock", region="us-east-1", **keys)
    assert _limiter_of("bedrock", region="us-east-1", **keys) is east
    assert _limiter_of("bedrock", region="eu-west-1", **keys) is not east
    other = {"aws_access_key_id": "AKIAEXAMPLE2", "aws_secret_access_key": "secret-two-1234"}
    assert _limiter_of("bedrock", region="us-east-1", **other) is not east


def test_claude_on_bedrock_limiters_are_per_region_and_account() -> None:
    keys = {"aws_access_key": "AKIAEXAMPLE1", "aws_secret_key": "secret-one-1234"}
    east = _limiter_of("anthropic-bedrock", aws_region="us-east-1", **keys)
    assert _limiter_of("anthropic-bedrock", region="us-east-1", **keys) is east
    assert _limiter_of("anthropic-bedrock", aws_region="us-west-2", **keys) is not east
    other = {"aws_access_key": "AKIAEXAMPLE2", "aws_secret_key": "secret-two-1234"}
    assert _limiter_of("anthropic-bedrock", aws_region="us-east-1", **other) is not east


def test_vertex_limiters_are_per_project_and_location() -> None:
    a = _limiter_of("vertex", project="p-one", location="us-central1")
    assert _limiter_of("vertex", project="p-one", location="us-central1") is a
    assert _limiter_of("vertex", project="p-one", location="europe-west4") is not a
    assert _limiter_of("vertex", project="p-two", location="us-central1") is not a


def test_claude_on_vertex_limiters_are_per_project_and_region() -> None:
    def limiter(project: str, region: str) -> RateLimiter:
        options = {"project_id": project, "region": region, "access_token": "t0k3n-abc"}
        return _limiter_of("anthropic-vertex", **options)

    a = limiter("p-one", "us-east5")
    assert limiter("p-one", "us-east5") is a
    assert limiter("p-one", "europe-west1") is not a
    assert limiter("p-two", "us-east5") is not a


def test_the_environment_names_the_account_when_no_option_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENVONE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret-1234")
    one = _limiter_of("bedrock", region="us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENVTWO")
    assert _limiter_of("bedrock", region="us-east-1") is not one
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    env = _limiter_of("vertex")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "asia-northeast1")
    assert _limiter_of("vertex") is not env


def test_no_secret_or_key_id_is_kept_in_the_limiters_key() -> None:
    from zerda.llm import _ratelimit

    _limiter_of(
        "bedrock",
        region="us-east-1",
        aws_access_key_id="AKIAKEEPOUT",
        aws_secret_access_key="very-secret-value",
        aws_session_token="very-secret-token",
    )
    _limiter_of(
        "anthropic-bedrock",
        aws_region="us-east-1",
        aws_access_key="AKIAKEEPOUT2",
        aws_secret_key="other-secret-value",
    )
    text = repr(list(_ratelimit._SHARED))
    for secret in ("AKIAKEEPOUT", "very-secret", "other-secret-value"):
        assert secret not in text
