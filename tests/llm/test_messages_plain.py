"""check_history's loop for plain histories (``_plain_history``) gives what the full check
gives, or steps aside (None) so that the full check runs and says what is wrong."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zerda.llm import InvalidRequestError
from zerda.llm._ids import ID_RULES
from zerda.llm.messages import (
    History,
    _checked,
    _plain_history,
    check_history,
    default_id,
    json_text,
    resolve_tool_ids,
)


def _full(messages: list[Any], make_id: Any = default_id, repair: bool = False) -> History:
    return resolve_tool_ids(_checked(messages), make_id, repair=repair)


def _state(history: History) -> tuple[list[dict[str, Any]], bool, bool, list[str]]:
    return list(history), history.has_parts, history.has_system, history.names


def _round_trip(i: int, call_id: str | None = "c1", **result: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"question {i}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "name": "f", "arguments": {"x": i}}],
        },
        {"role": "tool", "tool_call_id": call_id, "name": "f", "content": "ok", **result},
    ]


PLAIN: dict[str, list[dict[str, Any]]] = {
    "round trips": _round_trip(0, "a") + _round_trip(1, "b"),
    "system and text": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "héllo"},
        {"role": "assistant", "content": "hi"},
    ],
    "id-less calls": _round_trip(0, None) + _round_trip(1, None),
    "duplicate ids": _round_trip(0, "dup") + _round_trip(1, "dup"),
    "results out of order": [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "two calls",
            "tool_calls": [
                {"id": "a", "name": "f", "arguments": {"k": [1, {"n": None}]}},
                {"id": "b", "name": "g", "arguments": None},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": {"deep": {"x": [1.5]}}},
        {"role": "tool", "tool_call_id": "a", "name": "f", "content": "é", "is_error": True},
    ],
    "provider data and an empty arguments dict": [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "a", "name": "f", "arguments": {}}],
            "provider_data": {"anthropic": {"thinking": []}},
        },
        {"role": "tool", "tool_call_id": "a", "name": "", "content": {}},
    ],
    "open calls at the end": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "name": "f"}]},
    ],
    "flat values of every kind": [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "name": "f", "arguments": {"s": "t", "i": 2, "b": True, "n": None}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": {"f": 0.5, "big": 10**30}},
    ],
}


@pytest.mark.parametrize("rule", sorted(ID_RULES))
@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_histories_take_the_loop_and_equal_the_full_check(name: str, rule: str) -> None:
    messages = PLAIN[name]
    before = copy.deepcopy(messages)
    plain = _plain_history(messages, ID_RULES[rule])
    assert plain is not None
    assert _state(plain) == _state(_full(messages, ID_RULES[rule]))
    assert messages == before  # the caller's messages untouched


OTHER: dict[str, list[Any]] = {
    "content parts": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    "a tool result of parts": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "name": "f"}]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "x"}]},
    ],
    "a JSON array result": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "name": "f"}]},
        {"role": "tool", "tool_call_id": "a", "content": [1, 2]},
    ],
    "a number result": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "name": "f"}]},
        {"role": "tool", "tool_call_id": "a", "content": 3},
    ],
    "a str subclass": [{"role": "user", "content": type("S", (str,), {})("hi")}],
}


@pytest.mark.parametrize("name", sorted(OTHER))
def test_other_shapes_step_aside_to_the_full_check(name: str) -> None:
    messages = OTHER[name]
    assert _plain_history(messages, default_id) is None
    assert _state(check_history(messages)) == _state(_full(messages))


BROKEN: dict[str, list[Any]] = {
    "a NaN argument": [
        {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"x": math.nan}}]}
    ],
    "a nested infinity": [
        {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"x": [math.inf]}}]}
    ],
    "a set in a result": [
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "f"}]},
        {"role": "tool", "tool_call_id": "a", "content": {"x": {1}}},
    ],
    "a lone surrogate in a key": [
        {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"\ud800": 1}}]}
    ],
    "a lone surrogate in text": [{"role": "user", "content": "a\ud800"}],
    "an orphan result": [{"role": "tool", "tool_call_id": "zz", "content": "x"}],
    "an unanswered call": [
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "f"}]},
        {"role": "user", "content": "next"},
    ],
    "an unknown id": [
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "f"}]},
        {"role": "tool", "tool_call_id": "b", "content": "x"},
    ],
    "a non-dict message": ["hi"],
    "an unknown role": [{"role": "bot", "content": "x"}],
    "arguments as text": [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": "{}"}]}],
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_problems_step_aside_and_the_full_check_names_them(name: str) -> None:
    messages = BROKEN[name]
    assert _plain_history(messages, default_id) is None
    with pytest.raises(InvalidRequestError, match=r"messages\[\d\]") as plain_path:
        check_history(messages)
    with pytest.raises(InvalidRequestError) as full_path:
        _full(messages)
    assert str(plain_path.value) == str(full_path.value)


def test_repair_of_open_calls_at_the_end_runs_the_full_check() -> None:
    messages = PLAIN["open calls at the end"]
    assert _plain_history(messages, default_id, repair=True) is None
    repaired = check_history(messages, repair=True)
    assert repaired[-1]["content"] == "not executed"
    assert _state(repaired) == _state(_full(messages, repair=True))


def test_flat_values_get_their_text_when_a_provider_asks() -> None:
    arguments = {"city": "Paris", "n": 2}
    messages = [
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "f", "arguments": arguments}]}
    ]
    checked = check_history(messages)[0]["tool_calls"][0]["arguments"]
    assert checked is arguments  # flat: shared, not copied
    assert json_text(checked) == '{"city": "Paris", "n": 2}'


# Random histories of plain and other shapes: the loop either steps aside or agrees.
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=4)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
_ids = st.one_of(st.none(), st.sampled_from(["a", "b", "a.b", ""]))
_call = st.fixed_dictionaries(
    {
        "id": _ids,
        "name": st.sampled_from(["f", "g"]),
        "arguments": st.one_of(
            st.none(), st.dictionaries(st.text(max_size=3), _values, max_size=2)
        ),
    }
)
_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system"]), "content": st.text(max_size=4)}
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": st.one_of(st.none(), st.text(max_size=3)),
            "tool_calls": st.lists(_call, max_size=2),
        }
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("tool"),
            "tool_call_id": _ids,
            "content": st.one_of(st.text(max_size=3), _values),
        },
        optional={"name": st.one_of(st.none(), st.just("f")), "is_error": st.booleans()},
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_message, max_size=6), st.sampled_from(sorted(ID_RULES)))
def test_random_histories_agree_with_the_full_check(messages: list[Any], rule: str) -> None:
    plain = _plain_history(messages, ID_RULES[rule])
    try:
        full = _full(messages, ID_RULES[rule])
    except InvalidRequestError:
        assert plain is None
        return
    if plain is not None:
        assert _state(plain) == _state(full)
