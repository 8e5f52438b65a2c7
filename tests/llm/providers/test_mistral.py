"""MistralInterface against MockLLMServer and the real ``mistralai`` SDK: the shared
contract (openai_like.py) with Mistral's own data (``tool_choice="any"``, 9-character ids,
what the SDK adds to bodies), its own retry loop, and every recorded Mistral exchange."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from tests.llm.providers.histories import TOOLS, history_from
from tests.llm.providers.openai_like import KEY, OpenAILikeContract, check_recorded, recorded_cases
from zerda.llm.providers import create_interface
from zerda.llm.providers.mistral import MistralInterface
from zerda.testing import MockLLMServer


class TestMistral(OpenAILikeContract):
    provider = "mistral"
    max_tokens_field = "max_tokens"
    required_choice = "any"
    body_extra: ClassVar[dict[str, Any]] = {"stream": False}  # the SDK always sends it
    mistral_messages = True
    native_example: ClassVar[dict[str, Any]] = {"random_seed": 7}
    id_pattern = r"[a-zA-Z0-9]{9}"
    history_ids: ClassVar[dict[str, tuple[str, str]]] = {
        "mistral": ("Ab3dE6gH9", "Zy1xW4vU7"),  # Mistral's own ids are kept
        "anthropic": ("tBziUm3pE", "2CMHEbTuk"),  # foreign ids mapped, deterministically
        "gemini": ("Cgl2RAatz", "h82cqbcq6"),  # id-less calls: from their position
        "ollama": ("Cgl2RAatz", "h82cqbcq6"),
    }

    @pytest.mark.parametrize("fixture", recorded_cases("mistral"))
    def test_recorded(self, server: MockLLMServer, llm: Any, fixture: dict[str, Any]) -> None:
        check_recorded(llm, server, fixture, "mistral")

    def test_foreign_ids_map_the_same_on_every_turn(self, server: MockLLMServer) -> None:
        first = self.body_for(server, history_from("bedrock"), tools=TOOLS)
        second = self.body_for(server, history_from("bedrock"), tools=TOOLS)
        assert first == second
        call_ids = [c["id"] for c in first["messages"][2]["tool_calls"]]
        assert [m["tool_call_id"] for m in first["messages"][3:5]] == call_ids

    def test_500_retried_then_success(self, server: MockLLMServer) -> None:
        server.enqueue_error(503, self.provider, message="busy", retry_after=0.05)
        server.enqueue(self.provider, text="done")
        assert self.make(server, max_retries=1).generate("hi")["content"] == "done"
        assert len(server.requests_for(self.provider)) == 2

    def test_400_not_retried(self, server: MockLLMServer) -> None:
        server.enqueue_error(400, self.provider, message="bad")
        server.enqueue(self.provider, text="never")
        assert self.make(server, max_retries=3).generate("hi")["error"]["type"] == "invalid_request"
        assert len(server.requests_for(self.provider)) == 1

    def test_dropped_connection_retried(self, server: MockLLMServer, monkeypatch: Any) -> None:
        monkeypatch.setattr("zerda.llm._retry.INITIAL_RETRY_DELAY", 0.01)
        server.enqueue_fault("drop", self.provider)
        server.enqueue(self.provider, text="done")
        assert self.make(server, max_retries=1).generate("hi")["content"] == "done"

    async def test_stream_async_retries_opening(self, server: MockLLMServer) -> None:
        server.enqueue_error(429, self.provider, message="slow", retry_after=0.05)
        server.enqueue(self.provider, text="done")
        events = [e async for e in self.make(server, max_retries=1).stream_async("hi")]
        assert events[-1]["result"]["content"] == "done"


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)
    llm = create_interface("mistral:mistral-small-latest")
    assert isinstance(llm, MistralInterface)
    assert llm.api_key == KEY and KEY not in repr(llm)


def test_clients_built_with_options() -> None:
    llm = MistralInterface("m", api_key=KEY, base_url="http://127.0.0.1:9", timeout=3)
    assert llm.client is llm.client
    for client in (llm.client, llm.async_client):
        assert client.sdk_configuration.timeout_ms == 3000
        assert client.sdk_configuration.server_url == "http://127.0.0.1:9"


def test_ready_client_is_used_for_both() -> None:
    from mistralai.client import Mistral

    ready = Mistral(api_key="k")
    llm = MistralInterface("m", client=ready)
    assert llm.client is ready and llm.async_client is ready
