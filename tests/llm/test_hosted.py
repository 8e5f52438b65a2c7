"""Hosted tools, citations and the raw answer (DESIGN §18): what every row shares.

The helpers and their checks, the refusals before sending, the result keys, include_raw on
every row, the history sent to a row that cannot take the blocks back, the tool loop, and a
scripted hosted answer on every row that runs one (generate, stream, async: one result).
Each wire's own mapping is asserted whole in tests/llm/wires/<wire>/test_hosted.py.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, create_interface, hosted, registry
from zerda.llm._server_tools import char_offsets, citation, history_text, server_call
from zerda.testing import MockLLMServer

NAMES = registry.NAMES
HOSTING = [n for n in NAMES if registry.get(n).traits.hosted]
SECRET = "Bearer sk-live-0123456789abcdef"


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def _model(provider: str, kind: str | None = None) -> str:
    """A model of ``provider`` that runs ``kind`` (its row's pattern), else its demo model."""
    spec = registry.get(provider)
    hosted_tool = spec.traits.hosted.get(kind) if kind else None
    if hosted_tool is None or not hosted_tool.models:
        return spec.demo_model
    for candidate in _CANDIDATES:
        if re.search(hosted_tool.models, candidate):
            return candidate
    raise AssertionError(f"no candidate model matches {hosted_tool.models!r}")


# Model names that match the rows' model patterns (a row's pattern must match one of them).
_CANDIDATES = (
    "gpt-5",
    "gpt-4o-search-preview",
    "openai/gpt-oss-120b",
    "groq/compound",
    "us.amazon.nova-2-lite-v1:0",
    "amazon.nova-premier-v1:0",
    "claude-sonnet-4-6",
    "claude-opus-4-6",
    "gemini-2.5-flash",
)


def _llm(server: MockLLMServer, provider: str, model: str | None = None, **kw: Any) -> Any:
    return create_interface(
        provider,
        model=model or registry.get(provider).demo_model,
        max_retries=0,
        raise_errors=True,
        **server.client_options(provider),
        **kw,
    )


# --- the helpers ------------------------------------------------------------------------------


def test_the_helpers_build_the_dicts_of_the_contract() -> None:
    assert hosted.web_search(max_uses=3, allowed_domains=("a.org",)) == {
        "type": "web_search",
        "max_uses": 3,
        "allowed_domains": ["a.org"],
    }
    assert hosted.web_fetch(citations=True) == {"type": "web_fetch", "citations": True}
    assert hosted.code_execution() == {"type": "code_execution"}
    assert hosted.file_search(vector_store_ids=["vs_1"], max_num_results=4) == {
        "type": "file_search",
        "vector_store_ids": ["vs_1"],
        "max_num_results": 4,
    }
    assert hosted.mcp_server(url="https://m.example/mcp", name="docs", allowed_tools=["q"]) == {
        "type": "mcp",
        "url": "https://m.example/mcp",
        "name": "docs",
        "allowed_tools": ["q"],
    }
    tool = {"type": "web_search_20250305", "name": "web_search"}
    wrapped = hosted.native(tool)
    assert wrapped == {"type": "native", "tool": tool} and wrapped["tool"] is not tool


def test_the_result_builders_keep_what_the_provider_sent() -> None:
    assert server_call("s1", "web_search", "web_search", {"query": "q"}, "T - http://t") == {
        "id": "s1",
        "type": "web_search",
        "name": "web_search",
        "input": {"query": "q"},
        "output": "T - http://t",
    }
    odd = server_call("", "advisor", "advisor", "not an object", {"n": 1})
    assert odd == {
        "id": None,
        "type": "other",
        "name": "advisor",
        "input": {"_raw": "not an object"},
        "output": '{"n": 1}',
    }
    assert citation("https://a", "A", "x", 3, None) == {
        "url": "https://a",
        "title": "A",
        "text": "x",
        "start": None,
        "end": None,
    }


def test_byte_offsets_become_character_offsets() -> None:
    text = "Café → Zürich"
    start = len("Café → ".encode())
    assert char_offsets(text, start, len(text.encode())) == (7, 13)
    assert text[7:13] == "Zürich"
    assert char_offsets(text, -1, 999) == (None, None)


def test_the_history_text_of_server_calls() -> None:
    calls = [
        server_call("s1", "web_search", "web_search", {"query": "q"}, "T - http://t"),
        server_call(None, "code_execution", "code_execution", {}, None),
    ]
    assert history_text(calls) == (
        '[web_search: web_search {"query": "q"}]\nT - http://t\n\n[code_execution: code_execution]'
    )


# --- refusals before sending ------------------------------------------------------------------


def _refused(server: MockLLMServer, llm: Any, tools: list[Any]) -> InvalidRequestError:
    sent = len(server.requests)
    with pytest.raises(InvalidRequestError) as info:
        llm.generate("hi", tools=tools)
    assert len(server.requests) == sent, "refused before anything was sent"
    return info.value


def test_an_unknown_hosted_type_lists_the_types(server: MockLLMServer) -> None:
    err = _refused(server, _llm(server, "openai"), [{"type": "web_serch"}])
    assert "tools[0]: unknown hosted tool type 'web_serch'" in str(err)
    assert "web_search, web_fetch, code_execution, file_search, mcp and 'native'" in str(err)


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"type": "web_search", "max_uses": 0}, "'max_uses' must be an integer of at least 1"),
        ({"type": "web_search", "allowed_domains": "a.org"}, "'allowed_domains' must be a list"),
        (
            {"type": "web_search", "user_location": {"country": "France"}},
            "'user_location' must be a dict whose 'country' is a two-letter ISO 3166-1 code",
        ),
        ({"type": "web_search", "region": "eu"}, "unknown option 'region'; its options: max_uses"),
        ({"type": "file_search"}, "'vector_store_ids' is required"),
        ({"type": "file_search", "vector_store_ids": []}, "'vector_store_ids' must be a non-empty"),
        ({"type": "mcp", "url": "https://m.example"}, "'name' is required"),
        ({"type": "mcp", "url": "ftp://m", "name": "m"}, "'url' must be an http:// or https://"),
        ({"type": "code_execution", "timeout": 3}, "unknown option 'timeout'; its options: none"),
        ({"type": "native", "tool": {}}, "a native tool is {'type': 'native', 'tool': {...}}"),
    ],
)
def test_a_malformed_option_names_the_field_and_what_is_accepted(
    server: MockLLMServer, tool: dict[str, Any], message: str
) -> None:
    err = _refused(server, _llm(server, "gemini"), [{"name": "f", "parameters": {}}, tool])
    assert "tools[1]" in str(err) and message in str(err)


