"""MistralInterface against MockLLMServer and the real ``mistralai`` SDK: the shared
contract (openai_like.py) with Mistral's own data (``tool_choice="any"``, 9-character ids,
what the SDK adds to bodies) and every recorded Mistral exchange; its retries (Zerda's own
loop) are the contract's (contract.py)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from tests.llm.providers.openai_like import KEY, OpenAILikeContract, check_recorded, recorded_cases
from zerda.llm.wires.mistral.interface import MistralInterface
from zerda.testing import MockLLMServer


class TestMistral(OpenAILikeContract):
    provider = "mistral"
    max_tokens_field = "max_tokens"
    required_choice = "any"
    body_extra: ClassVar[dict[str, Any]] = {"stream": False}  # the SDK always sends it
    mistral_messages = True
    native_example: ClassVar[dict[str, Any]] = {"random_seed": 7}
    history_ids: ClassVar[dict[str, tuple[str, str]]] = {
        "mistral": ("Ab3dE6gH9", "Zy1xW4vU7"),  # Mistral's own ids are kept
        "anthropic": ("tBziUm3pE", "2CMHEbTuk"),  # foreign ids mapped, deterministically
        "gemini": ("Cgl2RAatz", "h82cqbcq6"),  # id-less calls: from their position
        "ollama": ("Cgl2RAatz", "h82cqbcq6"),
    }

    @pytest.mark.parametrize("fixture", recorded_cases("mistral"))
    def test_recorded(self, server: MockLLMServer, llm: Any, fixture: dict[str, Any]) -> None:
        check_recorded(llm, server, fixture, "mistral")


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
