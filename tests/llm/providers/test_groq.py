"""GroqInterface against MockLLMServer and the real ``groq`` SDK: the shared contract
(openai_like.py) with Groq's own data, and every recorded Groq exchange."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from tests.llm.providers.openai_like import KEY, OpenAILikeContract, check_recorded, recorded_cases
from zerda.llm.wires.groq.interface import GroqInterface
from zerda.testing import MockLLMServer


class TestGroq(OpenAILikeContract):
    provider = "groq"
    history_ids: ClassVar[dict[str, tuple[str, str]]] = {
        **OpenAILikeContract.history_ids,
        "groq": ("call_9x8y7z6w5v4u3t2s1r0q9p8o", "call_n7m6l5k4j3i2h1g0f9e8d7c6"),
    }

    @pytest.mark.parametrize("fixture", recorded_cases("groq"))
    def test_recorded(self, server: MockLLMServer, llm: Any, fixture: dict[str, Any]) -> None:
        check_recorded(llm, server, fixture, "groq")


def test_client_built_once_with_options() -> None:
    llm = GroqInterface("m", api_key=KEY, base_url="http://127.0.0.1:9", timeout=3, max_retries=4)
    client = llm.client
    assert llm.client is client
    # The SDK's own retries are off: Zerda retries (max_retries=4) with one policy.
    assert (llm.max_retries, client.max_retries, client.timeout, str(client.base_url)) == (
        4,
        0,
        3,
        "http://127.0.0.1:9",
    )


def test_ready_clients_are_used() -> None:
    import groq

    # max_retries=0: a client with retries on would be copied with them off.
    sync = groq.Groq(api_key="k", max_retries=0)
    async_client = groq.AsyncGroq(api_key="k", max_retries=0)
    llm = GroqInterface("m", client=sync, async_client=async_client)
    assert llm.client is sync and llm.async_client is async_client