def test_mcp_header_values_are_never_shown(server: MockLLMServer) -> None:
    tool = {"type": "mcp", "url": "https://m.example", "name": "m", "headers": {"X": 1}}
    tool["headers"]["Authorization"] = SECRET
    err = _refused(server, _llm(server, "openai-responses"), [tool])
    assert "'headers' must be a dict of header names to string values" in str(err)
    assert "sk-live" not in str(err) and "sk-live" not in repr(err)


@pytest.mark.parametrize(
    "provider", [n for n in NAMES if "web_search" not in registry.get(n).traits.hosted]
)
def test_a_row_that_does_not_run_it_names_the_rows_that_do(
    server: MockLLMServer, provider: str
) -> None:
    err = _refused(server, _llm(server, provider), [hosted.web_search()])
    rows = ", ".join(registry.get(provider).rows_hosting("web_search"))
    assert rows and err.capability is True
    assert str(err).endswith(
        f"tools[0]: {provider} does not run the hosted tool 'web_search'; rows that run it: {rows}"
    )


@pytest.mark.parametrize("provider", HOSTING)
def test_an_option_the_row_does_not_honour_is_refused(server: MockLLMServer, provider: str) -> None:
    kind, spec_tool = next(iter(registry.get(provider).traits.hosted.items()))
    every = {
        "web_search": hosted.web_search(
            max_uses=1, allowed_domains=["a.org"], user_location={"country": "FR"}
        ),
        "web_fetch": hosted.web_fetch(max_uses=1, max_content_tokens=10, citations=True),
        "code_execution": hosted.code_execution(),
        "file_search": hosted.file_search(vector_store_ids=["vs"], max_num_results=2),
        "mcp": hosted.mcp_server(url="https://m.example", name="m", allowed_tools=["q"]),
    }[kind]
    unhonoured = [k for k in every if k != "type" and k not in spec_tool.options]
    if not unhonoured:
        pytest.skip(f"{provider} honours every option of {kind}")
    err = _refused(server, _llm(server, provider, _model(provider, kind)), [every])
    assert err.capability is True
    assert f"{provider} does not honour the option {unhonoured[0]!r}" in str(err)


