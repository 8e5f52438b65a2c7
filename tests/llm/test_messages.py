"""The unified history: validation errors name the index and field; ids are reconciled."""

from __future__ import annotations

import copy

import pytest

from zerda.llm import InvalidRequestError, tool_result
from zerda.llm.messages import resolve_tool_ids, split_system, validate_messages


def test_a_string_is_one_user_turn() -> None:
    assert validate_messages("hi") == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([{"role": "bot", "content": "x"}], r"messages\[0\]: unknown role 'bot'"),
        ([{"content": "x"}], r"messages\[0\]: unknown role None"),
        (["hi"], r"messages\[0\]: must be a dict"),
        (
            [{"role": "user", "content": "a"}, {"role": "user"}],
            r"messages\[1\]: user message 'content' must be a string, got missing",
        ),
        (
            [{"role": "system", "content": 3}],
            r"messages\[0\]: system message 'content' must be a string, got a int",
        ),
        ([{"role": "tool", "tool_call_id": "a"}], r"messages\[0\]: tool message has no 'content'"),
        (
            [{"role": "assistant", "tool_calls": [{"arguments": {}}]}],
            r"messages\[0\]: tool_calls\[0\] has no 'name'",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": "{}"}]}],
            r"tool_calls\[0\].arguments must be a dict, not str",
        ),
        ([{"role": "assistant", "tool_calls": "f"}], r"messages\[0\]: 'tool_calls' must be a list"),
        (
            [{"role": "assistant", "tool_calls": [{"name": "f", "id": 3}]}],
            r"tool_calls\[0\].id must be a string or None",
        ),
    ],
)
def test_validation_names_the_message_index_and_field(messages, error) -> None:
    with pytest.raises(InvalidRequestError, match=error):
        validate_messages(messages)


def test_messages_must_be_a_list_or_string() -> None:
    with pytest.raises(InvalidRequestError, match="messages must be a string or a list"):
        validate_messages(42)  # type: ignore[arg-type]


def test_validation_returns_normalised_copies() -> None:
    given = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "", "name": "f"}], "extra": 1},
        {"role": "tool", "tool_call_id": None, "content": {"a": 1}},
    ]
    before = copy.deepcopy(given)
    assert validate_messages(given) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": None, "name": "f", "arguments": {}}],
        },
        {
            "role": "tool",
            "tool_call_id": None,
            "name": None,
            "content": {"a": 1},
            "is_error": False,
        },
    ]
    assert given == before


def test_tool_result_helper() -> None:
    call = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}
    assert tool_result(call, {"temp": 3}) == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "get_weather",
        "content": {"temp": 3},
        "is_error": False,
    }
    assert tool_result(call, "boom", is_error=True)["is_error"] is True


def test_split_system_puts_the_argument_first_and_joins_system_messages() -> None:
    messages = validate_messages(
        [
            {"role": "system", "content": "A"},
            {"role": "user", "content": "q"},
            {"role": "system", "content": "B"},
        ]
    )
    assert split_system(messages, "S") == ("S\n\nA\n\nB", [{"role": "user", "content": "q"}])
    assert split_system([{"role": "user", "content": "q"}], None) == (
        None,
        [{"role": "user", "content": "q"}],
    )


def _turn(ids, result_ids, names=("f", "g")):
    calls = [{"id": i, "name": n, "arguments": {}} for i, n in zip(ids, names, strict=False)]
    results = [
        {"role": "tool", "tool_call_id": r, "content": f"out{k}"} for k, r in enumerate(result_ids)
    ]
    return validate_messages(
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *results,
        ]
    )


def test_ids_present_are_kept_and_results_paired_by_id_even_out_of_order() -> None:
    out = resolve_tool_ids(_turn(["a", "b"], ["b", "a"]))
    assert [c["id"] for c in out[1]["tool_calls"]] == ["a", "b"]
    assert [(m["tool_call_id"], m["name"], m["content"]) for m in out[2:]] == [
        ("b", "g", "out0"),
        ("a", "f", "out1"),
    ]


def test_id_less_calls_get_deterministic_ids_paired_by_position() -> None:
    out = resolve_tool_ids(_turn([None, None], [None, None]))
    assert [c["id"] for c in out[1]["tool_calls"]] == ["call_1_0", "call_1_1"]
    assert [(m["tool_call_id"], m["name"]) for m in out[2:]] == [
        ("call_1_0", "f"),
        ("call_1_1", "g"),
    ]
    assert out == resolve_tool_ids(_turn([None, None], [None, None]))


def test_results_with_ids_pair_with_id_less_calls_by_position() -> None:
    out = resolve_tool_ids(_turn([None, None], ["x", "y"]))
    assert [m["tool_call_id"] for m in out[2:]] == ["call_1_0", "call_1_1"]


def test_make_id_maps_ids_consistently_for_call_and_result() -> None:
    out = resolve_tool_ids(
        _turn(["toolu_ABC", None], ["toolu_ABC", None]), lambda o, i, j: f"M{i}{j}"
    )
    assert [c["id"] for c in out[1]["tool_calls"]] == ["M10", "M11"]
    assert [m["tool_call_id"] for m in out[2:]] == ["M10", "M11"]


def test_duplicated_ids_are_made_unique() -> None:
    out = resolve_tool_ids(_turn(["dup", "dup"], ["dup", "dup"]))
    ids = [c["id"] for c in out[1]["tool_calls"]]
    assert len(set(ids)) == 2
    assert [m["tool_call_id"] for m in out[2:]] == ids


def test_a_result_answering_no_call_is_refused() -> None:
    with pytest.raises(
        InvalidRequestError, match=r"messages\[3\]: tool_call_id 'zzz' matches no open tool call"
    ):
        resolve_tool_ids(_turn(["a", "b"], ["a", "zzz"]))


def test_a_result_without_a_preceding_call_is_refused() -> None:
    messages = validate_messages(
        [{"role": "user", "content": "q"}, {"role": "tool", "content": "x"}]
    )
    with pytest.raises(
        InvalidRequestError, match=r"messages\[1\]: tool result without a preceding"
    ):
        resolve_tool_ids(messages)


def test_a_call_left_without_result_is_refused() -> None:
    messages = [*_turn(["a", "b"], ["a"]), {"role": "user", "content": "next"}]
    with pytest.raises(
        InvalidRequestError,
        match=r"messages\[1\]: tool call\(s\) 'g' have no tool result before messages\[3\]",
    ):
        resolve_tool_ids(messages)


def test_resolve_never_mutates_its_input() -> None:
    messages = _turn([None, None], [None, None])
    before = copy.deepcopy(messages)
    resolve_tool_ids(messages)
    assert messages == before


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (
            {"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"x": float("nan")}}]},
            r"messages\[0\]: tool_calls\[0\].arguments cannot be sent as JSON: Out of range float",
        ),
        (
            {"role": "tool", "tool_call_id": "a", "content": {"x": {1, 2}}},
            r"messages\[0\]: tool message 'content' cannot be sent as JSON: Object of type set",
        ),
    ],
)
def test_values_json_cannot_carry_are_refused(message: dict, error: str) -> None:
    with pytest.raises(InvalidRequestError, match=error):
        validate_messages([message])
