"""Interfaces travel to other processes (docs/scale.md, "Pickling"): every registry row,
fallbacks and tools from functions, in this process and in a spawned worker, against
MockLLMServer.

What an interface leaves behind and rebuilds (its SDK clients) is checked on the rows with
distinct clients (``tests.rows.client_rows``: the OpenAI-compatible rows are the ``openai``
row's interface and client at another base URL, one of them stands for all); what each row
reads from its own environment variables, on every row that has them."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from tests.rows import client_rows
from zerda.llm import create_interface, registry
from zerda.llm.base import BaseLLMInterface
from zerda.llm.fallback import FallbackInterface
from zerda.llm.functions import tool_from_function
from zerda.testing import MockLLMServer

HELLO = [{"role": "user", "content": "hello"}]
KEY_ROWS = [name for name in registry.NAMES if registry.get(name).env_keys]
CLIENT_ROWS = client_rows()
ENV_KEY = "env-secret-4f1c9a"
WORKER_KEY = "worker-key-77d2"


def lookup_city(city: str) -> dict[str, Any]:
    """Looks a city up.

    Args:
        city: The city's name.
    """
    return {"city": city, "population": len(city) * 1000}


# --- run in the spawned worker (importable by name, as spawn needs) ------------------------


def _worker_env(values: dict[str, str]) -> None:
    os.environ.update(values)


def _generate(llm: Any) -> dict[str, Any]:
    return llm.generate(HELLO)  # type: ignore[no-any-return]


def _run_with_tool(llm: Any) -> dict[str, Any]:
    return llm.run([{"role": "user", "content": "Paris?"}], tools=[lookup_city])  # type: ignore[no-any-return]


def _key_of(blob: bytes) -> str | None:
    return pickle.loads(blob).api_key  # type: ignore[no-any-return]


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _answer(server: MockLLMServer) -> Iterator[None]:
    server.set_default(text="pong", usage={"input_tokens": 3, "output_tokens": 1})
    yield
    server.reset()


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    """One spawned worker for the module; it starts with WORKER_KEY in every key variable
    (its own environment, not the parent's)."""
    env = {k: WORKER_KEY for name in KEY_ROWS for k in registry.get(name).env_keys}
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=_worker_env, initargs=(env,)) as p:
        yield p


def make(server: MockLLMServer, provider: str, **options: Any) -> BaseLLMInterface:
    return create_interface(provider, model="m", **{**server.client_options(provider), **options})


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """The result without what differs per response by design (a provider's response id)."""
    return {k: v for k, v in result.items() if k != "provider_data"} | {
        "message": {k: v for k, v in result["message"].items() if k != "provider_data"}
    }


# --- every row with a distinct client -------------------------------------------------------


@pytest.mark.parametrize("provider", CLIENT_ROWS)
def test_pickle_leaves_live_objects_behind(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)
    assert llm.generate(HELLO)["content"] == "pong"  # its clients exist now
    state = llm.__getstate__()
    assert not set(llm._live_attributes) & set(state)
    copy = pickle.loads(pickle.dumps(llm))
    assert copy._client is None and copy._async_client is None
    assert copy.sdk is llm.sdk
    assert copy._lock is not llm._lock
    assert (copy.model, copy.base_url, copy.provider, copy.spec) == (
        llm.model,
        llm.base_url,
        llm.provider,
        llm.spec,
    )
    assert comparable(copy.generate(HELLO)) == comparable(llm.generate(HELLO))


@pytest.mark.parametrize("provider", CLIENT_ROWS)
def test_unpickled_interface_serves_async_calls(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)
    copy = pickle.loads(pickle.dumps(llm))
    result = asyncio.run(copy.generate_async(HELLO))
    assert comparable(result) == comparable(llm.generate(HELLO))


@pytest.mark.parametrize("provider", CLIENT_ROWS)
def test_round_trip_in_a_spawned_worker(
    server: MockLLMServer, pool: ProcessPoolExecutor, provider: str
) -> None:
    llm = make(server, provider)
    expected = llm.generate(HELLO)
    assert comparable(pool.submit(_generate, llm).result(timeout=60)) == comparable(expected)
    assert server.last_request(provider).body == server.requests_for(provider)[0].body


