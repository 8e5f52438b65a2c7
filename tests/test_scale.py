"""1,000 prompts with a Python tool, mapped over Dask worker processes and over a process
pool, against a MockLLMServer in this process (docs/scale.md runs the same code shape).
Loopback only: the server, the Dask scheduler and its workers listen on 127.0.0.1."""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer, RecordedRequest

PROMPTS = [f"prompt {i}: count these {i % 7 + 1} words" for i in range(1000)]


def word_count(text: str) -> int:
    """Counts the words of a text.

    Args:
        text: The text.
    """
    return len(text.split())


def answer(prompt: str, llm: Any) -> dict[str, Any]:
    """What each worker task runs: the tool loop on one prompt."""
    result = llm.run([{"role": "user", "content": prompt}], tools=[word_count])
    return {"prompt": prompt, "answer": result["content"], "error": result.get("error")}


def tool_then_echo(request: RecordedRequest) -> dict[str, Any]:
    """The mock's default answer on the OpenAI wire: a word_count call for the prompt, then
    a text naming the prompt and the tool's result."""
    messages = request.body["messages"]
    if messages[-1]["role"] == "user":
        prompt = messages[-1]["content"]
        return {"tool_calls": [{"name": "word_count", "arguments": {"text": prompt}}]}
    return {"text": f"{messages[0]['content']} -> {messages[-1]['content']} words"}


def expected(prompt: str) -> dict[str, Any]:
    return {"prompt": prompt, "answer": f"{prompt} -> {len(prompt.split())} words", "error": None}


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        s.respond_with(tool_then_echo, "openai")
        yield s


def make_llm(server: MockLLMServer) -> Any:
    return create_interface("openai", model="gpt-4o-mini", **server.client_options("openai"))


@pytest.mark.timeout(180)
def test_dask_local_cluster_maps_1000_prompts_with_a_tool(server: MockLLMServer) -> None:
    distributed = pytest.importorskip("distributed")
    llm = make_llm(server)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=2,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,  # logging.ERROR
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        [llm_future] = client.scatter([llm], broadcast=True)  # pickled once per worker
        futures = client.map(answer, PROMPTS, llm=llm_future)
        results = client.gather(futures)
        workers = client.run(lambda: __import__("os").getpid())
    assert results == [expected(p) for p in PROMPTS]
    assert len(set(workers.values())) == 2
    assert len(server.requests_for("openai")) == 2000  # one tool turn and one answer each


@pytest.mark.timeout(180)
def test_process_pool_maps_prompts_with_a_tool(server: MockLLMServer) -> None:
    prompts = PROMPTS[:200]  # the same path as Dask's 1,000, at a fifth of the suite's time
    llm = make_llm(server)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        results = list(pool.map(functools.partial(answer, llm=llm), prompts, chunksize=25))
    assert results == [expected(p) for p in prompts]
    assert len(server.requests_for("openai")) == 400


def test_a_failing_responder_is_a_500_that_names_it() -> None:
    def broken(request: RecordedRequest) -> dict[str, Any]:
        raise KeyError("messages")

    with MockLLMServer() as s:
        s.respond_with(broken)
        result = create_interface(
            "openai", model="m", max_retries=0, **s.client_options("openai")
        ).generate("hi")
    assert result["error"]["type"] == "server"
    assert "the respond_with function failed: KeyError: 'messages'" in result["error"]["message"]
