"""Every recorded exchange of the seven providers (../shared/fixtures/recorded), served
verbatim by MockLLMServer through Zerda: ``result["reasoning"]`` equals the recording's
``derived.reasoning_text`` ("" and None alike) and ``result["usage"]`` its
``derived.usage_norm`` (None when the response reports no usage), from generate (JSON
bodies) and from stream (SSE, NDJSON, AWS event streams); a stream's reasoning deltas join
to its done result's reasoning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer

RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"
FOLDERS = ("openai", "groq", "mistral", "ollama", "anthropic", "bedrock", "gemini")


def _files() -> list[Any]:
    files = [f for folder in FOLDERS for f in sorted((RECORDED / folder).glob("*.json"))]
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem[-70:]}") for f in files]


def _go_sdk_format(fixture: dict[str, Any]) -> bool:
    """langchaingo's Gemini recordings asked for integer enums, which only the Go SDK reads."""
    return "enum-encoding=int" in str((fixture["request"].get("query") or {}).get("$alt", ""))


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def interfaces() -> dict[tuple[str, str, bool], Any]:
    """Interfaces made on first use, one per wire and model (client set-up dominates)."""
    return {}


def _interface(
    server: MockLLMServer, cache: dict[tuple[str, str, bool], Any], fixture: dict[str, Any]
) -> Any:
    """The Zerda interface that speaks the recording's wire protocol; Ollama's
    OpenAI-compatible ``/v1`` recordings are served through the OpenAI interface."""
    provider = fixture["provider"]
    path = fixture["request"]["path"]
    model = fixture.get("model") or "m"
    if provider == "bedrock":
        model = unquote(path.split("/")[2])
    compatible = provider == "ollama" and path.startswith("/v1/")
    key = (provider, model, compatible)
    if key not in cache:
        if compatible:
            base = server.base_url("ollama") + "/v1"
            cache[key] = create_interface(
                "openai", model, base_url=base, api_key="k", max_retries=0
            )
        else:
            options = server.client_options(provider)
            cache[key] = create_interface(provider, model, **options, max_retries=0)
    return cache[key]


def _expected_usage(fixture: dict[str, Any]) -> dict[str, Any] | None:
    norm = fixture["derived"]["usage_norm"]
    return norm if any(v is not None for v in norm.values()) else None


@pytest.mark.parametrize("path", _files())
def test_reasoning_and_usage_match_the_recording(
    server: MockLLMServer, interfaces: dict[tuple[str, str, bool], Any], path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    if _go_sdk_format(fixture):
        pytest.skip("recorded with integer enums for the Go SDK; google-genai reads names")
    llm = _interface(server, interfaces, fixture)
    server.reset()
    server.enqueue_recorded(fixture, provider=fixture["provider"])
    if fixture["streaming"]:
        events = list(llm.stream("recorded"))
        result = events[-1]["result"]
        deltas = "".join(e["text"] for e in events if e["type"] == "reasoning")
        assert deltas == (result["reasoning"] or "")
    else:
        result = llm.generate("recorded")
    failed = fixture["response"]["status"] >= 400 or fixture["derived"].get("error")
    if failed:
        assert result["stop_reason"] == "error"
        assert result["usage"] is None
        return
    assert result["reasoning"] == (fixture["derived"]["reasoning_text"] or None)
    usage = result["usage"]
    if usage is not None and "server_tool_requests" in usage:
        # The sixth, optional key (DESIGN §18): Anthropic's usage.server_tool_use counts
        # above zero, beside the five of derived.usage_norm.
        counts = fixture["derived"]["usage"]["server_tool_use"]
        expected = {k.removesuffix("_requests"): v for k, v in counts.items() if v}
        assert usage["server_tool_requests"] == expected
        usage = {k: v for k, v in usage.items() if k != "server_tool_requests"}
    assert usage == _expected_usage(fixture)
