"""No repr, str, error message, exception, log record (every logger at DEBUG, the SDKs'
included) or result shows the API key (Bedrock: the AWS secret access key), for every
provider, on success and on every fault."""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, make_llm
from zerda.llm import BaseLLMInterface
from zerda.testing import ErrorReply, MockLLMServer

SECRET = "sk-SECRET-zerda-4242"
# Loggers that may hold their own level: set to DEBUG so that nothing is filtered before
# caplog sees it.
SDK_LOGGERS = (
    "zerda",
    "openai",
    "groq",
    "anthropic",
    "mistralai",
    "ollama",
    "google_genai",
    "google",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "botocore",
    "boto3",
    "urllib3",
)

# What the server answers, queued for one call (a retried fault twice: max_retries=1).
FAULTS = ["ok", "429", "500", "401", "drop", "malformed", "empty", "timeout"]
STREAM_FAULTS = ["cut", "error event"]


def queue(server: MockLLMServer, provider: str, fault: str) -> None:
    if fault == "ok":
        server.enqueue(provider, text="fine", tool_calls=[{"name": "f", "arguments": {}}])
    elif fault in ("429", "500"):
        for _ in range(2):
            server.enqueue_error(int(fault), provider, retry_after=0.01)
    elif fault == "401":
        server.enqueue_error(401, provider, message="bad key")
    elif fault == "drop":
        for _ in range(2):
            server.enqueue_fault("drop", provider)
    elif fault == "timeout":
        for _ in range(2):
            server.enqueue_fault("hang", provider, delay=2)
    elif fault in ("malformed", "empty"):
        server.enqueue_fault(fault, provider)  # type: ignore[arg-type]
    elif fault == "cut":
        server.enqueue(provider, text="a b c d e f", fragments=6, cut_after=4)
    else:
        server.enqueue(provider, text="a b c", fragments=3, stream_error=ErrorReply(500, "boom"))


def credentials(provider: str) -> dict[str, Any]:
    if provider == "bedrock":
        return {"aws_access_key_id": "AKIDZERDATEST", "aws_secret_access_key": SECRET}
    return {"api_key": SECRET}


@pytest.fixture(scope="module")
def keyed(module_server: MockLLMServer) -> Iterator[dict[str, BaseLLMInterface]]:
    """One interface per provider holding the secret (built once: a client per fault would
    only repeat the same construction)."""
    made = {
        p: make_llm(module_server, p, max_retries=1, timeout=0.15, **credentials(p))
        for p in PROVIDERS
    }
    yield made
    for llm in made.values():
        getattr(llm, "close", lambda: None)()


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in SDK_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def exception_texts(exc: BaseException) -> list[str]:
    """str and repr of the exception and of every exception chained to it, and the whole
    formatted traceback."""
    texts = ["".join(traceback.format_exception(exc))]
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), repr(getattr(current, "args", ()))]
        current = current.__cause__ or current.__context__
    return texts


def log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    texts = [caplog.text]
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args), repr(record.__dict__)]
    return texts


def assert_hidden(texts: list[str], where: str) -> None:
    for text in texts:
        assert SECRET not in text, f"the secret appears in {where}: {text[:300]!r}"


def test_the_fake_key_is_really_used(
    server: MockLLMServer, keyed: dict[str, BaseLLMInterface]
) -> None:
    """The checks below would prove nothing if the interfaces did not hold the key."""
    for provider in PROVIDERS:
        if provider == "bedrock":
            credentials = keyed[provider].client._request_signer._credentials  # type: ignore[attr-defined]
            assert credentials.secret_key == SECRET
        else:
            assert keyed[provider].api_key == SECRET


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_result_error_or_log_shows_the_key(
    server: MockLLMServer,
    keyed: dict[str, BaseLLMInterface],
    debug_logs: pytest.LogCaptureFixture,
    provider: str,
) -> None:
    llm = keyed[provider]
    assert_hidden([repr(llm), str(llm), repr(vars(llm))], "the interface's repr")
    for name in FAULTS:
        queue(server, provider, name)
        result = llm.generate("hi", tools=[{"name": "f", "parameters": {"type": "object"}}])
        assert_hidden([json.dumps(result), repr(result)], f"the result ({name})")
        fails = name != "ok"
        assert ("error" in result) == fails, f"{name}: {result}"
        queue(server, provider, name)
        try:
            llm.generate("hi", raise_errors=True)
        except Exception as exc:  # noqa: BLE001 - every exception is searched for the key
            assert_hidden(exception_texts(exc), f"the exception ({name})")
    for name in STREAM_FAULTS:
        queue(server, provider, name)
        events = list(llm.stream("hi"))
        assert_hidden([json.dumps(events)], f"the stream events ({name})")
        assert "error" in events[-1]["result"], name
        queue(server, provider, name)
        with pytest.raises(Exception) as info:  # noqa: PT011 - any exception is searched
            list(llm.stream("hi", raise_errors=True))
        assert_hidden(exception_texts(info.value), f"the stream exception ({name})")
    # Invalid input: refused before sending, with the input echoed in the message.
    result = llm.generate("hi", tool_choice="nope")
    assert result["error"]["type"] == "invalid_request"
    assert_hidden([json.dumps(result)], "an invalid_request error")

    assert any(not r.name.startswith("zerda") for r in debug_logs.records), "no SDK log seen"
    assert_hidden(log_texts(debug_logs), "the logs")
    assert_hidden([repr(llm), str(llm), repr(vars(llm))], "the interface's repr after calls")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_calls_do_not_show_the_key(
    server: MockLLMServer, fresh: Any, debug_logs: pytest.LogCaptureFixture, provider: str
) -> None:
    llm = fresh(server).get(provider, max_retries=0, **credentials(provider))
    server.enqueue_error(403, provider, message="bad key")
    server.enqueue(provider, text="a b c", fragments=3, cut_after=2)

    result = await llm.generate_async("hi")
    events = [e async for e in llm.stream_async("hi")]

    assert result["error"]["type"] == "permission"
    assert_hidden([json.dumps(result), json.dumps(events)], "async results")
    assert_hidden(log_texts(debug_logs), "the logs")
