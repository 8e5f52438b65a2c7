"""Options behave the same on every provider: checked at construction, ``timeout=`` per
call honoured, and a keyword the SDK call refuses reported as invalid_request naming it.

Every test runs on every registry row against MockLLMServer (the real SDKs on the wire),
except the per-call timeout, which the SDK client applies: it runs on the rows with distinct
clients (``tests.rows.client_rows``; the OpenAI-compatible rows are the ``openai`` row's
interface and client at another base URL, and one of them stands for all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.rows import client_rows
from zerda.llm import BaseLLMInterface, create_interface, registry
from zerda.testing import MockLLMServer

NAMES = list(registry.NAMES)

# Per wire (so that a new OpenAI-compatible row needs nothing here): one option its SDK's
# client constructor takes, passed through by Zerda.
SDK_OPTION = {
    "openai": {"default_headers": {"x-zerda-test": "1"}},
    "groq": {"default_headers": {"x-zerda-test": "1"}},
    "mistral": {"debug_logger": None},
    "ollama": {"headers": {"x-zerda-test": "1"}},
    "anthropic": {"default_headers": {"x-zerda-test": "1"}},
    "bedrock": {"use_ssl": False},
    "gemini": {"http_options": {"headers": {"x-zerda-test": "1"}}},
    "openai-responses": {"default_headers": {"x-zerda-test": "1"}},
    "azure": {"default_headers": {"x-zerda-test": "1"}},
    "azure-responses": {"default_headers": {"x-zerda-test": "1"}},
    "anthropic-bedrock": {"default_headers": {"x-zerda-test": "1"}},
    "anthropic-vertex": {"default_headers": {"x-zerda-test": "1"}},
    "vertex": {"http_options": {"headers": {"x-zerda-test": "1"}}},
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def make(server: MockLLMServer, name: str, **options: Any) -> BaseLLMInterface:
    return create_interface(
        name, model="m", max_retries=0, **server.client_options(name), **options
    )


def sent(server: MockLLMServer, name: str) -> int:
    return len(server.requests_for(name))


def wire(name: str) -> str:
    return registry.get(name).wire


def test_every_wire_has_examples() -> None:
    assert set(SDK_OPTION) == set(NATIVE) == set(registry.wires())


# --- construction -----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_option_is_refused_at_construction_naming_the_valid_ones(
    server: MockLLMServer, name: str
) -> None:
    with pytest.raises(TypeError) as caught:
        make(server, name, bogus_option=1)
    message = str(caught.value)
    assert "got unknown option 'bogus_option' (valid: model, provider, api_key," in message
    for valid in SDK_OPTION[wire(name)]:
        assert valid in message


@pytest.mark.parametrize("name", NAMES)
def test_an_option_the_sdk_client_takes_is_accepted(server: MockLLMServer, name: str) -> None:
    llm = make(server, name, **SDK_OPTION[wire(name)])
    server.enqueue(name, text="ok")
    assert llm.generate("hi")["content"] == "ok"


BAD_ARGUMENTS = [
    ({"model": 5}, TypeError, "model must be a string, not int"),
    ({"api_key": 12345678}, TypeError, "api_key must be a string, not int"),
    ({"api_key": b"sk-bytes-secret"}, TypeError, "api_key must be a string, not bytes"),
    ({"base_url": 8080}, TypeError, "base_url must be a string, not int"),
    ({"max_retries": "2"}, TypeError, "max_retries must be an int, not str ('2')"),
    ({"max_retries": 2.0}, TypeError, "max_retries must be an int, not float (2.0)"),
    ({"max_retries": True}, TypeError, "max_retries must be an int, not bool (True)"),
    ({"max_retries": -1}, ValueError, "max_retries must be 0 or more, not -1"),
    ({"timeout": "30"}, TypeError, "timeout must be a number of seconds, not str"),
    ({"timeout": 0}, ValueError, "timeout must be a positive number of seconds, not 0"),
    ({"timeout": -1.5}, ValueError, "timeout must be a positive number of seconds, not -1.5"),
    ({"raise_errors": "yes"}, TypeError, "raise_errors must be True or False, not 'yes'"),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("bad", "error", "message"), BAD_ARGUMENTS, ids=lambda v: repr(v))
def test_programming_errors_in_arguments_fail_at_construction(
    server: MockLLMServer, name: str, bad: dict[str, Any], error: type, message: str
) -> None:
    options = {**server.client_options(name), "max_retries": 0, "model": "m", **bad}
    if wire(name) == "bedrock" and "api_key" in bad:
        # Bedrock signs with AWS credentials: any api_key is refused, whatever its type.
        error, message = ValueError, "signs requests with AWS credentials, not an api_key"
    with pytest.raises(error) as caught:
        create_interface(name, **options)
    assert message in str(caught.value)
    assert "sk-bytes-secret" not in str(caught.value) and "12345678" not in str(caught.value)


# --- per-call timeout -------------------------------------------------------------------


def _generate(llm: BaseLLMInterface, mode: str, **kwargs: Any) -> dict[str, Any]:
    """One call in ``mode``: its result (a stream's done result)."""
    if mode == "generate":
        return llm.generate("hi", **kwargs)
    if mode == "stream":
        return list(llm.stream("hi", **kwargs))[-1]["result"]
    if mode == "generate_async":
        return asyncio.run(llm.generate_async("hi", **kwargs))

    async def drain() -> dict[str, Any]:
        return [e async for e in llm.stream_async("hi", **kwargs)][-1]["result"]

    return asyncio.run(drain())


MODES = ["generate", "stream", "generate_async", "stream_async"]


@pytest.mark.parametrize("name", client_rows())
@pytest.mark.parametrize("mode", MODES)
def test_a_per_call_timeout_is_honoured(
    server: MockLLMServer, interfaces: Callable[..., Any], name: str, mode: str
) -> None:
    """An interface whose own timeout is long gives up on a hanging server after the
    call's ``timeout=``, with a timeout error; the same request body is sent as without.
    One interface per row serves the four modes (tests/conftest.py), as one would."""
    llm = interfaces(name, max_retries=0, timeout=30)
    server.enqueue(name, text="ok")
    assert _generate(llm, mode)["content"] == "ok"
    plain = server.requests_for(name)[-1].body
    server.enqueue_fault("hang", name, delay=5)
    # Any timeout well under the hang's 5 s and the interface's 30 s shows which one was
    # used; a short one keeps the 56 cases quick (a slow connect times out just the same).
    result = _generate(llm, mode, timeout=0.1)
    assert result["error"]["type"] == "timeout", result["error"]
    assert server.requests_for(name)[-1].body == plain  # never in the body (Ollama's was)
    server.enqueue(name, text="after")
    assert _generate(llm, mode, timeout=5)["content"] == "after"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("timeout", ["5", 0, -1, True])
def test_a_bad_per_call_timeout_is_an_invalid_request(
    server: MockLLMServer, name: str, timeout: Any
) -> None:
    llm = make(server, name)
    before = sent(server, name)
    result = llm.generate("hi", timeout=timeout)
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"].startswith("timeout must be a ")
    assert sent(server, name) == before


# --- the **native escape hatch ------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_a_keyword_the_sdk_refuses_is_an_invalid_request_naming_it(
    server: MockLLMServer, name: str, mode: str
) -> None:
    llm = make(server, name)
    before = sent(server, name)
    error = _generate(llm, mode, bogus_argument=1)["error"]
    assert error["type"] == "invalid_request", error
    assert "bogus_argument" in error["message"]
    assert error["provider"] == name
    assert sent(server, name) == before  # refused before anything was sent


