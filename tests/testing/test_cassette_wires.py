"""Record and replay on more wires (issue 16): one MockLLMServer is the upstream, a second
records through it, a third replays the cassette. Binary AWS event streams come back byte
for byte, Zerda's streams replay to the same events, every provider's credential header is
redacted in the file, and a request with no recording fails loudly through Zerda too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

SECRET = "sk-SECRET-cassette-0042"
CALL = {"id": "tooluse_abc", "name": "get_time", "arguments": {"city": "Oslo"}}
TOOLS = [{"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}]


@pytest.fixture
def upstream() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def _recorder(cassette: Path, upstream: MockLLMServer, *providers: str) -> MockLLMServer:
    return MockLLMServer(record_to=cassette, upstream={p: upstream.base_url(p) for p in providers})


def _raw_stream(server: MockLLMServer, path: str, body: dict[str, Any]) -> bytes:
    headers = {"authorization": f"Bearer {SECRET}"}
    with httpx.stream("POST", server.url + path, json=body, headers=headers) as resp:
        return b"".join(resp.iter_raw())


def test_bedrock_event_stream_replays_byte_for_byte(
    upstream: MockLLMServer, tmp_path: Path
) -> None:
    cassette = tmp_path / "bedrock.json"
    upstream.enqueue("bedrock", text="Hello there", tool_calls=[CALL], fragments=3)
    path = "/bedrock/model/m/converse-stream"
    body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    with _recorder(cassette, upstream, "bedrock") as rec:
        recorded = _raw_stream(rec, path, body)
    with MockLLMServer(replay_from=cassette) as player:
        assert _raw_stream(player, path, body) == recorded
    assert b":event-type" in recorded and b"contentBlockDelta" in recorded


@pytest.mark.parametrize("provider", ["bedrock", "gemini", "anthropic", "mistral", "ollama"])
def test_zerda_stream_replays_to_the_same_events(
    upstream: MockLLMServer, tmp_path: Path, provider: str
) -> None:
    cassette = tmp_path / f"{provider}.json"
    call = {**CALL, "id": "abcDEF123"}  # an id every provider takes back
    upstream.enqueue(provider, text="Checking.", tool_calls=[call], fragments=2)
    with _recorder(cassette, upstream, provider) as rec:
        llm = create_interface(provider, model="m", max_retries=0, **rec.client_options(provider))
        recorded = list(llm.stream("What time is it in Oslo?", tools=TOOLS))
    with MockLLMServer(replay_from=cassette) as player:
        llm = create_interface(
            provider, model="m", max_retries=0, **player.client_options(provider)
        )
        replayed = list(llm.stream("What time is it in Oslo?", tools=TOOLS))
    assert replayed == recorded
    assert recorded[-1]["result"]["tool_calls"] == [call]


# Each provider's credential header as its SDK sends it (Bedrock: SigV4 in authorization).
SECRET_HEADERS = {
    "openai": ("/openai/v1/chat/completions", "authorization"),
    "anthropic": ("/anthropic/v1/messages", "x-api-key"),
    "gemini": ("/gemini/v1beta/models/m:generateContent", "x-goog-api-key"),
    "bedrock": ("/bedrock/model/m/converse", "x-amz-security-token"),
}


def test_every_credential_header_is_redacted(upstream: MockLLMServer, tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    with _recorder(cassette, upstream, *SECRET_HEADERS) as rec:
        for path, header in SECRET_HEADERS.values():
            httpx.post(rec.url + path, json={"model": "m"}, headers={header: SECRET})
    text = cassette.read_text()
    assert SECRET not in text
    interactions = json.loads(text)["interactions"]
    assert [
        (i["provider"], i["request"]["headers"].get(header))
        for i, (_, header) in zip(interactions, SECRET_HEADERS.values(), strict=True)
    ] == [(p, "<redacted>") for p in SECRET_HEADERS]


def test_zerda_gets_a_clear_error_for_a_request_with_no_recording(
    upstream: MockLLMServer, tmp_path: Path
) -> None:
    cassette = tmp_path / "c.json"
    upstream.enqueue("openai", text="ok")
    with _recorder(cassette, upstream, "openai") as rec:
        llm = create_interface("openai", model="m", max_retries=0, **rec.client_options("openai"))
        assert llm.generate("recorded")["content"] == "ok"
    with MockLLMServer(replay_from=cassette) as player:
        llm = create_interface(
            "openai", model="m", max_retries=0, **player.client_options("openai")
        )
        got = llm.generate("never recorded")
    assert got["stop_reason"] == "error"
    assert got["error"] == {
        "type": "invalid_request",
        "message": "MockLLMServer: no recording matched POST /v1/chat/completions for openai "
        f"in {cassette}",
        "status_code": 400,
        "provider": "openai",
        "retryable": False,
    }
