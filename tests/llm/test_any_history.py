"""Any history, any provider (DESIGN §15): the N x N matrix.

Every provider's outputs -- real recorded responses (../shared/fixtures/recorded, served
verbatim) and mocked ones (parallel calls, tool errors, reasoning, foreign ids, id-less
calls, names other providers refuse) -- are continued on every provider, through its real
SDK, against a strict MockLLMServer: each request must pass the receiving API's rules
(``zerda.testing.wires.<wire>.validate``) and come back as a normal answer. Two continuations
per pair: right after the tool results, and after a user message that follows them.
A last test walks one conversation through every provider in turn and back to the first.

One variant is sampled: a row's mocked hosted-tool turn (``hosted-<type>``, one per hosted
tool type the row runs) goes to its own row, where its native blocks go back as they came,
and to the first row of each wire protocol (``tests.rows.wire_rows``), not to every row:
what a receiver sends of another row's hosted blocks (their text) is decided by the wire it
writes, so each source row x receiving wire pair is still covered. Every other source goes
to every row. Each source's turn is produced once per process and given to each receiver.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.rows import wire_rows
from zerda.llm import InvalidRequestError, create_interface, registry, tool_result
from zerda.llm.parts import image
from zerda.testing import MockLLMServer

RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"
NAMES = registry.NAMES
PER_SOURCE = 3  # recordings per source provider (a sample: the matrix stays fast)
QUESTION = {"role": "user", "content": "Weather and time in Paris?"}
FOLLOW_UP = {"role": "user", "content": "Thanks. And tomorrow?"}
# A 1x1 PNG: a tool that returns a screenshot.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cfc0f01f0005000201e2212bc10000000049454e44ae426082"
)


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
        },
    }


TOOLS = [_tool("get_weather"), _tool("get_time")]


# --- sources ------------------------------------------------------------------------------

# Mocked outputs: (producing provider, scenario) -> the Script fields it answers with.
_SIGNED = {"thought_signatures": ["c2lnLW9uZQ==", None]}
_THINKING = {
    "thinking": [
        {"type": "thinking", "thinking": "Two lookups.", "signature": "EqQBCkYIARgCKkA="},
        {"type": "thinking", "thinking": "", "signature": "EpYBCkYIBRgCIkBz"},  # signature only
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3vA=="},
    ]
}
_REASONING_ITEMS = {
    "openai-responses": {
        "reasoning": [{"summary": ["Two lookups."], "encrypted_content": "gAAAAB0pQ=="}]
    }
}
_PARALLEL = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_time", "arguments": {"city": "Paris"}},
]


def _mock_scenarios(provider: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {
        "parallel": {"tool_calls": _PARALLEL},
        "error": {"tool_calls": _PARALLEL[:1]},
        "text+call": {"text": "Let me look.", "tool_calls": _PARALLEL[1:]},
        "image": {"tool_calls": _PARALLEL},  # the first result holds an image
    }
    if provider == "anthropic":
        out["reasoning"] = {"tool_calls": _PARALLEL, "provider_data": {"anthropic": _THINKING}}
    if provider == "gemini":
        out["reasoning"] = {"tool_calls": _PARALLEL, "provider_data": {"gemini": _SIGNED}}
    if registry.get(provider).wire in ("openai-responses", "azure-responses"):
        # The mock's Responses renderer reads its script under the wire's own name.
        out["reasoning"] = {"tool_calls": _PARALLEL, "provider_data": _REASONING_ITEMS}
    for kind in registry.get(provider).traits.hosted:
        # The hosted-tool variant (DESIGN §18): what the provider ran and cited, in its
        # native blocks, beside a call of ours; one scenario per hosted tool the row runs.
        out[f"hosted-{kind}"] = {
            "text": "Paris, per the summit page.",
            "tool_calls": _PARALLEL[:1],
            "server_tool_calls": [_HOSTED_CALL | {"type": kind}],
            "citations": [_CITED],
        }
    return out


_HOSTED_CALL = {"input": {"query": "Paris weather"}, "output": "Weather - https://w.example/p"}
_CITED = {"url": "https://w.example/p", "title": "Weather", "start": 0, "end": 5}


# Hand-written outputs a provider could not be scripted to give (every id style at once).
_FOREIGN = [
    {"id": "call_a1B2c3D4e5F6g7H8i9J0k1L2", "name": "get_weather", "arguments": {"city": "Paris"}},
    {"id": "toolu_01A09q90qw90lq917835lq9", "name": "get_time", "arguments": {"city": "Paris"}},
    {"id": "Ab3dE6gH9", "name": "get_weather", "arguments": {"city": "Lyon"}},
    {"id": "tooluse_kZJ.MlvQ:mRJ6/eAyJE5GIl7Q" + "x" * 60, "name": "get_time", "arguments": {}},
]
_IDLESS = [
    {"id": None, "name": "get_weather", "arguments": {"city": "Paris"}},
    {"id": None, "name": "get_time", "arguments": {"city": "Paris"}},
]
_REFUSED_NAMES = [
    {"id": None, "name": "weather.current", "arguments": {"city": "Paris"}},
    {"id": None, "name": "get time now", "arguments": {"city": "Paris"}},
    {"id": None, "name": "t" * 80, "arguments": {}},
]
_ALL_PROVIDER_DATA = {
    "gemini": _SIGNED,
    "anthropic": _THINKING,
    "bedrock": {"reasoning": [{"reasoningText": {"text": "", "signature": "c2lnbmF0dXJl"}}]},
}
_SERVER_CALLS = [
    {
        "id": "srvtoolu_01",
        "type": "web_search",
        "name": "web_search",
        "input": {"query": "Paris weather"},
        "output": "Weather - https://w.example/p",
    },
    {"id": None, "type": "other", "name": "advisor", "input": {}, "output": None},
]
HANDMADE: dict[str, dict[str, Any]] = {
    "foreign-ids": {"tool_calls": _FOREIGN},
    "id-less": {"tool_calls": _IDLESS},
    "refused-names": {"tool_calls": _REFUSED_NAMES},
    "every-provider-data": {"tool_calls": _IDLESS, "provider_data": _ALL_PROVIDER_DATA},
    # A hosted-tool turn whose native blocks belong to no row: every row gets the text.
    "hosted-foreign": {"tool_calls": _IDLESS, "server_tool_calls": _SERVER_CALLS},
}


def _recordings(provider: str) -> list[Path]:
    """A sample of recorded 200 responses with tool calls from ``provider``'s own endpoint,
    parallel calls first."""
    folder = RECORDED / provider
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        fixture = json.loads(path.read_text())
        derived = fixture.get("derived") or {}
        if fixture["response"]["status"] != 200 or not derived.get("tool_calls"):
            continue
        if provider == "ollama" and fixture["request"]["path"] != "/api/chat":
            continue
        if "enum-encoding=int" in str((fixture["request"].get("query") or {}).get("$alt", "")):
            continue  # the Go SDK's integer enums: google-genai rightly refuses them
        found.append((len(derived["tool_calls"]) < 2, path))
    return [p for _, p in sorted(found)[:PER_SOURCE]]


def _source_cases() -> list[Any]:
    cases = [
        pytest.param(("mock", p, name), id=f"{p}-{name}")
        for p in NAMES
        for name in _mock_scenarios(p)
    ]
    cases += [pytest.param(("handmade", "", name), id=name) for name in HANDMADE]
    cases += [
        pytest.param(("recorded", p, str(path)), id=f"{p}-rec-{path.stem[:40]}")
        for p in NAMES
        for path in _recordings(p)
    ]
    return cases


SOURCES = _source_cases()


def _receivers(case: tuple[str, str, str]) -> list[str]:
    """Every row; for a row's own hosted-tool turn, that row and one row per wire."""
    kind, provider, name = case
    if kind == "mock" and name.startswith("hosted-"):
        return list(dict.fromkeys([provider, *wire_rows()]))
    return list(NAMES)


