"""Secrets a provider echoes back stay out of the whole exception chain, and out of the
logs (issue 18, items 5 and 10): ``logger.exception()`` on a ZerdaError prints the SDK's
exceptions it is chained to, Bedrock's session token is in every request botocore logs at
DEBUG, and each failed call is logged at WARNING on the ``zerda`` logger."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from tests.reliability.test_secrets import log_texts
from zerda.llm import ZerdaError
from zerda.testing import MockLLMServer

SECRET = "sk-ECHOED-zerda-9191"
TOKEN = "FwoGZXIvYXdzEC-session-token-zerda-5353"


def credentials(provider: str) -> dict[str, Any]:
    if provider == "bedrock":
        return {
            "aws_access_key_id": "AKIDZERDATEST",
            "aws_secret_access_key": SECRET,
            "aws_session_token": TOKEN,
        }
    return {"api_key": SECRET}


def echo_the_key(server: MockLLMServer, provider: str, status: int = 401) -> None:
    """An error whose message quotes the key, as OpenAI's 401 does ("Incorrect API key
    provided: sk-...")."""
    message = f"Incorrect API key provided: {SECRET}"
    if provider == "bedrock":
        message += f" (token {TOKEN})"
    error_type = "UnrecognizedClientException" if provider == "bedrock" else None
    server.enqueue_error(status, provider, message=message, error_type=error_type)


def chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is f for f in found):
            continue
        found.append(current)
        todo += [current.__cause__, current.__context__]
    return found


@pytest.mark.parametrize("provider", PROVIDERS)
def test_logger_exception_on_a_zerda_error_shows_no_secret(
    server: MockLLMServer, llms: Interfaces, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    llm = llms.get(provider, max_retries=0, **credentials(provider))
    echo_the_key(server, provider)
    app_log = logging.getLogger("zerda-test-app")

    with pytest.raises(ZerdaError) as info:
        llm.generate("hi", raise_errors=True)
    with caplog.at_level(logging.ERROR, logger="zerda-test-app"):
        try:
            raise info.value
        except ZerdaError:
            app_log.exception("the call failed")

    exc = info.value
    links = chain(exc)
    assert len(links) >= 2  # chained to the SDK's exception, which is kept
    assert "Incorrect API key provided: ***" in exc.message
    printed = "".join(traceback.format_exception(exc))
    assert "Incorrect API key provided" in printed
    texts = [caplog.text, printed] + [f"{e!s} {e!r} {e.args!r}" for e in links]
    texts += [str(getattr(e, "message", "")) for e in links]
    for text in texts:
        assert SECRET not in text and TOKEN not in text, text[:400]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_exception_chain_shows_no_secret(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider, max_retries=0, **credentials(provider))
    echo_the_key(server, provider, status=403)

    with pytest.raises(ZerdaError) as info:
        list(llm.stream("hi", raise_errors=True))

    printed = "".join(traceback.format_exception(info.value))
    assert SECRET not in printed and TOKEN not in printed


def test_bedrocks_session_token_is_not_in_botocores_debug_log(
    server: MockLLMServer, llms: Interfaces, caplog: pytest.LogCaptureFixture
) -> None:
    llm = llms.get("bedrock", max_retries=0, **credentials("bedrock"))
    server.enqueue("bedrock", text="signed")
    server.enqueue("bedrock", text="streamed")

    names = ("botocore", "botocore.auth", "botocore.endpoint", "urllib3")
    levels = {name: logging.getLogger(name).level for name in names}
    try:
        with caplog.at_level(logging.DEBUG):
            for name in names:
                logging.getLogger(name).setLevel(logging.DEBUG)
            assert llm.generate("hi")["content"] == "signed"
            assert "".join(e.get("text", "") for e in llm.stream("hi")) == "streamed"
    finally:  # later tests must not hold every botocore record (and its response) again
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)

    sent = server.requests_for("bedrock")[0]
    assert "x-amz-security-token" in sent.headers  # the token really was sent
    assert any(r.name == "botocore.endpoint" for r in caplog.records)
    assert any("X-Amz-Security-Token" in r.getMessage() for r in caplog.records)
    for text in log_texts(caplog):
        assert TOKEN not in text and SECRET not in text, text[:300]


# --- item 10: each failed call at WARNING -------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_failed_call_is_logged_at_warning_without_the_secret(
    server: MockLLMServer, llms: Interfaces, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    llm = llms.get(provider, max_retries=0, **credentials(provider))
    echo_the_key(server, provider)

    with caplog.at_level(logging.WARNING, logger="zerda"):
        result = llm.generate("hi")
        llm.generate("hi", tool_choice="nope")
        ok = server.enqueue(provider, text="fine")
        assert ok and llm.generate("hi")["content"] == "fine"

    warnings = [r for r in caplog.records if r.name == "zerda"]
    assert [r.levelno for r in warnings] == [logging.WARNING, logging.WARNING]
    assert warnings[0].getMessage() == (
        f"{provider} call failed: authentication: {result['error']['message']}"
    )
    assert "Incorrect API key provided: ***" in warnings[0].getMessage()
    assert warnings[1].getMessage().startswith(f"{provider} call failed: invalid_request: ")
    for text in log_texts(caplog):
        assert SECRET not in text and TOKEN not in text


def test_the_readme_quick_start_checks_for_an_error() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert 'if "error" in result:' in quick_start
