"""Issue 34 item 18: recording through ``MockLLMServer(record_to=..., upstream=...)`` works for
every row whose base URL ends in ``/v1`` (the OpenAI-compatible services, the Responses API),
as it does for ``openai``: the request reaches the upstream at the path after its base URL
(never ``.../v1/v1/...``), the answer comes back, and the cassette replays it.

A second local MockLLMServer acts as the upstream, given as the base URL its SDK would use."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from zerda.llm import create_interface, registry
from zerda.testing import MockLLMServer


def _v1_rows() -> list[str]:
    """The rows whose base URL ends in /v1: the mock's (what the SDK is pointed at while
    recording) or the registry's default (the real upstream)."""
    probe = MockLLMServer()
    return [
        name
        for name, row in registry.REGISTRY.items()
        if probe.base_url(name).endswith("/v1") or (row.default_base_url or "").endswith("/v1")
    ]


V1_ROWS = _v1_rows()


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockLLMServer]:
    with MockLLMServer() as server:
        yield server


def test_the_rows_the_issue_names_are_covered() -> None:
    named = {"openai-responses", "openrouter", "deepseek", "xai", "together", "fireworks"}
    assert named | {"cerebras", "vllm", "lmstudio", "openai"} <= set(V1_ROWS)


@pytest.mark.parametrize("provider", V1_ROWS)
def test_a_v1_row_records_and_replays_like_openai(
    upstream: MockLLMServer, tmp_path: Path, provider: str
) -> None:
    upstream.reset()
    upstream.enqueue(provider, text=f"recorded for {provider}")
    cassette = tmp_path / f"{provider}.json"
    base = upstream.base_url(provider)
    with MockLLMServer(record_to=cassette, upstream={provider: base}) as recorder:
        llm = create_interface(
            provider, model="m", max_retries=0, **recorder.client_options(provider)
        )
        recorded = llm.generate("hi")
    assert recorded.get("error") is None, recorded.get("error")
    assert recorded["content"] == f"recorded for {provider}"
    [sent] = upstream.requests_for(provider)
    assert "/v1/v1/" not in sent.path
    assert sent.path == recorder.requests_for(provider)[0].path  # the same endpoint upstream
    [interaction] = json.loads(cassette.read_text(encoding="utf-8"))["interactions"]
    assert interaction["response"]["status"] == 200

    with MockLLMServer(replay_from=cassette) as player:
        llm = create_interface(
            provider, model="m", max_retries=0, **player.client_options(provider)
        )
        replayed = llm.generate("hi")
    assert replayed["content"] == f"recorded for {provider}"
