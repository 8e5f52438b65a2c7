"""Every interface is closable (close / aclose / with / async with), closes only the SDK
clients it built, and can be reused across ``asyncio.run`` calls without leaking.

The leak checks run the client in a fresh interpreter, whose open file descriptors are its
own (the MockLLMServer stays in this process, so the server's sockets are not counted) and
whose stderr is captured whole: "Event loop is closed" tracebacks printed by finalizers,
after ``gc.collect()``, included.

Run on every row with a distinct client (``tests.rows.client_rows``): the OpenAI-compatible
rows are the ``openai`` row's interface class and SDK client at another base URL, so one of
them stands for all.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.rows import client_rows
from zerda.llm import BaseLLMInterface, create_interface, registry
from zerda.testing import MockLLMServer

NAMES = client_rows()
SLACK = 3  # descriptors a runtime may open lazily once (an epoll, a resolver socket)
# Loops after the warm-up; they alternate generate_async and stream_async, so each is run 6
# times: a descriptor left per loop, even by one of the two calls only, ends 6 above the
# start, twice the SLACK. Each loop builds an SDK client (the cost of this test); more
# loops would prove nothing more.
RUNS = 12

CHILD = r"""
import asyncio, gc, json, os, sys

from zerda.llm import create_interface

name, options = sys.argv[1], json.loads(sys.argv[2])
runs = int(sys.argv[3])
if "credentials_token" in options:  # Vertex AI's credentials object, sent as its token
    from google.oauth2.credentials import Credentials

    options["credentials"] = Credentials(token=options.pop("credentials_token"))


def fds():
    return len(os.listdir("/proc/self/fd"))


llm = create_interface(name, model="m", max_retries=0, **options)


async def once(i):
    if i % 2:
        result = await llm.generate_async("hi")
    else:
        result = [e async for e in llm.stream_async("hi")][-1]["result"]
    assert result["content"] == "Done.", result


for i in range(2):  # warm: imports, lazily opened runtime descriptors
    asyncio.run(once(i))
report = {"before": fds()}
for i in range(runs):
    asyncio.run(once(i))
report["after_runs"] = fds()
gc.collect()
report["after_gc"] = fds()

assert llm.generate("hi")["content"] == "Done."
report["sync_open"] = fds()
llm.close()
gc.collect()
report["after_close"] = fds()
try:
    llm.generate("hi")
except RuntimeError as exc:
    report["use_after_close"] = str(exc)


async def scoped():
    async with create_interface(name, model="m", max_retries=0, **options) as other:
        assert (await other.generate_async("hi"))["content"] == "Done."
        report["async_open"] = fds()
    report["after_aclose"] = fds()


asyncio.run(scoped())
gc.collect()
report["end"] = fds()
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        s.set_default(text="Done.")
        yield s


@pytest.mark.parametrize("name", NAMES)
def test_reuse_across_asyncio_runs_keeps_files_flat_and_stderr_empty(
    server: MockLLMServer, name: str
) -> None:
    given = server.client_options(name)
    if "credentials" in given:  # a google.auth object: the child rebuilds it from its token
        given["credentials_token"] = given.pop("credentials").token
    options = json.dumps(given)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, name, options, str(RUNS)],
        capture_output=True,
        text=True,
        timeout=110,  # under pytest-timeout's 120 s
        check=False,
    )
    assert child.stderr == ""
    assert child.returncode == 0
    report = json.loads(child.stdout)
    before = report["before"]
    assert report["after_runs"] <= before + SLACK, report  # closed with each loop, not by GC
    assert report["after_gc"] <= before + SLACK, report
    assert report["after_close"] <= report["sync_open"] - 1, report  # the sync connection
    assert report["after_close"] <= before + SLACK, report
    assert report["use_after_close"] == (
        f"this {type(make(server, name)).__name__} is closed: create a new interface to make calls"
    )
    assert report["after_aclose"] <= report["async_open"] - 1, report  # closed at once
    assert report["end"] <= before + SLACK, report


# --- what is closed, and what is not -------------------------------------------------------


def make(server: MockLLMServer, name: str, **options: Any) -> BaseLLMInterface:
    return create_interface(
        name, model="m", max_retries=0, **server.client_options(name), **options
    )