PAIRS = [
    pytest.param(source.values[0], target, id=f"{source.id}-{target}")
    for source in SOURCES
    for target in _receivers(source.values[0])
]


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:  # strict: the default
        yield srv


@pytest.fixture(scope="module")
def llms(server: MockLLMServer) -> Iterator[dict[str, Any]]:
    made = {
        p: create_interface(
            p, model="m", max_retries=0, raise_errors=True, **server.client_options(p)
        )
        for p in NAMES
    }
    yield made
    for llm in made.values():
        llm.close()


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def _results(message: dict[str, Any], scenario: str) -> list[dict[str, Any]]:
    """One tool message per call: dict output, text output, or an error for "error"."""
    out = []
    for j, call in enumerate(message["tool_calls"]):
        if scenario == "error":
            out.append(tool_result(call, "city not found", is_error=True))
        elif scenario == "image" and j == 0:
            parts = [{"type": "text", "text": "The radar map:"}, image(PNG)]
            out.append(tool_result(call, parts))
        else:
            out.append(tool_result(call, {"temp_c": 18 + j} if j % 2 == 0 else f"14:0{j}"))
    return out


def _tools_for(message: dict[str, Any]) -> list[dict[str, Any]]:
    names = list(dict.fromkeys(c["name"] for c in message["tool_calls"]))
    return [_tool(n) for n in names]


