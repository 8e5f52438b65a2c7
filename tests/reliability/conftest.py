"""Fixtures and helpers shared by the reliability suite (faults, fuzzing, secrets,
concurrency), run against every provider through MockLLMServer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import BaseLLMInterface, create_interface
from zerda.testing import MockLLMServer

PROVIDERS = ["openai", "groq", "mistral", "ollama", "anthropic", "bedrock", "gemini"]
MODEL = "m"

# Environment variables the SDKs read by themselves: a developer's settings must not
# change what these tests see (a real key, a proxy, another host).
_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "OLLAMA_HOST",
    "OLLAMA_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_MAX_ATTEMPTS",
    "AWS_RETRY_MODE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def make_llm(server: MockLLMServer, provider: str, **options: Any) -> BaseLLMInterface:
    """An interface on ``server`` with small retry and timeout settings unless given."""
    options = {"max_retries": 1, "timeout": 5.0, **server.client_options(provider), **options}
    return create_interface(provider, model=MODEL, **options)


@pytest.fixture
def short_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff without a Retry-After header starts at 0.5 s (Stainless SDKs, Zerda's own
    retry loops) or up to 1 s (botocore, throttling): shortened to ~10 ms so that faults
    that carry no Retry-After (dropped connections, timeouts) stay fast. Only the delay
    changes: which failures are retried, and how often, is what the tests check."""
    import importlib

    from botocore.retries import standard

    for module_name, name in _BACKOFF_CONSTANTS:
        module = importlib.import_module(module_name)
        # The providers are being reworked: patch the constants that exist now.
        if hasattr(module, name):
            monkeypatch.setattr(module, name, 0.01)
    monkeypatch.setattr(standard.ExponentialBackoff, "_get_base_scale", lambda self, ctx: 0.01)


_BACKOFF_CONSTANTS = (
    ("openai._base_client", "INITIAL_RETRY_DELAY"),
    ("groq._base_client", "INITIAL_RETRY_DELAY"),
    ("anthropic._base_client", "INITIAL_RETRY_DELAY"),
    ("zerda.llm._retry", "INITIAL_RETRY_DELAY"),
    ("zerda.llm.providers.ollama", "INITIAL_RETRY_DELAY"),
    ("zerda.llm.providers.gemini", "INITIAL_RETRY_DELAY"),
    ("zerda.llm.providers.mistral", "_BACKOFF_START"),
    ("zerda.llm.providers.mistral", "INITIAL_RETRY_DELAY"),
)


@pytest.fixture(scope="module")
def module_server() -> Iterator[MockLLMServer]:
    """One server for a whole module (fuzzing, concurrency): starting one per example
    would dominate the run time."""
    with MockLLMServer() as server:
        yield server


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


@pytest.fixture(scope="module")
def llms(module_server: MockLLMServer) -> Iterator[Interfaces]:
    interfaces = Interfaces(module_server)
    yield interfaces
    interfaces.close()


@pytest.fixture
def server(module_server: MockLLMServer) -> MockLLMServer:
    """The module's server with empty queues, no defaults and an empty request log."""
    module_server.reset()
    return module_server
