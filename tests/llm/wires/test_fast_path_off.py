"""The acceptance check of DESIGN §22: on every registry row, ``fast_path=False`` (the SDK's
documented call) sends the same request bodies to the same paths and gives the same results
and stream events as the fast path, generate and stream, sync and async; and an installed SDK
that lacks a name of the wire's table is found once and served by the documented call.

Rows are read from the registry: a row added there is checked with no change here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from zerda.llm import _fastpath, create_interface, registry
from zerda.llm._fastpath import PrivateName
from zerda.testing import MockLLMServer

ID_A, ID_B = "abcDEF123", "ghiJKL456"  # valid under every id rule (Mistral: 9 alphanumerics)
WEATHER = {
    "name": "get_weather",
    "description": "Weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
TIME = {"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}
TOOLS = [WEATHER, TIME]
CALL_A = {"id": ID_A, "name": "get_weather", "arguments": {"city": "Paris"}}
CALL_B = {"id": ID_B, "name": "get_time", "arguments": {"city": "Tokyo", "format": "24h"}}
HISTORY = [
    {"role": "user", "content": "Weather and time?"},
    {"role": "assistant", "content": "Checking.", "tool_calls": [CALL_A, CALL_B]},
    {"role": "tool", "tool_call_id": ID_A, "name": "get_weather", "content": "18 C"},
    {"role": "tool", "tool_call_id": ID_B, "name": "get_time", "content": {"time": "09:00"}},
]

# scenario -> (messages, generate arguments, the MockLLMServer script)
SCENARIOS: dict[str, tuple[Any, dict[str, Any], dict[str, Any]]] = {
    "text": ("hi", {"tools": TOOLS}, {"text": "Hello there, friend."}),
    "calls": ("hi", {"tools": TOOLS}, {"text": "Checking.", "tool_calls": [CALL_A, CALL_B]}),
    "history": (HISTORY, {"tools": TOOLS}, {"text": "Done."}),
    "options": (
        "hi",
        {"system": "Be brief.", "max_tokens": 20, "temperature": 0.5},
        {"text": "ok", "stop_reason": "max_tokens"},
    ),
}

# What Ollama's documented Client.chat() cannot carry (wires/ollama/fastpath.py): tool-call
# ids both ways, falsy message fields, and it sends "tools": [] when there are none.
_OLLAMA_CHAT = "ollama's Client.chat() drops tool-call ids and sends fields its models hold"
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    ("ollama", "calls"): _OLLAMA_CHAT,
    ("ollama", "history"): _OLLAMA_CHAT,
    ("ollama", "options"): _OLLAMA_CHAT,
}


def _params(names: list[str]) -> list[Any]:
    params = []
    for row in names:
        for scenario in SCENARIOS:
            marks = []
            if (row, scenario) in KNOWN_DIFFERENCES:
                marks.append(
                    pytest.mark.xfail(reason=KNOWN_DIFFERENCES[row, scenario], strict=True)
                )
            params.append(pytest.param(row, scenario, marks=marks, id=f"{row}-{scenario}"))
    return params


def build(server: MockLLMServer, row: str, fast: bool) -> Any:
    options = {**server.client_options(row), "max_retries": 0}
    return create_interface(row, model="m-1", fast_path=fast, **options)


async def outcome(server: MockLLMServer, llm: Any, row: str, scenario: str) -> dict[str, Any]:
    """Everything a scenario gives: results, stream events, and the requests as sent."""
    messages, kwargs, script = SCENARIOS[scenario]
    server.reset()
    server.enqueue(row, **script)
    server.enqueue(row, **script)
    server.enqueue(row, fragments=3, **script)
    server.enqueue(row, fragments=3, **script)
    results = [llm.generate(messages, **kwargs), await llm.generate_async(messages, **kwargs)]
    events = [
        list(llm.stream(messages, **kwargs)),
        [e async for e in llm.stream_async(messages, **kwargs)],
    ]
    sent = [(r.method, r.path, r.query, r.body) for r in server.requests_for(row)]
    return {"results": results, "events": events, "sent": sent}


async def closed_after(server: MockLLMServer, llm: Any, row: str, scenario: str) -> Any:
    """``outcome`` through an interface made for it alone, closed after."""
    try:
        return await outcome(server, llm, row, scenario)
    finally:
        await llm.aclose()


def _check(fast: dict[str, Any], documented: dict[str, Any]) -> None:
    assert len(fast["sent"]) == 4, fast["sent"]
    assert documented["sent"] == fast["sent"]
    assert documented["results"] == fast["results"]
    assert documented["events"] == fast["events"]
    assert all(r.get("error") is None for r in fast["results"]), fast["results"]


@pytest.mark.parametrize(("row", "scenario"), _params(list(registry.NAMES)))
async def test_fast_path_off_sends_and_gives_the_same(
    server: MockLLMServer, interfaces: Callable[..., Any], row: str, scenario: str
) -> None:
    # One interface per row and path serves the four scenarios (tests/conftest.py): its async
    # client is the test loop's, closed as that loop ends.
    made = {fast: interfaces(row, "m-1", max_retries=0, fast_path=fast) for fast in (True, False)}
    fast = await outcome(server, made[True], row, scenario)
    documented = await outcome(server, made[False], row, scenario)
    _check(fast, documented)


@pytest.mark.parametrize("row", registry.NAMES)
async def test_an_sdk_lacking_a_listed_name_is_served_by_the_documented_call(
    server: MockLLMServer,
    row: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every name of every table reads as missing: the interface, asked for its fast path,
    says so once at DEBUG and serves the call through the documented one, with the same
    bodies and results."""
    scenario = "text"
    fast = await closed_after(server, build(server, row, True), row, scenario)
    monkeypatch.setattr(PrivateName, "present", lambda self: False)
    _fastpath._table_usable.cache_clear()
    with caplog.at_level(logging.DEBUG, logger="zerda"):
        documented = await closed_after(server, build(server, row, True), row, scenario)
    _check(fast, documented)
    off = [r for r in caplog.records if "fast path is off" in r.getMessage()]
    assert len(off) == 1 and off[0].levelno == logging.DEBUG, [r.getMessage() for r in off]


