"""Bad input, fuzzed with hypothesis on every provider: random tool definitions, histories
(roles, missing fields, wrong types, ids present, absent or duplicated) and tool_choice
values. Every generate call ends in a result or in a clear ``invalid_request`` error naming
the problem — never an unhandled exception — and a refused input sends no request.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.testing import MockLLMServer

# ZERDA_FUZZ_EXAMPLES=2000 fuzzes deeper, with fresh random examples; by default the same
# 50 examples run every time, so that `make test` stays fast and reproducible.
DEEP = int(os.environ.get("ZERDA_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=DEEP or 50,
    deadline=None,
    derandomize=not DEEP,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ROLES = ["system", "user", "assistant", "tool"]
NAMES = ["get_weather", "lookup_2", "send-mail"]

# --- strategies ------------------------------------------------------------------------

# Finite floats only: values JSON cannot carry are pinned by
# test_values_json_cannot_carry_are_refused_before_sending.
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
junk = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
names = st.one_of(st.sampled_from(NAMES), st.text(max_size=8), junk)
schemas = st.one_of(
    st.just({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    st.just({"type": "object"}),
    st.just({}),
    st.dictionaries(st.sampled_from(["type", "properties", "required", "items"]), json_value),
    junk,
)
tool_fields = st.fixed_dictionaries(
    {},
    optional={
        "name": names,
        "description": st.one_of(st.text(max_size=10), junk),
        "parameters": schemas,
        "input_schema": schemas,
    },
)
a_tool = st.one_of(
    tool_fields,
    tool_fields.map(lambda f: {"type": "function", "function": f}),
    st.sampled_from(NAMES).map(lambda n: {"name": n, "parameters": {"type": "object"}}),
    junk,
)
tools_st = st.one_of(st.none(), st.lists(a_tool, max_size=3), junk, st.just({}))

ids = st.one_of(st.none(), st.sampled_from(["call_1", "call_2", "", "id with spaces/é"]), junk)
a_call = st.one_of(
    st.fixed_dictionaries(
        {}, optional={"id": ids, "name": names, "arguments": st.one_of(json_value, junk)}
    ),
    junk,
)
contents = st.one_of(st.text(max_size=12), json_value)
a_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.one_of(st.sampled_from(ROLES), junk)},
        optional={
            "content": contents,
            "tool_calls": st.one_of(st.lists(a_call, max_size=3), junk),
            "tool_call_id": ids,
            "name": names,
            "is_error": st.one_of(st.booleans(), junk),
            "provider_data": st.one_of(st.just({}), json_value),
        },
    ),
    junk,
)
histories = st.one_of(st.text(max_size=10), st.lists(a_message, max_size=5), junk)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Well-formed histories with awkward details: ids absent, duplicated, foreign-looking;
    results out of order or paired by position; outputs of every JSON type."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(st.text(max_size=10))})
    messages.append({"role": "user", "content": draw(st.text(min_size=1, max_size=10))})
    for _ in range(draw(st.integers(0, 2))):
        calls = [
            {
                "id": draw(
                    st.one_of(st.none(), st.sampled_from(["call_1", "call_1", "toolu_x", "a.b:c"]))
                ),
                "name": draw(st.sampled_from(NAMES)),
                "arguments": draw(st.dictionaries(st.text(max_size=4), json_value, max_size=2)),
            }
            for _ in range(draw(st.integers(1, 3)))
        ]
        text = draw(st.one_of(st.none(), st.text(max_size=8)))
        messages.append({"role": "assistant", "content": text, "tool_calls": calls})
        by_id = all(c["id"] for c in calls) and len({c["id"] for c in calls}) == len(calls)
        order = draw(st.permutations(range(len(calls)))) if by_id else range(len(calls))
        for i in order:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": calls[i]["id"] if by_id else None,
                    "name": calls[i]["name"],
                    "content": draw(json_value.filter(lambda v: v is not None)),
                    "is_error": draw(st.booleans()),
                }
            )
        if draw(st.booleans()):
            messages.append({"role": "user", "content": draw(st.text(min_size=1, max_size=8))})
    return messages


tool_choices = st.one_of(
    st.none(),
    st.sampled_from(["auto", "none", "required", *NAMES, "", "missing_tool"]),
    st.sampled_from(NAMES).map(lambda n: {"name": n}),
    st.sampled_from(NAMES).map(lambda n: {"type": "function", "function": {"name": n}}),
    st.dictionaries(st.sampled_from(["name", "type", "function"]), json_value, max_size=2),
    junk,
)

# --- the property ------------------------------------------------------------------------

# A bare Python exception passed off as a message: "KeyError: 'name'" names no problem.
_RAW_EXCEPTION = re.compile(r"^(KeyError|TypeError|AttributeError|IndexError|ValueError)\b")


@pytest.fixture(scope="module")
def answering(module_server: MockLLMServer) -> MockLLMServer:
    """The module's server, answering "ok" to every provider: valid input gets a result."""
    module_server.reset()
    for provider in PROVIDERS:
        module_server.set_default(provider, text="ok")
    return module_server


@pytest.fixture
def call(answering: MockLLMServer, llms: Interfaces, provider: str) -> Iterator[Any]:
    llm = llms.get(provider, max_retries=0)

    def check(messages: Any, **kwargs: Any) -> dict[str, Any]:
        before = len(answering.requests_for(provider))
        given_input = copy.deepcopy((messages, kwargs))
        result = llm.generate(messages, **kwargs)
        sent = len(answering.requests_for(provider)) - before
        assert (messages, kwargs) == given_input, "generate mutated its input"
        assert_outcome(result, sent, provider)
        return result

    yield check


