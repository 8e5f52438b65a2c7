"""Every recorded answer that used a hosted tool (feature ``server_tool`` in
../shared/fixtures/recorded), served verbatim through Zerda, on every wire that has them:
``result["server_tool_calls"]`` lists what ``derived.server_tool_calls`` lists (the same ids
and native names where the recording has them, in order), generate for JSON bodies and
stream for streams (its events equal to its result); the answer's assistant message then goes
back to the same provider (its native blocks, checked by the strict mock as the API checks
them) and to another provider (as text).

The interfaces are made once per module and model (the ``interfaces`` fixture, tests/conftest.py):
building an SDK client per answer would cost more than reading it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from zerda.testing import MockLLMServer

RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"
OTHER = "openai"  # a provider that takes no other wire's blocks: it gets the text


def _files() -> list[Any]:
    files = []
    for path in sorted(RECORDED.glob("*/*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        if "server_tool" in fixture.get("features", []) and fixture["response"]["status"] == 200:
            files.append(pytest.param(path, id=f"{path.parent.name}/{path.stem[-60:]}"))
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return files


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:  # strict: follow-ups are checked as the APIs check them
        yield srv


def _interface(interfaces: Callable[..., Any], provider: str, model: str) -> Any:
    return interfaces(provider, model, max_retries=0, raise_errors=True)


def _recorded_interface(interfaces: Callable[..., Any], fixture: dict[str, Any]) -> Any:
    provider = fixture["provider"]
    model = fixture.get("model") or "m"
    if provider == "bedrock":
        model = unquote(fixture["request"]["path"].split("/")[2])
    return _interface(interfaces, provider, model)


def _answer(server: MockLLMServer, llm: Any, fixture: dict[str, Any]) -> dict[str, Any]:
    server.reset()
    server.enqueue_recorded(fixture, provider=fixture["provider"])
    if not fixture["streaming"]:
        return llm.generate("recorded")
    events = list(llm.stream("recorded"))
    result = events[-1]["result"]
    calls = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
    cited = [e["citation"] for e in events if e["type"] == "citation"]
    assert calls == result.get("server_tool_calls", [])
    assert cited == result.get("citations", [])
    return result


def _has_ids(fixture: dict[str, Any]) -> bool:
    return any("id" in d for d in fixture["derived"].get("server_tool_calls") or [])


def _expected(fixture: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(id, native name) of each call derived lists, in order (Anthropic, Responses)."""
    return [(d.get("id"), d.get("name")) for d in fixture["derived"]["server_tool_calls"]]


def _check_idless(fixture: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    """Gemini's: derived counts each ``executableCode`` and each ``codeExecutionResult`` part
    (Zerda: one call per code and its result, DESIGN §18's input and output) and names a
    grounded answer "grounding" (Zerda: the search, file search or URL context behind it).
    Gemini 3's ``toolCall`` search parts, which derived leaves out, are calls too."""
    names = [d.get("name") for d in fixture["derived"].get("server_tool_calls") or []]
    code = [c for c in calls if c["type"] == "code_execution"]
    assert sum(2 if c["output"] is not None else 1 for c in code) == names.count("code_execution")
    if "grounding" in names:
        assert any(c["type"] in ("web_search", "file_search", "web_fetch") for c in calls)


@pytest.mark.parametrize("path", _files())
def test_a_recorded_hosted_answer_lists_what_the_provider_ran(
    server: MockLLMServer, interfaces: Callable[..., Any], path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    llm = _recorded_interface(interfaces, fixture)
    result = _answer(server, llm, fixture)
    assert result["stop_reason"] != "error", result
    calls = result.get("server_tool_calls", [])
    derived = fixture["derived"]
    if _has_ids(fixture):
        assert [(c["id"], c["name"]) for c in calls] == _expected(fixture)
    elif derived.get("server_tool_calls"):
        _check_idless(fixture, calls)
    elif calls and {c["id"] for c in calls} <= {t["id"] for t in derived.get("tool_calls") or []}:
        # The extraction listed these server calls among derived.tool_calls (Bedrock's Nova
        # server_tool_use blocks): each is a server call, the rest tool calls; none is lost.
        ours = [c["id"] for c in calls] + [c["id"] for c in result["tool_calls"]]
        assert sorted(ours) == sorted(c["id"] for c in derived["tool_calls"])
    else:
        # Calls derived leaves out: the result of a call made in an earlier turn (an
        # in-flight MCP or search call), Gemini 3's toolCall search parts. Each is from
        # this answer: its id, where it has one, is in the body.
        body = json.dumps(fixture["response"]["body"])
        assert all(c["id"] is None or c["id"] in body for c in calls), calls
    for call in calls:
        assert set(call) == {"id", "type", "name", "input", "output"}
        assert isinstance(call["input"], dict)
    for cited in result.get("citations", []):
        assert set(cited) == {"url", "title", "text", "start", "end"}
        if cited["start"] is not None:
            assert 0 <= cited["start"] <= cited["end"] <= len(result["content"] or "")
    json.dumps(result)  # plain JSON, no SDK object


@pytest.mark.parametrize("path", _files())
def test_a_recorded_hosted_answer_continues_on_its_provider_and_on_another(
    server: MockLLMServer, interfaces: Callable[..., Any], path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    llm = _recorded_interface(interfaces, fixture)
    result = _answer(server, llm, fixture)
    if not result.get("server_tool_calls") or result["tool_calls"]:
        pytest.skip("no hosted call to send back, or client tool calls waiting for results")
    history = [
        {"role": "user", "content": "recorded"},
        result["message"],
        {"role": "user", "content": "Thanks. And then?"},
    ]
    server.enqueue(fixture["provider"], text="Then this.")
    assert llm.generate(history)["content"] == "Then this."
    assert server.last_request(fixture["provider"]).rejected_by is None
    other = _interface(interfaces, OTHER, "gpt-4o")
    server.enqueue(OTHER, text="Then that.")
    assert other.generate(history)["content"] == "Then that."
    sent = server.last_request(OTHER).body["messages"][1]["content"]
    assert sent.startswith(f"[{result['server_tool_calls'][0]['type']}: ")
