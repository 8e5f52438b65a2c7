"""Faults on every provider, through MockLLMServer: HTTP errors, Retry-After, timeouts,
dropped connections, malformed and empty bodies, cut streams and in-stream errors.

Each ends in DESIGN.md §5's error shape (or its typed exception with raise_errors=True),
retried when §5 says so (connection errors, timeouts, 408, 409, 429, 5xx) and only then;
the number of attempts is read from the server's request log. ``pending`` shows a retry
that did not happen: an item queued behind the fault is still waiting.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.llm import BaseLLMInterface, ZerdaError
from zerda.llm.errors import ERROR_CLASSES
from zerda.testing import ErrorReply, MockLLMServer

MESSAGE = "zerda-fault-7731"
RETRY_AFTER = 0.01  # seconds; every SDK that honours Retry-After waits this little

# DESIGN.md §5: retried, and the error type each status means.
RETRIED = {
    408: "timeout",
    409: "unknown",
    429: "rate_limit",
    500: "server",
    502: "server",
    503: "server",
}
NOT_RETRIED = {
    400: "invalid_request",
    401: "authentication",
    403: "permission",
    404: "not_found",
    422: "invalid_request",
}
# The error code real Bedrock sends with each status (x-amzn-ErrorType); the mock's own
# choice for statuses it has no code for (ValidationException) would mean another error.
BEDROCK_CODES = {401: "UnrecognizedClientException", 409: "ConflictException"}

# Where a provider departs from the contract: the test is written to the contract and
# expected to fail (strictly) until the provider is fixed.
DEVIATIONS: dict[tuple[str, Any], str] = {}


def cases(kinds: list[Any]) -> list[Any]:
    """(provider, kind) parameters, a known deviation marked xfail(strict=True)."""
    params = []
    for provider in PROVIDERS:
        for kind in kinds:
            reason = DEVIATIONS.get((provider, kind))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(provider, kind, marks=marks, id=f"{provider}-{kind}"))
    return params


def enqueue_status(server: MockLLMServer, provider: str, status: int, **extra: Any) -> None:
    code = BEDROCK_CODES.get(status) if provider == "bedrock" else None
    server.enqueue_error(status, provider, message=MESSAGE, error_type=code, **extra)


def attempts(server: MockLLMServer, provider: str) -> int:
    return len(server.requests_for(provider))


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    """The error dict, after checking the rest of the result is §5's error shape."""
    rest = {k: v for k, v in result.items() if k != "error"}
    assert rest == {
        "content": None,
        "tool_calls": [],
        "stop_reason": "error",
        "usage": None,
        "reasoning": None,
        "message": None,
        "cost": None,
    }
    error: dict[str, Any] = result["error"]
    assert set(error) == {"type", "message", "status_code", "provider", "retryable"}
    assert isinstance(error["message"], str) and error["message"]
    return error


def raised(llm: BaseLLMInterface, error: dict[str, Any]) -> ZerdaError:
    """The typed exception raise_errors=True gives for the same failure: its class is the
    one for the error's type, its fields are the error dict's, and it is chained."""
    with pytest.raises(ZerdaError) as info:
        llm.generate("hi", raise_errors=True)
    exc = info.value
    assert type(exc) is ERROR_CLASSES[error["type"]]
    assert exc.to_dict() == error
    assert exc.__cause__ is not None  # chained (from e) to the SDK's exception
    return exc


# --- HTTP statuses ----------------------------------------------------------------------


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize(("provider", "status"), cases(list(RETRIED)))
def test_a_retryable_status_is_retried_max_retries_times(
    server: MockLLMServer, llms: Interfaces, provider: str, status: int
) -> None:
    llm = llms.get(provider, max_retries=1)
    for _ in range(3):
        enqueue_status(server, provider, status, retry_after=RETRY_AFTER)

    error = error_of(llm.generate("hi"))

    assert attempts(server, provider) == 2  # the first try and one retry, no more
    assert server.pending(provider) == 1
    assert {k: error[k] for k in ("type", "status_code", "provider", "retryable")} == {
        "type": RETRIED[status],
        "status_code": status,
        "provider": provider,
        "retryable": True,
    }
    assert MESSAGE in error["message"]
    enqueue_status(server, provider, status, retry_after=RETRY_AFTER)
    raised(llm, error)
    assert attempts(server, provider) == 4
    enqueue_status(server, provider, status, retry_after=RETRY_AFTER)
    server.enqueue(provider, text="recovered")
    assert llm.generate("hi")["content"] == "recovered"
    assert attempts(server, provider) == 6


@pytest.mark.parametrize(("provider", "status"), cases(list(NOT_RETRIED)))
def test_a_client_error_is_not_retried(
    server: MockLLMServer, llms: Interfaces, provider: str, status: int
) -> None:
    llm = llms.get(provider, max_retries=2)
    enqueue_status(server, provider, status)
    enqueue_status(server, provider, status)

    error = error_of(llm.generate("hi"))

    assert attempts(server, provider) == 1
    assert server.pending(provider) == 1
    assert {k: error[k] for k in ("type", "status_code", "provider", "retryable")} == {
        "type": NOT_RETRIED[status],
        "status_code": status,
        "provider": provider,
        "retryable": False,
    }
    assert MESSAGE in error["message"]
    raised(llm, error)
    assert attempts(server, provider) == 2


