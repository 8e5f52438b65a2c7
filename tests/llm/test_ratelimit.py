"""Client-side rate limiting (zerda.llm._ratelimit): buckets on a fake clock, the providers'
headers, sharing within a process, and interfaces on MockLLMServer. Nothing here sleeps: the
limiter's sleep records the waits it was asked for."""

from __future__ import annotations

import asyncio
import pickle
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import RateLimiter, create_interface
from zerda.llm._ratelimit import estimate_tokens, parse_duration
from zerda.testing import MockLLMServer


class FakeClock:
    """Monotonic and wall time that only the limiter's sleeps advance; ``limiter`` builds a
    limiter of ``limiter_class`` on it."""

    limiter_class: type[RateLimiter] = RateLimiter

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.wall = 1_800_000_000.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self.wall += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def limiter(self, rpm: float | None = None, tpm: float | None = None) -> RateLimiter:
        return self.limiter_class(
            rpm,
            tpm,
            clock=lambda: self.now,
            wall=lambda: self.wall,
            sleep=self.sleep,
            async_sleep=self.async_sleep,
        )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _answer(server: MockLLMServer) -> Iterator[None]:
    server.set_default(text="ok", usage={"input_tokens": 7, "output_tokens": 3})
    yield
    server.reset()


# --- buckets ----------------------------------------------------------------------------


def test_requests_per_minute_start_free_then_wait_for_the_minute(clock: FakeClock) -> None:
    # A sliding window (issue 34 item 17): no 60 s hold more than rpm, the first included.
    limiter = clock.limiter(rpm=60)
    assert [limiter.reserve(0) for _ in range(60)] == [0.0] * 60
    assert limiter.reserve(0) == pytest.approx(60.0)
    clock.now += 30.0
    assert limiter.reserve(0) == pytest.approx(30.0)  # in turn, when the first minute ends


def test_tokens_per_minute_and_the_usage_correction(clock: FakeClock) -> None:
    limiter = clock.limiter(tpm=600)
    assert limiter.reserve(500) == 0.0
    limiter.settle(500, 300)  # it used 200 fewer than reserved
    assert limiter.reserve(300) == 0.0
    assert limiter.reserve(1) == pytest.approx(60.0)  # the minute holds 600


def test_the_longest_of_the_two_waits_wins(clock: FakeClock) -> None:
    limiter = clock.limiter(rpm=1, tpm=60_000)
    assert limiter.reserve(10) == 0.0
    assert limiter.reserve(10) == pytest.approx(60.0)


def test_threads_share_one_limiter(clock: FakeClock) -> None:
    limiter = clock.limiter(rpm=6)  # six a minute
    waits: list[float] = []
    lock = threading.Lock()

    def task() -> None:
        wait = limiter.reserve(0)
        with lock:
            waits.append(wait)

    threads = [threading.Thread(target=task) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(waits) == pytest.approx([0.0] * 6 + [60.0] * 4)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("2m59.56s", 179.56),
        ("1h2m", 3720.0),
        ("7.5", 7.5),
    ],
)
def test_openai_reset_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


def test_unreadable_headers_are_ignored(clock: FakeClock) -> None:
    limiter = clock.limiter()
    limiter.observe({"x-ratelimit-remaining-requests": "soon", "x-ratelimit-reset-requests": "1s"})
    limiter.observe(
        {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "?"}
    )
    assert limiter.reserve(0) == 0.0


def test_openai_headers_cap_calls_until_their_reset(clock: FakeClock) -> None:
    limiter = clock.limiter(rpm=600)
    limiter.observe(
        {
            "X-RateLimit-Remaining-Requests": "1",
            "X-RateLimit-Reset-Requests": "12s",
            "x-ratelimit-remaining-tokens": "100",
            "x-ratelimit-reset-tokens": "500ms",
        }
    )
    assert limiter.reserve(50) == 0.0
    assert limiter.reserve(10) == pytest.approx(12.0)  # no request left before the reset
    clock.now += 12.0
    assert limiter.reserve(10) == 0.0  # the server's count has reset


def test_anthropic_headers_take_the_tightest_token_count(clock: FakeClock) -> None:
    limiter = clock.limiter()
    reset = "2027-01-15T08:00:30Z"
    clock.wall = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    limiter.observe(
        {
            "anthropic-ratelimit-requests-remaining": "50",
            "anthropic-ratelimit-requests-reset": reset,
            "anthropic-ratelimit-tokens-remaining": "90000",
            "anthropic-ratelimit-tokens-reset": reset,
            "anthropic-ratelimit-output-tokens-remaining": "40",
            "anthropic-ratelimit-output-tokens-reset": reset,
        }
    )
    assert limiter.reserve(40) == 0.0
    assert limiter.reserve(1) == pytest.approx(30.0)


