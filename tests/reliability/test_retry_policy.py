"""One retry decision on every provider (issue 18 item 1, issue 11 item 5): a Retry-After
up to the documented cap is waited as given, a longer one is not waited at all, and the
waits of one call never add up past the caller's ``timeout``.

The waits are recorded, not slept: ``zerda.llm.base._sleep`` (and its async twin) is the
only place any provider waits between attempts, so replacing it also proves that no SDK
retries (and sleeps) on its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.llm import base
from zerda.llm.errors import MAX_RETRY_AFTER, RateLimitError, retry_delay
from zerda.testing import MockLLMServer


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    recorded: list[float] = []

    async def record_async(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(base, "_sleep", recorded.append)
    monkeypatch.setattr(base, "_sleep_async", record_async)
    return recorded


def attempts(server: MockLLMServer, provider: str) -> int:
    return len(server.requests_for(provider))


def test_the_cap_is_sixty_seconds() -> None:
    assert MAX_RETRY_AFTER == 60.0
    error = RateLimitError("slow down")
    assert retry_delay(error, 0, 60.0) == 60.0
    assert retry_delay(error, 0, 60.5) is None
    assert retry_delay(error, 0, 3.0, waited=2.5, budget=5.0) is None
    assert retry_delay(error, 0, 2.5, waited=2.5, budget=5.0) == 2.5


@pytest.mark.parametrize("retry_after", [90, 3600])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_retry_after_past_the_cap_is_not_waited(
    server: MockLLMServer, llms: Interfaces, waits: list[float], provider: str, retry_after: int
) -> None:
    llm = llms.get(provider, max_retries=2, timeout=None)
    server.enqueue_error(429, provider, message="slow down", retry_after=retry_after)
    server.enqueue(provider, text="too early")

    error = llm.generate("hi")["error"]

    assert (error["type"], error["status_code"], error["retryable"]) == ("rate_limit", 429, True)
    assert waits == []
    assert attempts(server, provider) == 1
    assert server.pending(provider) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_retry_after_under_the_cap_is_waited_as_given(
    server: MockLLMServer, llms: Interfaces, waits: list[float], provider: str
) -> None:
    llm = llms.get(provider, max_retries=2, timeout=None)
    server.enqueue_error(429, provider, message="slow down", retry_after=45)
    server.enqueue(provider, text="after the wait")

    assert llm.generate("hi")["content"] == "after the wait"
    assert waits == [45.0]
    assert attempts(server, provider) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_wait_past_the_callers_timeout_is_not_started(
    server: MockLLMServer, llms: Interfaces, waits: list[float], provider: str
) -> None:
    llm = llms.get(provider, max_retries=2, timeout=5.0)
    server.enqueue_error(503, provider, message="busy", retry_after=30)
    server.enqueue(provider, text="too late")

    error = llm.generate("hi")["error"]

    assert (error["type"], error["status_code"]) == ("server", 503)
    assert waits == []
    assert attempts(server, provider) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_waits_of_one_call_never_add_up_past_the_timeout(
    server: MockLLMServer, llms: Interfaces, waits: list[float], provider: str
) -> None:
    llm = llms.get(provider, max_retries=5, timeout=5.0)
    for _ in range(5):
        server.enqueue_error(429, provider, message="slow down", retry_after=1.5)
    server.enqueue(provider, text="never reached")

    error = llm.generate("hi")["error"]

    assert error["type"] == "rate_limit"
    assert waits == [1.5, 1.5, 1.5]  # a fourth would make 6 s, past timeout=5
    assert attempts(server, provider) == 4


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_follows_the_same_rule(
    server: MockLLMServer, llms: Interfaces, waits: list[float], provider: str
) -> None:
    llm = llms.get(provider, max_retries=2, timeout=None)
    server.enqueue_error(429, provider, message="slow down", retry_after=90)
    server.enqueue_error(429, provider, message="slow down", retry_after=2)

    events = list(llm.stream("hi"))

    assert events[-1]["result"]["error"]["type"] == "rate_limit"
    assert waits == [] and attempts(server, provider) == 1
    server.reset()
    server.enqueue_error(429, provider, message="slow down", retry_after=2)
    server.enqueue(provider, text="streamed")
    events = list(llm.stream("hi"))
    assert events[-1]["result"]["content"] == "streamed"
    assert waits == [2.0]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_calls_follow_the_same_rule(
    server: MockLLMServer, fresh: Any, waits: list[float], provider: str
) -> None:
    llm = fresh(server).get(provider, max_retries=3, timeout=5.0)
    server.enqueue_error(429, provider, message="slow down", retry_after=90)
    server.enqueue(provider, text="too early")
    assert (await llm.generate_async("hi"))["error"]["type"] == "rate_limit"
    assert waits == []

    server.reset()
    for _ in range(3):
        server.enqueue_error(429, provider, message="slow down", retry_after=2)
    server.enqueue(provider, text="never reached")
    assert (await llm.generate_async("hi"))["error"]["type"] == "rate_limit"
    assert waits == [2.0, 2.0]
    assert attempts(server, provider) == 3


@pytest.mark.parametrize("provider", ["openai", "groq", "anthropic"])
def test_a_ready_sdk_client_does_not_retry_on_its_own(
    server: MockLLMServer, waits: list[float], provider: str
) -> None:
    """A client passed in keeps its settings, but its retries are Zerda's: otherwise its
    SDK would sleep through any Retry-After on top of Zerda's policy."""
    from zerda.llm import create_interface

    sdk_client = _sdk_client(server, provider)
    llm = create_interface(provider, model="m", client=sdk_client, max_retries=1)
    server.enqueue_error(429, provider, message="slow down", retry_after=90)
    server.enqueue(provider, text="too early")

    assert llm.generate("hi")["error"]["type"] == "rate_limit"
    assert attempts(server, provider) == 1
    assert llm.client.max_retries == 0
    assert sdk_client.max_retries == 2  # the caller's client itself is left as it was


def _sdk_client(server: MockLLMServer, provider: str) -> Any:
    import importlib

    sdk = importlib.import_module(provider)
    cls = {"openai": "OpenAI", "groq": "Groq", "anthropic": "Anthropic"}[provider]
    return getattr(sdk, cls)(**server.sdk_client_kwargs(provider))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_per_call_timeout_bounds_the_waits_too(
    server: MockLLMServer, llms: Interfaces, waits: list[float], provider: str
) -> None:
    llm = llms.get(provider, max_retries=2, timeout=None)
    server.enqueue_error(429, provider, message="slow down", retry_after=3)
    server.enqueue(provider, text="too late")

    error = llm.generate("hi", timeout=2.0)["error"]

    assert error["type"] == "rate_limit"
    assert waits == [] and attempts(server, provider) == 1
