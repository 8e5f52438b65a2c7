"""Several event loops on one interface (issue 34, item 1): each loop keeps its own async
SDK client, closed only when that loop shuts down (or by ``aclose()`` / ``close()``), so a
stream on one loop is never cut by ``asyncio.run(generate_async(...))`` in another thread,
and loops running at once never see "client has been closed". Clients of loops that are
gone are released: many short-lived loops leave nothing behind.

Run on every row with a distinct client (``tests.rows.client_rows``: the OpenAI-compatible
rows share the ``openai`` row's interface and SDK client, so one of them stands for all),
against the real SDKs talking to MockLLMServer.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from tests.rows import client_rows
from zerda.llm import BaseLLMInterface, create_interface, registry
from zerda.testing import MockLLMServer

NAMES = client_rows()
STREAMED = "".join(f"part{i} " for i in range(12))


@pytest.fixture(scope="module")
def loop_server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _collect_only_the_tests_objects() -> Iterator[None]:
    """These tests call ``gc.collect()`` after each loop they end; over the whole heap of a
    test process (every SDK imported: ~300,000 objects) each takes ~0.2 s. What existed
    before the test is frozen (``gc.freeze``: left out of collections until unfrozen), so a
    collection goes through what the test made: its loops, interfaces and clients, which
    are collected as before."""
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture
def server(loop_server: MockLLMServer) -> MockLLMServer:
    loop_server.reset()
    loop_server.set_default(text="Done.")
    return loop_server


def make(server: MockLLMServer, name: str) -> BaseLLMInterface:
    return create_interface(
        name, model="m", max_retries=0, timeout=30.0, **server.client_options(name)
    )


def in_thread(target: Any) -> list[BaseException]:
    """Runs ``target`` in a new thread to its end; what it raised, if anything."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the test, not swallowed
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    return raised


def other_loops_generate(llm: BaseLLMInterface, runs: int) -> list[dict[str, Any]]:
    """``asyncio.run(generate_async)`` ``runs`` times in another thread, each on a new loop
    that ends (and is collected) before the next one starts."""
    results: list[dict[str, Any]] = []

    def target() -> None:
        for _ in range(runs):
            results.append(asyncio.run(llm.generate_async("hi")))
            gc.collect()  # a loop closer let go of would run now, not at some later time

    assert in_thread(target) == []
    return results


