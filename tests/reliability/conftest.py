"""Fixtures shared by the reliability suite (faults, fuzzing, secrets,
concurrency), run against every provider through MockLLMServer."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.reliability._support import Interfaces
from zerda.testing import MockLLMServer

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
    ("zerda.llm.wires.ollama.interface", "INITIAL_RETRY_DELAY"),
    ("zerda.llm.wires.gemini.interface", "INITIAL_RETRY_DELAY"),
    ("zerda.llm.wires.mistral.interface", "_BACKOFF_START"),
    ("zerda.llm.wires.mistral.interface", "INITIAL_RETRY_DELAY"),
)


@pytest.fixture(scope="module")
def module_server() -> Iterator[MockLLMServer]:
    """One server for a whole module (fuzzing, concurrency): starting one per example
    would dominate the run time."""
    with MockLLMServer() as server:
        yield server


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


@pytest.fixture
def fresh() -> Iterator[Callable[[MockLLMServer], Interfaces]]:
    """Interfaces built for one test (async tests: their clients belong to its event
    loop), on the server each is given, closed afterwards."""
    made: list[Interfaces] = []

    def on(server: MockLLMServer) -> Interfaces:
        made.append(Interfaces(server))
        return made[-1]

    yield on
    for interfaces in made:
        interfaces.close()
