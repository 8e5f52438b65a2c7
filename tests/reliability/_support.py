"""Helpers shared by the reliability suite: the providers, and interfaces on a
MockLLMServer (fixtures live in conftest.py)."""

from __future__ import annotations

from typing import Any

from zerda.llm import BaseLLMInterface, create_interface
from zerda.testing import MockLLMServer

PROVIDERS = ["openai", "groq", "mistral", "ollama", "anthropic", "bedrock", "gemini"]
MODEL = "m"


def make_llm(server: MockLLMServer, provider: str, **options: Any) -> BaseLLMInterface:
    """An interface on ``server`` with small retry and timeout settings unless given."""
    options = {"max_retries": 1, "timeout": 5.0, **server.client_options(provider), **options}
    return create_interface(provider, model=MODEL, **options)


class Interfaces:
    """Interfaces on one server, built once per provider and options: building an SDK
    client (boto3's above all) costs more than the calls a test makes. Sync use only: an
    async client is bound to the event loop it first ran on, and each async test has its
    own loop."""

    def __init__(self, server: MockLLMServer) -> None:
        self.server = server
        self._made: dict[tuple[str, tuple[tuple[str, Any], ...]], BaseLLMInterface] = {}

    def get(self, provider: str, **options: Any) -> BaseLLMInterface:
        key = (provider, tuple(sorted(options.items())))
        if key not in self._made:
            self._made[key] = make_llm(self.server, provider, **options)
        return self._made[key]

    def close(self) -> None:
        for llm in self._made.values():
            close = getattr(llm, "close", None)
            if close is not None:
                close()