@pytest.mark.parametrize("name", NAMES)
def test_a_stream_survives_asyncio_run_in_another_thread(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    server.enqueue(name, text=STREAMED, fragments=12, chunk_delay=0.02)
    others: list[dict[str, Any]] = []

    async def streaming() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        async for event in llm.stream_async("hi"):
            events.append(event)
            if len(events) == 1:  # the stream is open: another thread's loops come and go
                others.extend(await asyncio.to_thread(other_loops_generate, llm, 3))
        return events

    try:
        events = asyncio.run(streaming())
    finally:
        llm.close()

    result = events[-1]["result"]
    assert "error" not in result, result["error"]
    assert result["content"] == STREAMED
    assert "".join(e.get("text", "") for e in events) == STREAMED
    assert [r.get("error") for r in others] == [None] * 3
    assert [r["content"] for r in others] == ["Done."] * 3


@pytest.mark.parametrize("name", NAMES)
def test_the_first_loops_generate_survives_other_loops(server: MockLLMServer, name: str) -> None:
    """A call started on a loop, then awaited after other loops came and went, gets its answer
    through the client it started with; the loop's next call reuses that same client."""
    llm = make(server, name)
    released = threading.Event()
    first = threading.Lock()

    def answer(request: Any) -> dict[str, Any]:
        """The first request (the first loop's call) is answered once the test releases it,
        after the other loops and that loop's next call: in flight all along. The others
        are answered at once."""
        if first.acquire(blocking=False):
            assert released.wait(20), "never released"
            return {"text": "slow"}
        return {"text": "Done."}

    server.respond_with(answer, name)

    async def first_loop() -> tuple[dict[str, Any], dict[str, Any], bool]:
        client = llm.async_client
        slow = asyncio.ensure_future(llm.generate_async("hi"))
        while not server.requests_for(name):  # in flight: the server holds its answer
            await asyncio.sleep(0.01)
        await asyncio.to_thread(other_loops_generate, llm, 2)
        after = await llm.generate_async("hi")
        released.set()
        return await slow, after, llm.async_client is client

    try:
        slow, after, same = asyncio.run(first_loop())
    finally:
        released.set()
        llm.close()
    assert (slow.get("error"), slow["content"]) == (None, "slow")
    assert (after.get("error"), after["content"]) == (None, "Done.")
    assert same


LOOPS = 4
CALLS = 12  # per loop: generate and stream, alternately, all at once


async def many_calls(llm: BaseLLMInterface, start: threading.Barrier) -> list[str]:
    """Each call's outcome: its content, or its error."""
    await asyncio.to_thread(start.wait)

    async def one(i: int) -> dict[str, Any]:
        if i % 2:
            return await llm.generate_async("hi")
        events = [e async for e in llm.stream_async("hi")]
        return dict(events[-1]["result"])

    results = await asyncio.gather(*(one(i) for i in range(CALLS)))
    return [r["content"] if "error" not in r else f"error: {r['error']}" for r in results]


@pytest.mark.parametrize("name", NAMES)
def test_four_loops_at_once_never_fail(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    start = threading.Barrier(LOOPS)
    outcomes: list[list[str]] = []

    def loop_thread() -> None:
        for _ in range(2):  # a second loop in each thread, while the others still run
            outcomes.append(asyncio.run(many_calls(llm, start)))

    threads = [threading.Thread(target=loop_thread) for _ in range(LOOPS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    llm.close()

    assert not any(t.is_alive() for t in threads)
    assert outcomes == [["Done."] * CALLS] * (LOOPS * 2)


# --- what each loop's client is, and when it is closed -----------------------------------


class Spy:
    """Records the async clients an interface closes."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.closed: list[Any] = []
        close = llm._aclose_client

        async def aclose(client: Any) -> None:
            self.closed.append(client)
            await close(client)

        llm._aclose_client = aclose  # type: ignore[method-assign]


def own_clients(name: str) -> bool:
    """Whether the row builds an async client per loop (boto3 has none: Bedrock's async
    calls run its one thread-safe sync client in a thread pool)."""
    return registry.get(name).wire != "bedrock"


@pytest.mark.parametrize("name", NAMES)
def test_each_loop_keeps_its_client_until_it_shuts_down(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    spy = Spy(llm)
    seen: dict[str, Any] = {}
    other_done = threading.Event()

    async def first() -> None:
        seen["first"] = llm.async_client
        await llm.generate_async("hi")
        await asyncio.to_thread(in_thread, second_thread)
        gc.collect()
        seen["closed_while_running"] = list(spy.closed)
        seen["first_again"] = llm.async_client

    def second_thread() -> None:
        async def second() -> None:
            seen["second"] = llm.async_client
            await llm.generate_async("hi")

        asyncio.run(second())
        other_done.set()

    asyncio.run(first())
    gc.collect()
    if not own_clients(name):
        assert seen["first"] is seen["second"] is seen["first_again"]
        assert spy.closed == []
        return
    assert seen["first"] is seen["first_again"]
    assert seen["second"] is not seen["first"]
    assert seen["closed_while_running"] == [seen["second"]]  # the second loop's, as it ended
    assert spy.closed == [seen["second"], seen["first"]]  # the first one's as it ended
    llm.close()
    assert spy.closed == [seen["second"], seen["first"]]


@pytest.mark.parametrize("name", NAMES)
def test_clients_of_ended_loops_are_released(server: MockLLMServer, name: str) -> None:
    """Many short-lived loops, some ended by ``asyncio.run`` and some closed without
    ``shutdown_asyncgens``: the interface keeps no client of any of them."""
    llm = make(server, name)
    built: list[weakref.ref[Any]] = []
    make_async = llm._make_async_client

    def tracked() -> Any:
        client = make_async()
        built.append(weakref.ref(client))
        return client

    llm._make_async_client = tracked  # type: ignore[method-assign]
    # Six loops, each kind ended at least twice: none of their clients may be left, so a
    # client kept per loop (or only the last loop's) fails at the first loop already;
    # more loops would only build more clients (the cost of this test).
    for i in range(6):
        if i % 3:
            result = asyncio.run(llm.generate_async("hi"))
        else:  # a loop closed by hand, without shutdown_asyncgens()
            loop = asyncio.new_event_loop()
            result = loop.run_until_complete(llm.generate_async("hi"))
            loop.close()
        assert result["content"] == "Done."
    gc.collect()
    alive = [ref for ref in built if ref() is not None]
    assert len(alive) == 0, f"{len(alive)} clients of ended loops still held"
    llm.close()


@pytest.mark.parametrize("name", NAMES)
async def test_aclose_closes_the_running_loops_client_now(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    spy = Spy(llm)
    assert (await llm.generate_async("hi"))["content"] == "Done."
    mine = llm.async_client
    other: list[Any] = []

    def elsewhere() -> None:
        async def run() -> None:
            await llm.generate_async("hi")
            other.append(llm.async_client)

        asyncio.run(run())

    assert await asyncio.to_thread(in_thread, elsewhere) == []
    await llm.aclose()
    if own_clients(name):
        assert spy.closed == [other[0], mine]
    with pytest.raises(RuntimeError, match="is closed"):
        await llm.generate_async("hi")