@pytest.mark.parametrize(("provider", "kind"), cases(["retry_after"]))
def test_retry_after_is_honoured(
    server: MockLLMServer, llms: Interfaces, provider: str, kind: str, short_backoff: None
) -> None:
    """The backoff is ~10 ms here: a wait of at least Retry-After's 0.3 s shows the header
    was read."""
    llm = llms.get(provider, max_retries=1)
    server.enqueue_error(429, provider, message=MESSAGE, retry_after=0.3)
    server.enqueue(provider, text="after the wait")

    start = time.perf_counter()
    result = llm.generate("hi")
    elapsed = time.perf_counter() - start

    assert result["content"] == "after the wait"
    assert attempts(server, provider) == 2
    assert elapsed >= 0.28


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_without_retry_after_is_retried(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=2)
    server.enqueue_error(429, provider, message=MESSAGE)
    server.enqueue_error(429, provider, message=MESSAGE)
    server.enqueue(provider, text="third time")

    assert llm.generate("hi")["content"] == "third time"
    assert attempts(server, provider) == 3


# --- timeouts and transport faults ------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_configured_timeout_is_honoured(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    """Measured on a warm interface (client built, connection open): the call gives up
    within a small margin of ``timeout``, with a timeout error."""
    timeout = 0.25
    # The process's one-time costs first, under no tight timeout: google-genai builds its
    # response models on its first answer (0.12 s), the mock its validators, on a busy
    # machine sometimes past 0.25 s; they are not what this test measures.
    server.enqueue(provider, text="once")
    assert llms.get(provider, max_retries=0, timeout=30).generate("hi")["content"] == "once"
    llm = llms.get(provider, max_retries=0, timeout=timeout)
    server.enqueue(provider, text="warm")
    assert llm.generate("hi")["content"] == "warm"
    server.enqueue_fault("hang", provider, delay=3)

    start = time.perf_counter()
    error = error_of(llm.generate("hi"))
    elapsed = time.perf_counter() - start

    assert timeout * 0.9 <= elapsed <= timeout + 0.3, f"gave up after {elapsed:.3f} s"
    assert {k: error[k] for k in ("type", "status_code", "provider", "retryable")} == {
        "type": "timeout",
        "status_code": None,
        "provider": provider,
        "retryable": True,
    }
    assert attempts(server, provider) == 3  # once, warm, and the one timed out: no retry
    server.enqueue_fault("hang", provider, delay=3)
    raised(llm, error)


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_is_retried(server: MockLLMServer, llms: Interfaces, provider: str) -> None:
    llm = llms.get(provider, max_retries=1, timeout=0.2)
    server.enqueue_fault("hang", provider, delay=3)
    server.enqueue(provider, text="second try")

    assert llm.generate("hi")["content"] == "second try"
    assert attempts(server, provider) == 2


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_dropped_connection_is_retried(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=1)
    for _ in range(3):
        server.enqueue_fault("drop", provider)

    error = error_of(llm.generate("hi"))

    assert attempts(server, provider) == 2
    assert server.pending(provider) == 1
    assert {k: error[k] for k in ("type", "status_code", "provider", "retryable")} == {
        "type": "connection",
        "status_code": None,
        "provider": provider,
        "retryable": True,
    }
    server.enqueue_fault("drop", provider)
    raised(llm, error)
    server.enqueue_fault("drop", provider)
    server.enqueue(provider, text="reconnected")
    assert llm.generate("hi")["content"] == "reconnected"


@pytest.mark.parametrize(("provider", "kind"), cases(["malformed", "empty"]))
def test_a_broken_200_body_is_a_server_error_not_retried(
    server: MockLLMServer, llms: Interfaces, provider: str, kind: Any
) -> None:
    """A 200 whose body is not JSON, or is empty: the provider's fault, and retrying is not
    in §5's list (so ``retryable`` is False, as the call was not retried)."""
    llm = llms.get(provider, max_retries=2)
    server.enqueue_fault(kind, provider)
    server.enqueue_fault(kind, provider)

    error = error_of(llm.generate("hi"))

    assert attempts(server, provider) == 1
    assert server.pending(provider) == 1
    assert {k: error[k] for k in ("type", "status_code", "provider", "retryable")} == {
        "type": "server",
        "status_code": None,
        "provider": provider,
        "retryable": False,
    }
    raised(llm, error)


# --- streams ----------------------------------------------------------------------------

FULL_TEXT = "alpha beta gamma delta epsilon zeta eta theta"


