"""Record and replay (DESIGN.md §16): one MockLLMServer acts as the upstream, a second one
records through it to a cassette, a third replays the cassette byte for byte (loopback
only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

CHAT = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}
KEY = "sk-secret-test-key-123"


@pytest.fixture
def upstream() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def _raw(server: MockLLMServer, body: object, stream: bool = False) -> bytes:
    headers = {"authorization": f"Bearer {KEY}"}
    url = server.url + "/openai/v1/chat/completions"
    if not stream:
        return httpx.post(url, json=body, headers=headers).content
    with httpx.stream("POST", url, json=body, headers=headers) as resp:
        return b"".join(resp.iter_raw())


def test_record_then_replay_byte_for_byte(upstream: MockLLMServer, tmp_path: Path) -> None:
    cassette = tmp_path / "openai.json"
    upstream.enqueue("openai", text="first")
    upstream.enqueue("openai", text="streamed", fragments=3)
    stream_body = {**CHAT, "stream": True}
    with MockLLMServer(record_to=cassette, upstream={"openai": upstream.base_url("openai")}) as rec:
        recorded_json = _raw(rec, CHAT)
        recorded_stream = _raw(rec, stream_body, stream=True)
    assert json.loads(recorded_json)["choices"][0]["message"]["content"] == "first"
    assert b"streamed"[:3] in recorded_stream
    assert len(upstream.requests) == 2  # both went through to the upstream

    with MockLLMServer(replay_from=cassette) as player:
        # Any order: the stream first, then the JSON call.
        assert _raw(player, stream_body, stream=True) == recorded_stream
        assert _raw(player, CHAT) == recorded_json


def test_cassette_holds_no_credentials(upstream: MockLLMServer, tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    upstream.enqueue("gemini", text="hi")
    path = "/gemini/v1beta/models/gemini-2.5-flash:generateContent?key=" + KEY
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with MockLLMServer(
        record_to=cassette,
        upstream={"openai": upstream.base_url("openai"), "gemini": upstream.base_url("gemini")},
    ) as rec:
        _raw(rec, CHAT)  # nothing queued upstream for openai: its 400 is recorded too
        assert (
            httpx.post(rec.url + path, json=body, headers={"x-goog-api-key": KEY}).status_code
            == 200
        )
    text = cassette.read_text()
    assert KEY not in text
    data = json.loads(text)
    assert [i["provider"] for i in data["interactions"]] == ["openai", "gemini"]
    assert data["interactions"][0]["request"]["headers"]["authorization"] == "<redacted>"
    assert data["interactions"][1]["request"]["query"] == {"key": "<redacted>"}
    assert data["interactions"][0]["response"]["status"] == 400


def test_replay_matches_json_bodies_by_value(upstream: MockLLMServer, tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    upstream.enqueue("openai", text="ok")
    with MockLLMServer(record_to=cassette, upstream={"openai": upstream.base_url("openai")}) as rec:
        _raw(rec, CHAT)
    with MockLLMServer(replay_from=cassette) as player:
        url = player.url + "/openai/v1/chat/completions"
        reordered = json.dumps({"messages": CHAT["messages"], "model": "gpt-test"})
        resp = httpx.post(url, content=reordered, headers={"content-type": "application/json"})
        assert resp.json()["choices"][0]["message"]["content"] == "ok"


def test_unmatched_request_says_no_recording_matched(
    upstream: MockLLMServer, tmp_path: Path
) -> None:
    cassette = tmp_path / "c.json"
    upstream.enqueue("openai", text="ok")
    with MockLLMServer(record_to=cassette, upstream={"openai": upstream.base_url("openai")}) as rec:
        _raw(rec, CHAT)
    with MockLLMServer(replay_from=cassette) as player:
        client = openai.OpenAI(**player.sdk_client_kwargs("openai"), max_retries=0)
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model="other", messages=[{"role": "user", "content": "x"}]
            )
    assert "no recording matched POST /v1/chat/completions" in str(info.value)


def test_zerda_round_trip_through_record_and_replay(
    upstream: MockLLMServer, tmp_path: Path
) -> None:
    """The real SDK behind Zerda, recorded once, replayed offline with the same result."""
    cassette = tmp_path / "anthropic.json"
    upstream.enqueue("anthropic", text="Bonjour", usage={"input_tokens": 3, "output_tokens": 2})
    with MockLLMServer(
        record_to=cassette, upstream={"anthropic": upstream.base_url("anthropic")}
    ) as rec:
        llm = create_interface(
            "anthropic:claude-test", max_retries=0, **rec.client_options("anthropic")
        )
        recorded = llm.generate("Say hello in French", max_tokens=20)
    with MockLLMServer(replay_from=cassette) as player:
        llm = create_interface(
            "anthropic:claude-test", max_retries=0, **player.client_options("anthropic")
        )
        replayed = llm.generate("Say hello in French", max_tokens=20)
    assert recorded["content"] == replayed["content"] == "Bonjour"
    assert replayed["usage"] == recorded["usage"]


def test_record_and_replay_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="record_to and upstream go together"):
        MockLLMServer(record_to=tmp_path / "c.json")
    with pytest.raises(ValueError, match="cannot be used together"):
        MockLLMServer(record_to=tmp_path / "c.json", upstream={}, replay_from=tmp_path / "c.json")
