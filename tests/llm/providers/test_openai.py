"""OpenAIInterface against MockLLMServer and the real ``openai`` SDK: the shared contract
(openai_like.py: exact bodies, native stop reasons, broken argument JSON) with OpenAI's own
data (what the contract in contract.py does not cover), and
every recorded exchange (OpenAI's, and Ollama's OpenAI-compatible ``/v1/chat/completions``
ones, which this interface serves too)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.providers.openai_like import KEY, OpenAILikeContract, check_recorded, recorded_cases
from zerda.llm.providers import create_interface
from zerda.llm.wires.openai.interface import OpenAIInterface
from zerda.testing import MockLLMServer


class TestOpenAI(OpenAILikeContract):
    provider = "openai"

    @pytest.mark.parametrize("fixture", recorded_cases("openai"))
    def test_recorded(self, server: MockLLMServer, llm: Any, fixture: dict[str, Any]) -> None:
        check_recorded(llm, server, fixture, "openai")

    @pytest.mark.parametrize("fixture", recorded_cases("ollama", path="/v1/chat/completions"))
    def test_recorded_ollama_openai_compatible(
        self, server: MockLLMServer, fixture: dict[str, Any]
    ) -> None:
        llm = self.make(server, base_url=server.base_url("ollama") + "/v1")
        check_recorded(llm, server, fixture, "ollama")


def test_client_options_reach_the_sdk() -> None:
    with MockLLMServer() as server:
        server.enqueue("openai", text="ok")
        llm = create_interface(
            "openai:m", default_headers={"X-Zerda-Test": "1"}, **server.client_options("openai")
        )
        assert llm.generate("hi")["content"] == "ok"
        assert server.last_request("openai").headers["x-zerda-test"] == "1"


def test_client_built_once_with_options() -> None:
    llm = OpenAIInterface(
        "m", api_key=KEY, base_url="http://127.0.0.1:9/v1", timeout=3, max_retries=4
    )
    client = llm.client
    assert llm.client is client
    # The SDK's own retries are off: Zerda retries (max_retries=4) with one policy.
    assert (llm.max_retries, client.max_retries, client.timeout, str(client.base_url)) == (
        4,
        0,
        3,
        "http://127.0.0.1:9/v1/",
    )
    assert llm.async_client is llm.async_client


def test_ready_clients_are_used() -> None:
    import openai

    # max_retries=0: a client with retries on would be copied with them off.
    sync = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0)
    async_client = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0)
    llm = OpenAIInterface("m", client=sync, async_client=async_client)
    assert llm.client is sync and llm.async_client is async_client
