"""Tool arguments and outputs are JSON-encoded once (issue 12): the history check keeps
the text it made, and the providers that send text reuse it. The C encoder built once is
exactly ``json.dumps(value, ensure_ascii=False, allow_nan=False)`` (canary)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from zerda.llm import messages as m
from zerda.llm.base import tool_output_text

VALUES: list[Any] = [
    {"a": 1, "b": [1.5, None, True, False], "c": {"d": 'é\u2028"\\\n'}},
    [1, "two", {"3": [4]}],
    {"big": 10**30, "neg": -0.0, "float": 1e-7, "emoji": "😀"},
    {},
    [],
    "text",
    12,
    None,
]


@pytest.mark.parametrize("value", VALUES)
def test_the_encoder_writes_what_json_dumps_writes(value: Any) -> None:
    assert m._encode(value) == json.dumps(value, ensure_ascii=False, allow_nan=False)


def test_the_encoder_refuses_what_json_dumps_refuses() -> None:
    with pytest.raises(ValueError):
        m._encode({"x": math.nan})
    with pytest.raises(TypeError):
        m._encode({"x": {1, 2}})
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert m.json_problem(loop) is not None  # a cycle is refused, not looped over


def test_canary_the_c_encoder_is_there_on_cpython() -> None:
    import platform

    if platform.python_implementation() == "CPython":
        assert m._C_ENCODER is not None


def test_a_checked_call_keeps_its_text_and_equals_the_callers_arguments() -> None:
    arguments = {"city": "Paris", "n": 2}
    checked = m.validate_messages(
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "name": "f", "arguments": arguments}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": [{"k": 1}]},
        ]
    )
    args = checked[1]["tool_calls"][0]["arguments"]
    assert args == arguments and args is not arguments  # a copy: the caller's is untouched
    assert args.json == json.dumps(arguments, ensure_ascii=False)
    assert tool_output_text(args) == args.json
    output = checked[2]["content"]
    assert output == [{"k": 1}] and tool_output_text(output) == '[{"k": 1}]'


def test_tool_output_text_of_plain_values() -> None:
    assert tool_output_text("as is") == "as is"
    assert tool_output_text({"é": 1}) == '{"é": 1}'
    assert tool_output_text(3) == "3"