def test_a_model_outside_the_row_pattern_is_refused(server: MockLLMServer) -> None:
    rows = [
        (n, k, h) for n in HOSTING for k, h in registry.get(n).traits.hosted.items() if h.models
    ]
    if not rows:
        pytest.skip("no row restricts a hosted tool to some models")
    provider, kind, spec_tool = rows[0]
    err = _refused(server, _llm(server, provider, "not-a-model"), [{"type": kind}])
    assert err.capability is True
    assert f"on {provider} only models matching {spec_tool.models!r} run it" in str(err)


# --- purity, keys, include_raw -----------------------------------------------------------------


@pytest.mark.parametrize("provider", HOSTING)
def test_declared_hosted_tools_give_empty_lists_and_the_callers_dicts_stay_as_they_were(
    server: MockLLMServer, provider: str
) -> None:
    kind = next(iter(registry.get(provider).traits.hosted))
    tool = {"type": kind, **({"vector_store_ids": ["vs"]} if kind == "file_search" else {})}
    if kind == "mcp":
        tool.update(url="https://m.example/mcp", name="m")
    before = copy.deepcopy(tool)
    server.enqueue(provider, text="No search needed.")
    result = _llm(server, provider, _model(provider, kind)).generate("hi", tools=[tool])
    assert tool == before
    assert result["server_tool_calls"] == [] and result["citations"] == []
    assert "server_tool_calls" not in result["message"]


def test_a_plain_call_has_no_hosted_keys(server: MockLLMServer) -> None:
    server.enqueue("openai", text="hi")
    result = _llm(server, "openai").generate("hi")
    assert not {"server_tool_calls", "citations", "raw"} & set(result)


@pytest.mark.parametrize("provider", NAMES)
def test_include_raw_gives_the_providers_body_as_json(server: MockLLMServer, provider: str) -> None:
    llm = _llm(server, provider)
    server.enqueue(provider, text="Hello.")
    result = llm.generate("hi", include_raw=True)
    assert isinstance(result["raw"], dict) and json.loads(json.dumps(result["raw"]))
    assert "Hello." in json.dumps(result["raw"])
    server.enqueue(provider, text="Hello.")
    done = list(llm.stream("hi", include_raw=True))[-1]["result"]
    assert isinstance(done["raw"], list) and done["raw"]
    assert "Hello" in json.dumps(done["raw"])
    server.enqueue(provider, text="Hello.")
    assert "raw" not in llm.generate("hi")


def test_include_raw_must_be_a_boolean(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError, match="include_raw must be True or False, not 'yes'"):
        _llm(server, "openai").generate("hi", include_raw="yes")


# --- history --------------------------------------------------------------------------------

_CALL = server_call("srv_1", "web_search", "web_search", {"query": "summit"}, "S - https://s.org")


def test_another_provider_receives_the_server_calls_as_text(server: MockLLMServer) -> None:
    history = [
        {"role": "user", "content": "Where?"},
        {
            "role": "assistant",
            "content": "Paris.",
            "server_tool_calls": [_CALL],
            "provider_data": {"elsewhere": {"blocks": [1]}},
        },
        {"role": "user", "content": "When?"},
    ]
    before = copy.deepcopy(history)
    server.enqueue("mistral", text="In May.")
    _llm(server, "mistral").generate(history)
    assert history == before
    sent = server.last_request("mistral").body["messages"][1]
    assert sent["content"] == (
        '[web_search: web_search {"query": "summit"}]\nS - https://s.org\n\nParis.'
    )


def test_server_tool_calls_in_history_must_be_a_list_of_dicts(server: MockLLMServer) -> None:
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "server_tool_calls": "web_search"},
        {"role": "user", "content": "q"},
    ]
    err = _refused_history(server, history)
    assert "messages[1]" in str(err) and "'server_tool_calls' must be a list of dicts" in str(err)