# --- which call served: the wires of wires/{openai,groq,azure,openai_responses,mistral,ollama}

# wire -> the documented call on the sync client (generate, stream), and the fast path's
# senders (module, function), which must not run when it is off.
DOCUMENTED: dict[str, tuple[tuple[str, ...], tuple[str, ...], list[tuple[str, str]]]] = {}
_STAINLESS = [("zerda.llm.wires.openai.fastpath", "post")]
for _wire in ("openai", "groq", "azure"):
    DOCUMENTED[_wire] = (("chat", "completions", "create"),) * 2 + (_STAINLESS,)
for _wire in ("openai-responses", "azure-responses"):
    DOCUMENTED[_wire] = (("responses", "create"),) * 2 + (_STAINLESS,)
DOCUMENTED["mistral"] = (
    ("chat", "complete"),
    ("chat", "stream"),
    [("zerda.llm.wires.mistral.fastpath", f) for f in ("complete", "open_stream")],
)
DOCUMENTED["ollama"] = (
    ("chat",),
    ("chat",),
    [("zerda.llm.wires.ollama.fastpath", f) for f in ("post", "stream_chunks")],
)
OWN_ROWS = [n for n in registry.NAMES if registry.get(n).wire in DOCUMENTED]


def _spy(monkeypatch: pytest.MonkeyPatch, client: Any, path: tuple[str, ...]) -> list[int]:
    owner = client
    for name in path[:-1]:
        owner = getattr(owner, name)
    real, calls = getattr(owner, path[-1]), []

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, path[-1], spy)
    return calls


def _refused(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the fast path ran with fast_path=False")


@pytest.mark.parametrize("row", OWN_ROWS)
def test_the_documented_call_serves_when_off(
    server: MockLLMServer, row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate_path, stream_path, senders = DOCUMENTED[registry.get(row).wire]
    for module, function in senders:
        monkeypatch.setattr(f"{module}.{function}", _refused)
    server.reset()
    server.enqueue(row, text="one")
    server.enqueue(row, fragments=2, text="two")
    llm = build(server, row, False)
    spies = {path: _spy(monkeypatch, llm.client, path) for path in {generate_path, stream_path}}
    assert llm.generate("hi")["content"] == "one"
    assert len(spies[generate_path]) == 1
    assert list(llm.stream("hi"))[-1]["result"]["content"] == "two"
    assert len(spies[stream_path]) == (2 if stream_path == generate_path else 1)
    llm.close()