# Per wire: a keyword each SDK call takes, and how it shows on the wire.
NATIVE = {
    "openai": ({"seed": 7}, lambda body: body["seed"] == 7),
    "groq": ({"seed": 7}, lambda body: body["seed"] == 7),
    "mistral": ({"random_seed": 7}, lambda body: body["random_seed"] == 7),
    "ollama": ({"keep_alive": "5m"}, lambda body: body["keep_alive"] == "5m"),
    "anthropic": (
        {"metadata": {"user_id": "u1"}},
        lambda body: body["metadata"] == {"user_id": "u1"},
    ),
    "bedrock": (
        {"additionalModelRequestFields": {"top_k": 5}},
        lambda body: body["additionalModelRequestFields"] == {"top_k": 5},
    ),
    "gemini": ({"seed": 7}, lambda body: body["generationConfig"]["seed"] == 7),
    "openai-responses": ({"truncation": "auto"}, lambda body: body["truncation"] == "auto"),
    "azure": ({"seed": 7}, lambda body: body["seed"] == 7),
    "azure-responses": ({"truncation": "auto"}, lambda body: body["truncation"] == "auto"),
    "anthropic-bedrock": (
        {"metadata": {"user_id": "u1"}},
        lambda body: body["metadata"] == {"user_id": "u1"},
    ),
    "anthropic-vertex": (
        {"metadata": {"user_id": "u1"}},
        lambda body: body["metadata"] == {"user_id": "u1"},
    ),
    "vertex": ({"seed": 7}, lambda body: body["generationConfig"]["seed"] == 7),
}


@pytest.mark.parametrize("name", NAMES)
def test_a_keyword_the_sdk_takes_goes_through(server: MockLLMServer, name: str) -> None:
    native, check = NATIVE[wire(name)]
    llm = make(server, name)
    server.enqueue(name, text="ok")
    assert llm.generate("hi", **native)["content"] == "ok"
    assert check(server.requests_for(name)[-1].body)