def _refused_history(server: MockLLMServer, history: list[Any]) -> InvalidRequestError:
    with pytest.raises(InvalidRequestError) as info:
        _llm(server, "openai").generate(history)
    return info.value


# --- a scripted hosted answer on every row that runs one ---------------------------------------

_TEXT = "Paris hosts the 2026 summit."


def _script(kind: str) -> dict[str, Any]:
    return {
        "text": _TEXT,
        "server_tool_calls": [
            {
                "type": kind,
                "input": {"query": "2026 summit"} if kind == "web_search" else {},
                "output": "Summit 2026 - https://example.org/summit",
            }
        ],
        "citations": [
            {"url": "https://example.org/summit", "title": "Summit 2026", "start": 0, "end": 5}
        ],
    }


def _declared(kind: str) -> dict[str, Any]:
    return {
        "web_search": hosted.web_search(),
        "web_fetch": hosted.web_fetch(),
        "code_execution": hosted.code_execution(),
        "file_search": hosted.file_search(vector_store_ids=["vs_1"]),
        "mcp": hosted.mcp_server(url="https://m.example/mcp", name="docs"),
    }[kind]


HOSTED_CASES = [(n, k) for n in HOSTING for k in registry.get(n).traits.hosted]


@pytest.mark.parametrize(("provider", "kind"), HOSTED_CASES)
def test_a_scripted_hosted_answer_is_the_same_from_generate_stream_and_async(
    server: MockLLMServer, provider: str, kind: str
) -> None:
    llm = _llm(server, provider, _model(provider, kind))
    tools = [_declared(kind)]
    server.enqueue(provider, **_script(kind))
    result = llm.generate("Where is the summit?", tools=tools)
    assert server.last_request(provider).rejected_by is None
    assert result["content"] == _TEXT
    calls = result["server_tool_calls"]
    assert [c["type"] for c in calls if c["type"] == kind], calls
    assert all(c["output"] for c in calls if c["type"] == kind), calls
    # One citation; Groq's citations point at a search result, not a URL (url None).
    assert [c["url"] for c in result["citations"]] in (["https://example.org/summit"], [None])
    server.enqueue(provider, **_script(kind))
    events = list(llm.stream("Where is the summit?", tools=tools))
    streamed = events[-1]["result"]
    assert _comparable(streamed) == _comparable(result)
    served = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
    assert served == streamed["server_tool_calls"]
    assert [e["citation"] for e in events if e["type"] == "citation"] == streamed["citations"]
    server.enqueue(provider, **_script(kind))
    awaited = asyncio.run(llm.generate_async("Where is the summit?", tools=tools))
    assert _comparable(awaited) == _comparable(result)


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """A result without what differs between two answers of the mock: the ids it makes up
    (in provider_data and the server calls) and the usage it counts."""
    out = json.loads(json.dumps(result))
    for key in ("usage", "cost", "provider_data"):
        out.pop(key, None)
    out["message"].pop("provider_data", None)
    for call in [*out.get("server_tool_calls", []), *out["message"].get("server_tool_calls", [])]:
        call["id"] = None
    return out


NATIVE = {"type": "function", "function": {"name": "provider_tool", "parameters": {}}}


@pytest.mark.parametrize("provider", NAMES)
def test_a_native_tool_reaches_the_request_unchanged_on_every_row(
    server: MockLLMServer, provider: str
) -> None:
    """``hosted.native`` passes one provider-shaped tool through, on every row: never
    dropped (the body holds it as given; the strict mock may then refuse a foreign shape)."""
    llm = _llm(server, provider)
    body = llm._native_request("hi", {"tools": [hosted.native(NATIVE)]})
    assert NATIVE in _tools_in(body), body


def _tools_in(body: Any) -> list[Any]:
    """Every tools list in a native request (Converse: toolConfig; Gemini: config)."""
    found: list[Any] = []
    if isinstance(body, dict):
        for key, value in body.items():
            if key == "tools" and isinstance(value, list):
                found += value
            else:
                found += _tools_in(value)
    elif isinstance(body, list):
        for item in body:
            found += _tools_in(item)
    return found
