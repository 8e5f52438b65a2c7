"""The fast path (issue 12): OpenAI and Groq send Zerda's body through the SDK's documented
``client.post`` (never ``chat.completions.create`` and its TypedDict transformer), keep
the client's options, and read plain JSON dicts. The canaries fail loudly when the SDK
internals this relies on change (their names: wires/openai/fastpath.py)."""

from __future__ import annotations

from typing import Any

import pytest

from zerda.llm.providers import create_interface
from zerda.llm.wires.openai.fastpath import split_request
from zerda.testing import MockLLMServer
from zerda.testing._validate import bearer_present

PROVIDERS = ["openai", "groq"]


def _no_create(llm: Any) -> None:
    """Any call of the SDK's ``create()`` fails the test: the fast path must not use it."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("chat.completions.create was called")

    llm.client.chat.completions.create = refuse
    llm.async_client.chat.completions.create = refuse


def test_split_request_separates_request_options_from_the_body() -> None:
    body, options = split_request(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "timeout": 2.5,
            "extra_headers": {"X-A": "1"},
            "extra_query": {"q": "v"},
            "extra_body": {"top_k": 3},
            "user": None,
        }
    )
    assert body == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "user": None}
    assert options == {
        "timeout": 2.5,
        "headers": {"X-A": "1"},
        "params": {"q": "v"},
        "extra_json": {"top_k": 3},
    }


def test_split_request_keeps_timeout_none_and_drops_absent_extras() -> None:
    assert split_request({"model": "m", "timeout": None, "extra_headers": None}) == (
        {"model": "m"},
        {"timeout": None},
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_generate_posts_the_built_body_through_client_post(provider: str) -> None:
    with MockLLMServer() as server:
        server.enqueue(provider, text="ok")
        llm = create_interface(f"{provider}:m", fast_path=True, **server.client_options(provider))
        _no_create(llm)
        result = llm.generate(
            "hi",
            max_tokens=5,
            timeout=7,
            extra_headers={"X-Zerda-Fast": "1"},
            extra_query={"trace": "yes"},
            extra_body={"seed": 4},
        )
        sent = server.last_request(provider)
    assert result["content"] == "ok"
    assert result["stop_reason"] == "end_turn"
    assert sent.body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_completion_tokens": 5,
        "seed": 4,
    }
    assert sent.headers["x-zerda-fast"] == "1"
    assert sent.query == {"trace": "yes"}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_reads_plain_dict_chunks(provider: str) -> None:
    with MockLLMServer() as server:
        server.enqueue(provider, text="hello there")
        llm = create_interface(f"{provider}:m", fast_path=True, **server.client_options(provider))
        _no_create(llm)
        events = list(llm.stream("hi"))
        sent = server.last_request(provider)
    assert sent.body["stream"] is True
    assert "".join(e["text"] for e in events if e["type"] == "text") == "hello there"
    assert events[-1]["result"]["content"] == "hello there"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_async_generate_and_stream_use_client_post(provider: str) -> None:
    with MockLLMServer() as server:
        server.enqueue(provider, text="one")
        server.enqueue(provider, text="two")
        llm = create_interface(f"{provider}:m", fast_path=True, **server.client_options(provider))
        _no_create(llm)
        result = await llm.generate_async("hi")
        events = [e async for e in llm.stream_async("hi")]
        await llm.aclose()
    assert result["content"] == "one"
    assert events[-1]["result"]["content"] == "two"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_auth_and_client_headers_still_sent(provider: str) -> None:
    with MockLLMServer() as server:
        server.enqueue(provider, text="ok")
        llm = create_interface(
            f"{provider}:m", default_headers={"X-Client": "z"}, **server.client_options(provider)
        )
        llm.generate("hi")
        sent = server.last_request(provider)
    assert sent.headers["x-client"] == "z"
    assert bearer_present(sent)  # the value is redacted by the mock: presence only


# --- canaries: the SDK behaviour the fast path relies on ------------------------------
# (that the names exist: the one canary over every table, tests/llm/wires/test_private_names.py)


@pytest.mark.parametrize("module_name", PROVIDERS)
def test_canary_cast_to_object_returns_the_json_as_is(module_name: str) -> None:
    """``cast_to=object`` (sdk/_base_client.py ``_process_response_data``) hands back the
    parsed JSON unchanged: Zerda's readers take those dicts."""
    sdk = pytest.importorskip(module_name)
    client = (sdk.OpenAI if module_name == "openai" else sdk.Groq)(
        api_key="k", base_url="http://127.0.0.1:9"
    )
    data = {"choices": [{"index": 0, "message": {"content": "x"}}]}
    assert client._process_response_data(data=data, cast_to=object, response=None) is data
