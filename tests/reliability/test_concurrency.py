"""Concurrency: 200 generate_async calls at once across the seven providers, one interface
each, and one interface shared by several threads. Every call gets its own answer: the
server answers each request from the prompt it carries, after a random delay that shuffles
the order in which answers come back, so a response handed to the wrong call shows."""

from __future__ import annotations

import asyncio
import random
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.reliability._support import PROVIDERS
from zerda.testing import MockLLMServer, RecordedRequest, Script, ScriptedCall
from zerda.testing._script import Queued

PROMPT = re.compile(rb"prompt-(\d+)-([a-z]+)")


def answer_to(number: str, provider: str) -> str:
    return f"answer-{number}-{provider}"


class EchoServer(MockLLMServer):
    """Answers every request with a script derived from its prompt.

    MockLLMServer answers from FIFO queues, which cannot tell concurrent requests apart;
    this subclass hooks the two steps the handler thread takes for one request — log it,
    then take its answer — to answer from the request just logged by the same thread."""

    def __init__(self) -> None:
        super().__init__()
        self._current = threading.local()

    def _record(self, req: RecordedRequest) -> None:
        super()._record(req)
        self._current.request = req

    def _next(self, provider: str) -> Queued | None:
        match = PROMPT.search(self._current.request.raw_body)
        if match is None:
            return super()._next(provider)
        number, name = (g.decode() for g in match.groups())
        scripted = [ScriptedCall("record", {"n": int(number)})] if int(number) % 3 == 0 else []
        return Script(
            text=answer_to(number, name),
            tool_calls=scripted,
            usage={"input_tokens": int(number), "output_tokens": 1},
            delay=random.uniform(0, 0.03),
            fragments=2,
        )


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoServer]:
    with EchoServer() as server:
        yield server


def assert_answered(result: dict[str, Any], number: int, provider: str) -> None:
    """The whole result for this call's own prompt."""
    assert "error" not in result, result["error"]
    assert result["content"] == answer_to(str(number), provider)
    usage = result["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (number, 1)
    calls = [(c["name"], c["arguments"]) for c in result["tool_calls"]]
    assert calls == ([("record", {"n": number})] if number % 3 == 0 else [])


async def test_200_concurrent_async_calls_get_their_own_answers(
    echo: EchoServer, fresh: Any
) -> None:
    llms = {p: fresh(echo).get(p, max_retries=0) for p in PROVIDERS}
    calls = [(n, PROVIDERS[n % len(PROVIDERS)]) for n in range(200)]

    async def one(number: int, provider: str) -> dict[str, Any]:
        result: dict[str, Any] = await llms[provider].generate_async(f"prompt-{number}-{provider}")
        return result

    results = await asyncio.gather(*(one(n, p) for n, p in calls))

    for (number, provider), result in zip(calls, results, strict=True):
        assert_answered(result, number, provider)


async def test_concurrent_async_streams_get_their_own_answers(echo: EchoServer, fresh: Any) -> None:
    llms = {p: fresh(echo).get(p, max_retries=0) for p in PROVIDERS}
    calls = [(n, PROVIDERS[n % len(PROVIDERS)]) for n in range(1000, 1056)]

    async def one(number: int, provider: str) -> dict[str, Any]:
        events = [e async for e in llms[provider].stream_async(f"prompt-{number}-{provider}")]
        text = "".join(e["text"] for e in events if e["type"] == "text")
        assert text == answer_to(str(number), provider)
        result: dict[str, Any] = events[-1]["result"]
        return result

    results = await asyncio.gather(*(one(n, p) for n, p in calls))

    for (number, provider), result in zip(calls, results, strict=True):
        assert_answered(result, number, provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_interface_is_safe_from_several_threads(
    echo: EchoServer, fresh: Any, provider: str
) -> None:
    """The first calls race to build the client too: every thread starts at once."""
    llm = fresh(echo).get(provider, max_retries=0)
    start = threading.Barrier(8)

    def one(number: int) -> None:
        if number < 8:
            start.wait(timeout=10)
        prompt = f"prompt-{number}-{provider}"
        if number % 2:
            result = llm.generate(prompt)
        else:
            result = list(llm.stream(prompt))[-1]["result"]
        assert_answered(result, number, provider)

    with ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(one, n) for n in range(24)]:
            future.result()