class Spy:
    """Records the clients an interface closes, through its two closing hooks."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.closed: list[Any] = []
        sync_close, async_close = llm._close_client, llm._aclose_client

        def close(client: Any) -> None:
            self.closed.append(client)
            sync_close(client)

        async def aclose(client: Any) -> None:
            self.closed.append(client)
            await async_close(client)

        llm._close_client = close  # type: ignore[method-assign]
        llm._aclose_client = aclose  # type: ignore[method-assign]


@pytest.mark.parametrize("name", NAMES)
def test_with_closes_the_clients_built_and_refuses_later_calls(
    server: MockLLMServer, name: str
) -> None:
    with make(server, name) as llm:
        spy = Spy(llm)
        assert llm.generate("hi")["content"] == "Done."
        sync = llm.client
    assert llm.is_closed
    assert spy.closed == [sync]
    with pytest.raises(RuntimeError, match="is closed: create a new interface"):
        llm.generate("hi")
    with pytest.raises(RuntimeError, match="is closed"):
        next(llm.stream("hi"))
    llm.close()  # idempotent
    assert spy.closed == [sync]


@pytest.mark.parametrize("name", NAMES)
async def test_async_with_closes_the_async_client_of_the_running_loop(
    server: MockLLMServer, name: str
) -> None:
    async with make(server, name) as llm:
        spy = Spy(llm)
        assert (await llm.generate_async("hi"))["content"] == "Done."
        built = llm.async_client
    assert llm.is_closed
    assert spy.closed == [built]  # Bedrock's: its one (sync) client, boto3 having no async
    if registry.get(name).wire == "bedrock":
        assert llm._pool._shutdown  # type: ignore[attr-defined]  # its thread pool stopped
    with pytest.raises(RuntimeError, match="is closed"):
        await llm.generate_async("hi")


@pytest.mark.parametrize("name", NAMES)
def test_a_client_passed_in_is_never_closed(server: MockLLMServer, name: str) -> None:
    ready = make(server, name).client  # a ready SDK client, built by another interface
    options = {k: v for k, v in server.client_options(name).items() if k == "base_url"}
    llm = create_interface(name, model="m", max_retries=0, client=ready, **options)
    spy = Spy(llm)
    assert llm.generate("hi")["content"] == "Done."
    llm.close()
    assert spy.closed == []
    again = create_interface(name, model="m", max_retries=0, client=ready, **options)
    assert again.generate("hi")["content"] == "Done."  # the caller's client still works


@pytest.mark.parametrize("name", NAMES)
def test_an_async_client_of_an_earlier_loop_is_closed_when_that_loop_ends(
    server: MockLLMServer, name: str
) -> None:
    llm = make(server, name)
    spy = Spy(llm)
    built = []

    async def once() -> None:
        assert (await llm.generate_async("hi"))["content"] == "Done."
        built.append(llm.async_client)

    asyncio.run(once())
    asyncio.run(once())
    if registry.get(name).wire == "bedrock":
        assert built[0] is built[1] and spy.closed == []  # one thread-safe sync client
        return
    assert built[0] is not built[1]
    assert spy.closed == built  # each closed as its loop shut down
    llm.close()


def test_a_fallback_closes_the_interfaces_it_built_not_the_ones_given(
    server: MockLLMServer,
) -> None:
    ready = make(server, "openai")
    names = ["groq:m", "anthropic:m"]
    options = {name.split(":")[0]: server.client_options(name.split(":")[0]) for name in names}
    with create_interface([ready, *names], options=options, max_retries=0) as fallback:
        assert fallback.generate("hi")["content"] == "Done."
        built = fallback.interfaces[1:]
    assert [llm.is_closed for llm in built] == [True, True]
    assert not ready.is_closed
    assert ready.generate("hi")["content"] == "Done."


async def test_a_fallback_closes_with_async_with(server: MockLLMServer) -> None:
    options = {"groq": server.client_options("groq")}
    async with create_interface(["groq:m"], options=options, max_retries=0) as fallback:
        assert (await fallback.generate_async("hi"))["content"] == "Done."
    assert fallback.interfaces[0].is_closed


async def test_a_ready_gemini_client_serves_async_calls_through_its_aio(
    server: MockLLMServer,
) -> None:
    from google import genai

    client = genai.Client(**server.sdk_client_kwargs("gemini"))
    llm = create_interface("gemini", model="m", max_retries=0, client=client)
    assert (await llm.generate_async("hi"))["content"] == "Done."
    assert llm.async_client is client.aio
    await llm.aclose()
    assert not client._api_client._async_httpx_client.is_closed  # the caller's, left open