# Known bugs, reported to the lead, each pinned by an xfail(strict=True) test below: the
# fuzzer skips these inputs so that it keeps looking for other problems.
KNOWN_BUGS: list[tuple[str, dict[str, Any]]] = []


def is_known_bug(result: dict[str, Any], provider: str) -> bool:
    error = result.get("error") or {}
    return any(
        p == provider and all(error.get(k) == v for k, v in fields.items())
        for p, fields in KNOWN_BUGS
    )


def assert_outcome(result: dict[str, Any], sent: int, provider: str) -> None:
    """A result with the server's answer after one request, or invalid_request with none."""
    if is_known_bug(result, provider):
        assume(False)
    error = result.get("error")
    if error is None:
        assert (result["content"], result["stop_reason"], sent) == ("ok", "end_turn", 1)
        return
    assert error["type"] == "invalid_request", error
    assert error["provider"] == provider
    assert sent == 0, f"a request was sent for input refused as invalid: {error['message']}"
    assert error["message"] and not _RAW_EXCEPTION.match(error["message"]), error["message"]


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(tools=tools_st, tool_choice=tool_choices)
def test_random_tools_and_tool_choice(call: Any, tools: Any, tool_choice: Any) -> None:
    call("What is the weather in Paris?", tools=tools, tool_choice=tool_choice)


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(messages=histories, system=st.one_of(st.none(), st.text(max_size=6), junk))
def test_random_histories(call: Any, messages: Any, system: Any) -> None:
    call(messages, system=system)


@pytest.mark.parametrize("provider", PROVIDERS)
@FUZZ
@given(messages=conversations(), tool_choice=st.sampled_from([None, "auto", "none", NAMES[0]]))
def test_well_formed_awkward_histories_are_sent(
    call: Any, messages: list[dict[str, Any]], tool_choice: Any
) -> None:
    tools = [{"name": n, "parameters": {"type": "object"}} for n in NAMES]
    result = call(messages, tools=tools, tool_choice=tool_choice)
    assert "error" not in result, result["error"]


# --- input known to be invalid: refused, named, nothing sent -----------------------------

TOOL = {"name": "get_weather", "parameters": {"type": "object"}}
CALL = {"id": "call_1", "name": "get_weather", "arguments": {}}
INVALID: list[tuple[str, Any, dict[str, Any], str]] = [
    ("a tool without a name", "hi", {"tools": [{"parameters": {}}]}, "tools[0]"),
    ("a tool name of the wrong type", "hi", {"tools": [{"name": 3}]}, "tools[0]"),
    ("a duplicated tool name", "hi", {"tools": [TOOL, TOOL]}, "duplicate"),
    ("tools that are not a list", "hi", {"tools": "get_weather"}, "tools"),
    ("tool_choice naming no tool", "hi", {"tools": [TOOL], "tool_choice": "nope"}, "nope"),
    ("tool_choice required without tools", "hi", {"tool_choice": "required"}, "required"),
    ("tool_choice of the wrong type", "hi", {"tools": [TOOL], "tool_choice": 3}, "tool_choice"),
    ("an unknown role", [{"role": "robot", "content": "x"}], {}, "messages[0]"),
    ("a message that is not a dict", ["hi"], {}, "messages[0]"),
    ("user content that is not text", [{"role": "user", "content": 5}], {}, "messages[0]"),
    ("messages of the wrong type", 42, {}, "messages"),
    (
        "a result answering no call",
        [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "x", "content": "r"}],
        {},
        "messages[1]",
    ),
    (
        "a call left without its result",
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "user", "content": "next"},
        ],
        {},
        "messages[1]",
    ),
    (
        "call arguments that are not a dict",
        [{"role": "assistant", "content": None, "tool_calls": [{**CALL, "arguments": "[1]"}]}],
        {},
        "arguments",
    ),
    ("a system prompt that is not text", "hi", {"system": ["x"]}, "system"),
]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_known_invalid_input_is_refused_before_sending(call: Any, provider: str) -> None:
    for what, messages, kwargs, named in INVALID:
        result = call(messages, **kwargs)
        assert "error" in result, f"{what}: accepted"
        assert named in result["error"]["message"], f"{what}: {result['error']['message']!r}"


@pytest.mark.parametrize("messages", ["", []])
def test_gemini_refuses_a_history_with_nothing_to_send(
    answering: MockLLMServer, llms: Interfaces, messages: Any
) -> None:
    result = llms.get("gemini", max_retries=0).generate(messages)
    assert result["error"]["type"] == "invalid_request"


NOT_JSON: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "infinite call arguments",
        [
            *[{"role": "user", "content": "q"}],
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**CALL, "arguments": {"x": float("inf")}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "r"},
        ],
        {},
    ),
    (
        "a NaN in a tool output",
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": {"x": float("nan")}},
        ],
        {},
    ),
    (
        "a set in call arguments",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**CALL, "arguments": {"x": {1, 2}}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "r"},
        ],
        {},
    ),
    (
        "an infinite bound in a tool schema",
        "hi",
        {"tools": [{"name": "f", "parameters": {"type": "object", "maximum": float("inf")}}]},
    ),
]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_values_json_cannot_carry_are_refused_before_sending(call: Any, provider: str) -> None:
    for what, messages, kwargs in NOT_JSON:
        result = call(messages, **kwargs)
        assert "error" in result, f"{what}: sent"
        assert result["error"]["type"] == "invalid_request", what
        assert "cannot be sent as JSON" in result["error"]["message"], what