def _produce(case: tuple[str, str, str], server: MockLLMServer, llms: dict[str, Any]) -> Any:
    """(the assistant message the source gave, the tools it was given, the scenario)."""
    kind, provider, name = case
    if kind == "handmade":
        message = {"role": "assistant", "content": None, **HANDMADE[name]}
        return message, _tools_for(message), name
    if kind == "mock":
        server.enqueue(provider, **_mock_scenarios(provider)[name])
        result = llms[provider].generate([QUESTION], tools=TOOLS)
        return result["message"], TOOLS, name
    fixture = json.loads(Path(name).read_text())
    tools = [_tool(c["name"]) for c in fixture["derived"]["tool_calls"]]
    tools = list({t["name"]: t for t in tools}.values())
    server.enqueue_recorded(fixture, provider)
    if fixture.get("streaming"):
        events = list(llms[provider].stream([QUESTION], tools=tools))
        result = events[-1]["result"]
    else:
        result = llms[provider].generate([QUESTION], tools=tools)
    assert result["tool_calls"], f"the recording {name} gave no tool calls: {result}"
    return result["message"], tools, "recorded"


_PRODUCED: dict[tuple[str, str, str], Any] = {}


def _produced(case: tuple[str, str, str], server: MockLLMServer, llms: dict[str, Any]) -> Any:
    """What ``_produce`` gives, asked of the source once per process and source: it does
    not depend on the receiver. Each receiver gets its own copy."""
    if case not in _PRODUCED:
        _PRODUCED[case] = _produce(case, server, llms)
    return copy.deepcopy(_PRODUCED[case])


def _accepted(server: MockLLMServer, llm: Any, history: list[dict[str, Any]], tools: Any) -> Any:
    server.enqueue(llm.provider, text="Noted.")
    result = llm.generate(history, tools=tools)
    sent = server.last_request(llm.provider)
    assert sent.rejected_by is None, sent.rejected_by
    assert result["content"] == "Noted.", result
    return sent


# --- the matrix ---------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "target"), PAIRS)
def test_a_history_from_any_source_continues_on_every_provider(
    server: MockLLMServer, llms: dict[str, Any], case: tuple[str, str, str], target: str
) -> None:
    message, tools, scenario = _produced(case, server, llms)
    history = [QUESTION, message, *_results(message, scenario)]
    if scenario == "image" and not _takes_images(target):
        # A text-only API (DeepSeek's) cannot be sent the image: refused before sending,
        # naming the part, rather than dropped.
        sent = len(server.requests)
        with pytest.raises(InvalidRequestError, match=r"messages\[2\]\.content\[1\]"):
            llms[target].generate(history, tools=tools)
        assert len(server.requests) == sent
        return
    _accepted(server, llms[target], history, tools)
    _accepted(server, llms[target], [*history, FOLLOW_UP], tools)


def _takes_images(provider: str) -> bool:
    traits = registry.get(provider).traits
    return "image" in traits.user.parts or "image" in traits.tool_results.parts


def test_the_recorded_samples_are_there() -> None:
    if not RECORDED.is_dir():
        pytest.skip(f"{RECORDED} is absent")
    # Ollama's recordings hold one native /api/chat response with tool calls; the rows with
    # no recordings of their own (Azure, the cloud and OpenAI-compatible rows) have none.
    recorded = [p for p in NAMES if (RECORDED / p).is_dir()]
    assert len(recorded) == 8
    expected = {p: 1 if p == "ollama" else PER_SOURCE for p in recorded}
    assert {p: len(_recordings(p)) for p in recorded} == expected


def test_one_conversation_visits_every_provider_and_comes_back(
    server: MockLLMServer, llms: dict[str, Any]
) -> None:
    """Each provider in turn calls a tool on the history so far (every earlier provider's
    turns in it), then the first provider answers: accepted at every step."""
    history: list[dict[str, Any]] = [QUESTION]
    for step, provider in enumerate([*NAMES, NAMES[0]]):
        calls = _PARALLEL if step % 2 == 0 else _PARALLEL[:1]
        server.enqueue(provider, text=f"Step {step}." if step % 3 == 0 else None, tool_calls=calls)
        result = llms[provider].generate(history, tools=TOOLS)
        assert server.last_request(provider).rejected_by is None
        assert [c["name"] for c in result["tool_calls"]] == [c["name"] for c in calls]
        history += [result["message"], *_results(result["message"], "ok")]
        if step % 2:
            history.append({"role": "user", "content": f"Go on ({step})."})
    _accepted(server, llms[NAMES[0]], history, TOOLS)
    assert len(server.requests) == len(NAMES) + 2


def test_the_docs_matrix_lists_every_provider_as_source_and_target() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "portability.md"
    table = page.read_text().split("<!-- registry:portability", 1)[1].split("-->\n", 1)[1]
    table = table.split("\n<!-- /registry -->", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
    assert rows[0][1:] == [f"`{p}`" for p in NAMES]
    assert [r[0] for r in rows[2 : 2 + len(NAMES)]] == [f"`{p}`" for p in NAMES]
    assert all(cell == "✓" for r in rows[2:] for cell in r[1:])