# --- settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "error", "message"),
    [
        ("600/min", TypeError, "rate_limit must be a dict such as"),
        ({"rpm": 0}, ValueError, "rpm must be a positive number, not 0"),
        ({"tpm": "many"}, ValueError, "tpm must be a positive number, not 'many'"),
        ({"rps": 10}, ValueError, "unknown key\\(s\\) 'rps' \\(valid: 'rpm', 'tpm'\\)"),
    ],
)
def test_bad_settings_fail_at_construction(
    setting: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        create_interface("openai", model="m", api_key="k", rate_limit=setting)


def test_interfaces_of_one_account_share_a_limiter_in_the_process(server: MockLLMServer) -> None:
    options = {**server.client_options("openai"), "rate_limit": {"rpm": 600, "tpm": 100_000}}
    a = create_interface("openai", model="m", **options)
    b = create_interface("openai", model="other", **options)
    other_key = create_interface("openai", model="m", **{**options, "api_key": "another-key"})
    assert a._limiter is b._limiter
    assert a._limiter is not other_key._limiter
    copy = pickle.loads(pickle.dumps(a))  # what a worker unpickles joins the same buckets
    assert copy._limiter is a._limiter


def test_a_given_limiter_travels_as_its_limits() -> None:
    copy = pickle.loads(pickle.dumps(RateLimiter(rpm=100, tpm=2000)))
    assert (copy.rpm, copy.tpm) == (100, 2000)


def test_the_token_estimate_counts_the_request_and_its_output_budget() -> None:
    from zerda.llm._estimate import estimate_input_tokens
    from zerda.llm._request import Request

    messages = [{"role": "user", "content": "x" * 400}]
    req = Request(system="be brief", messages=messages, tools=None, tool_choice=None)
    native = {"model": "m", "messages": messages, "max_tokens": 50}
    assert estimate_tokens(native, req) == estimate_input_tokens(messages, system="be brief") + 50
    assert 100 < estimate_tokens(native, req) - 50 < 120  # ~4 characters a token


# --- interfaces on MockLLMServer ----------------------------------------------------------


@pytest.mark.parametrize(
    "provider", ["openai", "anthropic", "gemini", "bedrock", "mistral", "groq", "ollama"]
)
def test_generate_waits_when_the_minute_is_used_up(
    server: MockLLMServer, clock: FakeClock, provider: str
) -> None:
    llm = create_interface(
        provider, model="m", rate_limit=clock.limiter(rpm=2), **server.client_options(provider)
    )
    for _ in range(3):
        assert llm.generate("hi")["content"] == "ok"
    assert clock.slept == [pytest.approx(60.0)]


def test_async_calls_and_streams_draw_from_the_same_buckets(
    server: MockLLMServer, clock: FakeClock
) -> None:
    llm = create_interface(
        "openai", model="m", rate_limit=clock.limiter(rpm=1), **server.client_options("openai")
    )

    async def main() -> list[str | None]:
        first = await llm.generate_async("hi")
        events = [e async for e in llm.stream_async("hi")]
        return [first["content"], events[-1]["result"]["content"]]

    assert asyncio.run(main()) == ["ok", "ok"]
    assert [e for e in llm.stream("hi")][-1]["result"]["content"] == "ok"
    assert clock.slept == [pytest.approx(60.0), pytest.approx(60.0)]


def test_reported_usage_corrects_the_token_estimate(
    server: MockLLMServer, clock: FakeClock
) -> None:
    limiter = clock.limiter(tpm=60)  # one token a second
    llm = create_interface(
        "openai", model="m", rate_limit=limiter, **server.client_options("openai")
    )
    llm.generate("hi")  # estimated from the request's size; 10 tokens used
    assert limiter.reserve(50) == 0.0  # 60 - 10 = 50 left: the estimate was given back
    assert limiter.reserve(1) == pytest.approx(60.0)


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


@pytest.mark.parametrize("provider", ["openai", "groq"])
def test_openai_rate_limit_headers_are_honoured(
    server: MockLLMServer, clock: FakeClock, provider: str
) -> None:
    headers = {
        "content-type": "application/json",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "40s",  # a reset past 60 s is not waited: test_ratelimit_robustness
    }
    server.enqueue_raw(200, _openai_body(), headers, provider=provider)
    llm = create_interface(
        provider, model="m", rate_limit=clock.limiter(), **server.client_options(provider)
    )
    assert llm.generate("hi")["content"] == "ok"
    assert clock.slept == []
    assert llm.generate("hi")["content"] == "ok"
    assert clock.slept == [pytest.approx(40.0)]


def test_anthropic_rate_limit_headers_are_honoured_async(
    server: MockLLMServer, clock: FakeClock
) -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 7, "output_tokens": 3},
    }
    clock.wall = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    headers = {
        "content-type": "application/json",
        "anthropic-ratelimit-tokens-remaining": "0",
        "anthropic-ratelimit-tokens-reset": "2027-01-15T08:00:45Z",
    }
    server.enqueue_raw(200, body, headers, provider="anthropic")
    llm = create_interface(
        "anthropic", model="m", rate_limit=clock.limiter(), **server.client_options("anthropic")
    )

    async def main() -> None:
        await llm.generate_async("hi")
        await llm.generate_async("hi")

    asyncio.run(main())
    assert clock.slept == [pytest.approx(45.0)]


def test_a_callers_http_client_is_kept(server: MockLLMServer, clock: FakeClock) -> None:
    import httpx

    with httpx.Client() as http:
        llm = create_interface(
            "openai",
            model="m",
            rate_limit=clock.limiter(),
            http_client=http,
            **server.client_options("openai"),
        )
        assert llm.client._client is http
