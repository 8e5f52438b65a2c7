"""Distinct per-call timeouts on Bedrock (issue 34, item 10): ``timeout=deadline - now`` on
every call must not keep one boto3 client (and its connection pool) per call. Measured in
open file descriptors (each leaked client holds a connection: one descriptor here and one in
the server's thread), never in time. The per-call timeout still bounds each call, shorter or
longer than the interface's, on every path (generate, stream, and their async twins), and on
a botocore without per-request timeouts too (the bounded fallback)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import BaseLLMInterface, create_interface
from zerda.testing import MockLLMServer

# Descriptors the runtime may open lazily once (a pool thread's, an epoll, the server's
# listening backlog): far below the two per leaked client that the defect left (+298 after
# 150 calls).
SLACK = 12
# Calls per path, each with a timeout of its own: a client kept per timeout would leave 80
# descriptors, over six times the SLACK (so would any cache keeping 7 clients or more).
CALLS = 40


@pytest.fixture(scope="module")
def bedrock_server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture
def server(bedrock_server: MockLLMServer) -> MockLLMServer:
    bedrock_server.reset()
    bedrock_server.set_default(text="Done.")
    return bedrock_server


@pytest.fixture(autouse=True)
def _sdk_logs_at_warning() -> Iterator[None]:
    """botocore and urllib3 at WARNING, whatever an earlier test of the session left: at
    DEBUG, botocore logs a streamed answer's raw response as a record argument, and pytest's
    capture keeps every record of a test, so each response (and its socket) would live
    until the test ends. Descriptors are what these tests count."""
    manager = logging.root.manager
    names = [n for n in manager.loggerDict if n.split(".")[0] in ("botocore", "urllib3")]
    saved = {n: logging.getLogger(n).level for n in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.WARNING)
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def make(server: MockLLMServer, name: str, **options: Any) -> BaseLLMInterface:
    settings = {"max_retries": 0, "timeout": 30.0, **server.client_options(name), **options}
    return create_interface(name, model="m", **settings)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def deadline_timeouts() -> Iterator[float]:
    """What ``timeout=deadline - time.monotonic()`` gives: a new value on every call."""
    return (20.0 - i * 0.013 for i in range(CALLS))


def generate_all(llm: BaseLLMInterface) -> list[Any]:
    return [llm.generate("hi", timeout=t)["content"] for t in deadline_timeouts()]


def stream_all(llm: BaseLLMInterface) -> list[Any]:
    return [list(llm.stream("hi", timeout=t))[-1]["result"]["content"] for t in deadline_timeouts()]


def generate_all_async(llm: BaseLLMInterface) -> list[Any]:
    async def run() -> list[Any]:
        return [(await llm.generate_async("hi", timeout=t))["content"] for t in deadline_timeouts()]

    return asyncio.run(run())


def stream_all_async(llm: BaseLLMInterface) -> list[Any]:
    async def run() -> list[Any]:
        out = []
        for t in deadline_timeouts():
            events = [e async for e in llm.stream_async("hi", timeout=t)]
            out.append(events[-1]["result"]["content"])
        return out

    return asyncio.run(run())


PATHS = {
    "generate": generate_all,
    "stream": stream_all,
    "generate_async": generate_all_async,
    "stream_async": stream_all_async,
}


def older_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    """A botocore that takes timeouts per client only (before per-request read timeouts)."""
    from zerda.llm.wires.bedrock import timeouts

    monkeypatch.setattr(timeouts, "per_request_timeouts", lambda: False)


@pytest.mark.parametrize("botocore", ["current", "older"])
@pytest.mark.parametrize("path", list(PATHS))
def test_distinct_per_call_timeouts_keep_descriptors_flat(
    server: MockLLMServer, path: str, botocore: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if botocore == "older":
        older_botocore(monkeypatch)
    llm = make(server, "bedrock")
    run = PATHS[path]
    assert llm.generate("hi")["content"] == "Done."  # the interface's own client, warm
    before = open_fds()
    contents = run(llm)
    after = open_fds()
    llm.close()
    assert contents == ["Done."] * CALLS
    assert after - before <= SLACK, f"{after - before} descriptors more after {CALLS} calls"


@pytest.mark.parametrize("botocore", ["current", "older"])
@pytest.mark.parametrize("path", ["generate", "stream", "generate_async", "stream_async"])
def test_a_per_call_timeout_shorter_than_the_interfaces_cuts_the_call(
    server: MockLLMServer, path: str, botocore: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if botocore == "older":
        older_botocore(monkeypatch)
    llm = make(server, "bedrock", timeout=30.0)
    server.enqueue_fault("hang", "bedrock", delay=5)
    # Well under the hang's 5 s and the interface's 30 s: whichever cut the call is plain.
    result = one_call(llm, path, timeout=0.2)
    llm.close()
    assert result["error"]["type"] == "timeout", result["error"]


@pytest.mark.parametrize("botocore", ["current", "older"])
@pytest.mark.parametrize("path", ["generate", "stream", "generate_async", "stream_async"])
def test_a_per_call_timeout_longer_than_the_interfaces_waits_for_the_answer(
    server: MockLLMServer, path: str, botocore: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if botocore == "older":
        older_botocore(monkeypatch)
    llm = make(server, "bedrock", timeout=0.3)
    server.enqueue("bedrock", text="late", delay=1.0)
    result = one_call(llm, path, timeout=20.0)
    server.enqueue("bedrock", text="late", delay=1.0)
    default = one_call(llm, path, timeout=None)  # the interface's own 0.3 s still holds
    llm.close()
    assert (result.get("error"), result["content"]) == (None, "late")
    assert default["error"]["type"] == "timeout", default["error"]


def one_call(llm: BaseLLMInterface, path: str, timeout: float | None) -> dict[str, Any]:
    options = {} if timeout is None else {"timeout": timeout}
    if path == "generate":
        return llm.generate("hi", **options)
    if path == "stream":
        return dict(list(llm.stream("hi", **options))[-1]["result"])
    if path == "generate_async":
        return asyncio.run(llm.generate_async("hi", **options))

    async def streamed() -> dict[str, Any]:
        return dict([e async for e in llm.stream_async("hi", **options)][-1]["result"])

    return asyncio.run(streamed())


@pytest.mark.parametrize("fast_path", [True, False])
def test_the_per_call_timeout_sends_no_extra_field(server: MockLLMServer, fast_path: bool) -> None:
    """The timeout reaches botocore's request context, never the Converse body (nor
    botocore's validator, which runs on the documented path)."""
    llm = make(server, "bedrock", fast_path=fast_path)
    assert llm.generate("hi", timeout=7.25)["content"] == "Done."
    assert list(llm.stream("hi", timeout=7.5))[-1]["result"]["content"] == "Done."
    plain = make(server, "bedrock", fast_path=fast_path)
    assert plain.generate("hi")["content"] == "Done."
    timed, streamed, untimed = server.requests_for("bedrock")
    assert timed.body == streamed.body == untimed.body
    llm.close()
    plain.close()