def stream_events(llm: BaseLLMInterface) -> tuple[str, dict[str, Any]]:
    """The text of the text events, and the done result (checked to come last, once)."""
    events = list(llm.stream("hi"))
    assert [e["type"] for e in events].count("done") == 1
    assert events[-1]["type"] == "done"
    text = "".join(e["text"] for e in events if e["type"] == "text")
    return text, events[-1]["result"]


def stream_error_of(result: dict[str, Any], streamed: str) -> dict[str, Any]:
    """§7: a failed stream's done result is the error shape keeping the text received."""
    assert result["content"] == (streamed or None)
    return error_of({**result, "content": None})


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cut_stream_keeps_the_text_received_and_is_not_retried(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=2)
    server.enqueue(provider, text=FULL_TEXT, fragments=8, cut_after=5)

    streamed, result = stream_events(llm)

    assert streamed and FULL_TEXT.startswith(streamed) and streamed != FULL_TEXT
    error = stream_error_of(result, streamed)
    assert (error["type"], error["provider"]) == ("connection", provider)
    # Text was already handed to the caller: a retry would repeat it.
    assert attempts(server, provider) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_cut_async_stream_keeps_the_text_received(
    server: MockLLMServer, fresh: Any, provider: str
) -> None:
    llm = fresh(server).get(provider, max_retries=2)
    server.enqueue(provider, text=FULL_TEXT, fragments=8, cut_after=5)

    events = [e async for e in llm.stream_async("hi")]

    streamed = "".join(e["text"] for e in events if e["type"] == "text")
    assert streamed and FULL_TEXT.startswith(streamed) and streamed != FULL_TEXT
    assert events[-1]["type"] == "done"
    error = stream_error_of(events[-1]["result"], streamed)
    assert (error["type"], error["provider"]) == ("connection", provider)
    assert attempts(server, provider) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stalled_stream_times_out_keeping_the_text_received(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    """The timeout bounds each wait for data, mid-stream too."""
    timeout = 0.25
    llm = llms.get(provider, max_retries=1, timeout=timeout)
    server.enqueue(provider, text="warm")
    assert llm.generate("hi")["content"] == "warm"
    server.enqueue(provider, text=FULL_TEXT, fragments=4, chunk_delay=1.0)

    start = time.perf_counter()
    streamed, result = stream_events(llm)
    elapsed = time.perf_counter() - start

    assert timeout * 0.9 <= elapsed <= timeout + 0.3, f"gave up after {elapsed:.3f} s"
    assert FULL_TEXT.startswith(streamed) and streamed != FULL_TEXT
    error = stream_error_of(result, streamed)
    assert (error["type"], error["provider"]) == ("timeout", provider)
    assert attempts(server, provider) == 2  # the warm-up call, then one stream: no retry


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_error_event_in_a_stream_keeps_the_text_received(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=2)
    server.enqueue(provider, text=FULL_TEXT, fragments=4, stream_error=ErrorReply(500, MESSAGE))

    streamed, result = stream_events(llm)

    assert streamed and FULL_TEXT.startswith(streamed)
    error = stream_error_of(result, streamed)
    assert (error["type"], error["provider"]) == ("server", provider)
    assert MESSAGE in error["message"]
    assert attempts(server, provider) == 1
    server.enqueue(provider, text=FULL_TEXT, fragments=4, stream_error=ErrorReply(500, MESSAGE))
    with pytest.raises(ZerdaError) as info:
        list(llm.stream("hi", raise_errors=True))
    assert type(info.value) is ERROR_CLASSES[error["type"]]


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_that_fails_before_its_first_byte_is_retried(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=2)
    server.enqueue_fault("drop", provider)
    server.enqueue_error(503, provider, message=MESSAGE, retry_after=RETRY_AFTER)
    server.enqueue(provider, text=FULL_TEXT, fragments=3)

    streamed, result = stream_events(llm)

    assert streamed == FULL_TEXT
    assert result["content"] == FULL_TEXT and "error" not in result
    assert attempts(server, provider) == 3


# --- async ------------------------------------------------------------------------------


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_calls_retry_and_fail_the_same_way(
    server: MockLLMServer, fresh: Any, provider: str
) -> None:
    llm = fresh(server).get(provider, max_retries=1)
    server.enqueue_fault("drop", provider)
    server.enqueue(provider, text="async ok")
    assert (await llm.generate_async("hi"))["content"] == "async ok"
    assert attempts(server, provider) == 2

    enqueue_status(server, provider, 404)
    error = error_of(await llm.generate_async("hi"))
    assert (error["type"], error["status_code"], attempts(server, provider)) == (
        "not_found",
        404,
        3,
    )

    enqueue_status(server, provider, 503, retry_after=RETRY_AFTER)
    enqueue_status(server, provider, 503, retry_after=RETRY_AFTER)
    with pytest.raises(ZerdaError) as info:
        await llm.generate_async("hi", raise_errors=True)
    assert (type(info.value), info.value.status_code) == (ERROR_CLASSES["server"], 503)
    assert attempts(server, provider) == 5
