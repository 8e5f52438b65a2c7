"""Recorded real exchanges (../shared/fixtures/recorded) served verbatim through Zerda:

- every recorded stream of every provider: each call's tool_call_delta fragments join to
  exactly its final arguments and come before its tool_call event, indices count calls in
  order, and the text deltas join to the content;
- every recorded structured-output exchange (found by its request body: response_format,
  output_config.format, outputConfig.textFormat, responseJsonSchema / responseMimeType,
  Ollama's format) parses, with the schema the recording asked for, to the answer it holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm.tools import _parse_json_arguments
from zerda.testing import MockLLMServer

RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"
FOLDERS = ("openai", "groq", "mistral", "ollama", "anthropic", "bedrock", "gemini")


def _load() -> list[tuple[str, dict[str, Any]]]:
    if not RECORDED.is_dir():
        return []
    out = []
    for folder in FOLDERS:
        for file in sorted((RECORDED / folder).glob("*.json")):
            out.append((f"{folder}/{file.stem}", json.loads(file.read_text(encoding="utf-8"))))
    return out


FIXTURES = _load()


def _provider(fixture: dict[str, Any]) -> str:
    """The Zerda provider that speaks the recording's wire (Ollama's /v1 is OpenAI's)."""
    provider = str(fixture["provider"])
    if provider == "ollama" and fixture["request"]["path"].startswith("/v1/"):
        return "openai"
    return provider


def _replayable(fixture: dict[str, Any]) -> bool:
    query = str((fixture["request"].get("query") or {}).get("$alt", ""))
    # langchaingo's Gemini recordings asked for integer enums, which google-genai refuses.
    return fixture["response"]["status"] == 200 and "enum-encoding=int" not in query


def _params(fixtures: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    if not fixtures:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [pytest.param(f, id=name) for name, f in fixtures]


STREAMS = [(n, f) for n, f in FIXTURES if f.get("streaming") and _replayable(f)]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def _llm(interfaces: Callable[..., Any], fixture: dict[str, Any]) -> Any:
    """The recording's provider and model, made once per module (tests/conftest.py)."""
    return interfaces(_provider(fixture), fixture.get("model") or "test-model", max_retries=0)


def _check_deltas(events: list[dict[str, Any]]) -> int:
    """The §7 rules on one stream's events; returns how many calls were checked."""
    deltas: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    completed: set[int] = set()
    for position, event in enumerate(events):
        if event["type"] == "tool_call_delta":
            assert event["index"] not in completed, "a delta after its call completed"
            assert isinstance(event["arguments"], str)
            deltas.setdefault(event["index"], []).append((position, event))
        elif event["type"] == "tool_call":
            index = _match(event["tool_call"], deltas, completed)
            completed.add(index)
            joined = "".join(d["arguments"] for _, d in deltas[index])
            arguments = event["tool_call"]["arguments"]
            assert _parse_json_arguments(joined) == arguments
            if set(arguments) != {"_raw"}:
                assert json.loads(joined) == arguments
    assert sorted(deltas) == list(range(len(deltas)))  # 0, 1, ... in order of appearance
    firsts = [deltas[i][0][0] for i in sorted(deltas)]
    assert firsts == sorted(firsts)
    for items in deltas.values():
        assert items[0][1]["name"]  # the first delta carries the name
    assert completed == set(deltas)
    return len(completed)


def _match(call: dict[str, Any], deltas: dict[int, Any], completed: set[int]) -> int:
    """The index of the open call a tool_call event completes (same id and name)."""
    for index in sorted(deltas):
        first = deltas[index][0][1]
        if index not in completed and (first["id"], first["name"]) == (call["id"], call["name"]):
            return index
    raise AssertionError(f"tool_call {call} had no tool_call_delta before it")


@pytest.mark.parametrize("fixture", _params(STREAMS))
def test_recorded_stream_deltas_join_to_the_final_calls(
    server: MockLLMServer, interfaces: Callable[..., Any], fixture: dict[str, Any]
) -> None:
    server.enqueue_recorded(fixture, provider=_provider(fixture))
    events = list(_llm(interfaces, fixture).stream("recorded"))
    result = events[-1]["result"]
    _check_deltas(events)
    announced = [e["tool_call"] for e in events if e["type"] == "tool_call"]
    assert announced == result["tool_calls"]
    text = "".join(e["text"] for e in events if e["type"] == "text")
    assert (text or None) == result["content"]


def test_recorded_streams_include_calls() -> None:
    # The rule above is exercised on real calls, not only on text streams.
    if not STREAMS:
        pytest.skip("no recordings")
    with_calls = [n for n, f in STREAMS if f["derived"].get("tool_calls")]
    assert len(with_calls) >= 50


# --- structured output ----------------------------------------------------------------------


def _asked_format(fixture: dict[str, Any]) -> Any:
    """The response_format the recording asked for (a Zerda response_format), or None."""
    body = fixture["request"].get("body")
    if not isinstance(body, dict):
        return None
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        return "json"
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return {"name": fmt["json_schema"]["name"], "schema": fmt["json_schema"]["schema"]}
    output = (body.get("output_config") or {}).get("format")
    if isinstance(output, dict):
        return {"name": "answer", "schema": output["schema"]}
    text_format = (body.get("outputConfig") or {}).get("textFormat")
    if isinstance(text_format, dict):
        definition = text_format["structure"]["jsonSchema"]
        return {"name": definition["name"], "schema": json.loads(definition["schema"])}
    config = body.get("generationConfig") or {}
    if "responseJsonSchema" in config:
        return {"name": "answer", "schema": config["responseJsonSchema"]}
    if config.get("responseMimeType") == "application/json":
        return "json"
    if fixture["request"]["path"] == "/api/chat" and body.get("format"):
        fmt = body["format"]
        return "json" if fmt == "json" else {"name": "answer", "schema": fmt}
    return None


STRUCTURED = [(n, f) for n, f in FIXTURES if _replayable(f) and _asked_format(f) is not None]


@pytest.mark.parametrize("fixture", _params(STRUCTURED))
def test_recorded_structured_output_parses(
    server: MockLLMServer, interfaces: Callable[..., Any], fixture: dict[str, Any]
) -> None:
    server.enqueue_recorded(fixture, provider=_provider(fixture))
    llm = _llm(interfaces, fixture)
    kwargs = {"response_format": _asked_format(fixture), "structured_output": "native"}
    if fixture.get("streaming"):
        events = list(llm.stream("recorded", **kwargs))
        result = events[-1]["result"]
    else:
        events, result = [], llm.generate("recorded", **kwargs)
    derived = fixture["derived"]
    if derived.get("tool_calls"):  # a tool-calling turn before the answer
        assert result["parsed"] is None and "parse_error" not in result
        return
    assert result["content"] == derived["text"]
    assert "parse_error" not in result
    assert result["parsed"] == json.loads(derived["text"])
    partials = [e["partial"] for e in events if e["type"] == "partial"]
    if events:
        assert partials[-1] == result["parsed"]
        assert [e["type"] for e in events].index("partial") < len(events) - 1


def test_every_provider_has_recorded_structured_output() -> None:
    if not STRUCTURED:
        pytest.skip("no recordings")
    assert {_provider(f) for _, f in STRUCTURED} >= {
        "openai",
        "groq",
        "ollama",
        "anthropic",
        "bedrock",
        "gemini",
    }