@pytest.mark.parametrize("provider", CLIENT_ROWS)
def test_tool_loop_with_a_python_tool_in_a_worker(
    server: MockLLMServer, pool: ProcessPoolExecutor, provider: str
) -> None:
    server.enqueue(provider, tool_calls=[{"name": "lookup_city", "arguments": {"city": "Paris"}}])
    server.enqueue(provider, text="Paris has 5000 people")
    result = pool.submit(_run_with_tool, make(server, provider)).result(timeout=60)
    assert result["content"] == "Paris has 5000 people"
    tool_message = [m for m in result["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_message] == [{"city": "Paris", "population": 5000}]


# --- the API key ---------------------------------------------------------------------------


def _env_interface(
    server: MockLLMServer, provider: str, monkeypatch: pytest.MonkeyPatch
) -> BaseLLMInterface:
    for name in registry.get(provider).env_keys:
        monkeypatch.setenv(name, ENV_KEY)
    options = {k: v for k, v in server.client_options(provider).items() if k != "api_key"}
    return create_interface(provider, model="m", **options)


@pytest.mark.parametrize("provider", KEY_ROWS)
def test_a_key_from_the_environment_is_not_in_the_pickle(
    server: MockLLMServer, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = _env_interface(server, provider, monkeypatch)
    assert llm.api_key == ENV_KEY
    llm.generate(HELLO)  # the clients built from the key are left behind too
    blob = pickle.dumps(llm)
    assert ENV_KEY.encode() not in blob
    for name in registry.get(provider).env_keys:
        monkeypatch.setenv(name, "rotated-key")
    assert pickle.loads(blob).api_key == "rotated-key"
    for name in registry.get(provider).env_keys:
        monkeypatch.delenv(name)
    assert pickle.loads(blob).api_key is None


@pytest.mark.parametrize("provider", KEY_ROWS)
def test_a_worker_reads_the_key_from_its_own_environment(
    server: MockLLMServer, pool: ProcessPoolExecutor, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    blob = pickle.dumps(_env_interface(server, provider, monkeypatch))
    assert pool.submit(_key_of, blob).result(timeout=60) == WORKER_KEY


@pytest.mark.parametrize("provider", KEY_ROWS)
def test_an_explicit_key_travels_inside_the_pickle(
    server: MockLLMServer, pool: ProcessPoolExecutor, provider: str
) -> None:
    blob = pickle.dumps(make(server, provider, api_key="explicit-key-9e"))
    assert b"explicit-key-9e" in blob  # documented: it is an argument like any other
    assert pool.submit(_key_of, blob).result(timeout=60) == "explicit-key-9e"


def test_bedrock_credentials_from_the_environment_are_not_in_the_pickle(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENVONLY0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-aws-secret-5b")
    llm = create_interface(
        "bedrock", model="m", base_url=server.base_url("bedrock"), region="us-east-1"
    )
    llm.generate(HELLO)
    blob = pickle.dumps(llm)
    assert b"env-aws-secret-5b" not in blob and b"AKIAENVONLY0001" not in blob
    assert pickle.loads(blob).generate(HELLO)["content"] == "pong"


def test_explicit_bedrock_credentials_travel(server: MockLLMServer) -> None:
    llm = make(server, "bedrock", aws_secret_access_key="explicit-aws-secret")
    blob = pickle.dumps(llm)
    assert b"explicit-aws-secret" in blob
    copy = pickle.loads(blob)
    assert copy._session.get_credentials().secret_key == "explicit-aws-secret"
    assert copy.generate(HELLO)["content"] == "pong"


# --- what cannot travel ---------------------------------------------------------------------


def test_an_interface_around_a_given_client_cannot_be_pickled(server: MockLLMServer) -> None:
    import openai

    llm = create_interface(
        "openai", model="m", client=openai.OpenAI(**server.sdk_client_kwargs("openai"))
    )
    with pytest.raises(
        TypeError, match=r"OpenAIInterface cannot be pickled: it was built with a ready SDK client"
    ):
        pickle.dumps(llm)


def test_an_option_that_cannot_be_pickled_is_named(server: MockLLMServer) -> None:
    import httpx

    with httpx.Client() as http:
        llm = make(server, "openai", http_client=http)
        with pytest.raises(TypeError, match=r"its option 'http_client' \(Client\) cannot be"):
            pickle.dumps(llm)


def test_mcp_tools_cannot_travel() -> None:
    from zerda.llm.mcp import MCPTool, MCPTools

    tools = MCPTools("http://127.0.0.1:9/mcp")
    with pytest.raises(
        TypeError, match=r"MCPTools\(url='http://127.0.0.1:9/mcp'\) cannot be pickled"
    ):
        pickle.dumps(tools)
    tool = MCPTool(tools, "search", "Searches.", {"type": "object"})
    with pytest.raises(
        TypeError, match=r"MCP tool 'search' cannot be pickled: .*open MCPTools inside the worker"
    ):
        pickle.dumps([tool])


# --- fallbacks and tools ----------------------------------------------------------------------


def test_a_fallback_travels_with_its_interfaces(
    server: MockLLMServer, pool: ProcessPoolExecutor
) -> None:
    server.enqueue_error(503, "anthropic")
    fallback = create_interface([make(server, "anthropic", max_retries=0), make(server, "openai")])
    assert isinstance(fallback, FallbackInterface)
    copy = pickle.loads(pickle.dumps(fallback))
    assert [type(i).__name__ for i in copy.interfaces] == ["AnthropicInterface", "OpenAIInterface"]
    server.enqueue_error(503, "anthropic")
    result = pool.submit(_generate, fallback).result(timeout=60)
    assert (result["provider"], result["content"]) == ("openai", "pong")


def test_tools_built_from_functions_travel() -> None:
    tool = tool_from_function(lookup_city)
    assert pickle.loads(pickle.dumps(tool)) == tool
    assert pickle.loads(pickle.dumps([lookup_city]))[0] is lookup_city


def test_a_row_outside_the_registry_pickles_field_by_field() -> None:
    from zerda.llm._record import replace

    spec = replace(registry.get("openai"), name="my-openai")
    copy = pickle.loads(pickle.dumps(spec))
    assert copy == spec and copy is not spec
    assert pickle.loads(pickle.dumps(registry.get("openai"))) is registry.get("openai")
