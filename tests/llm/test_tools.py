"""zerda.llm.tools, sentence by sentence against spec/llm-tools.txt (and DESIGN.md §3)."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zerda
from zerda.llm import tools
from zerda.llm.tools import (
    ToolCall,
    _normalize_tool,
    parse_anthropic_tool_calls,
    parse_bedrock_tool_calls,
    parse_gemini_tool_calls,
    parse_ollama_tool_calls,
    parse_openai_tool_calls,
    to_anthropic_tools,
    to_bedrock_tools,
    to_gemini_tools,
    to_groq_tools,
    to_mistral_tools,
    to_ollama_tools,
    to_openai_tools,
    tool_calls_to_dicts,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOL = {"name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA}
EMPTY_SCHEMA = {"type": "object", "properties": {}}

# --- ToolCall ------------------------------------------------------------------------


def test_toolcall_is_a_dataclass_with_id_name_arguments() -> None:
    assert [f.name for f in dataclasses.fields(ToolCall)] == ["id", "name", "arguments"]
    call = ToolCall(id=None, name="f", arguments={})
    assert call.id is None


# --- _normalize_tool -----------------------------------------------------------------


def test_normalize_tool_accepts_parameters() -> None:
    assert _normalize_tool(TOOL) == {
        "name": "get_weather",
        "description": "Weather for a city.",
        "schema": SCHEMA,
    }


def test_normalize_tool_accepts_input_schema() -> None:
    tool = {"name": "f", "description": "d", "input_schema": SCHEMA}
    assert _normalize_tool(tool) == {"name": "f", "description": "d", "schema": SCHEMA}


def test_normalize_tool_input_schema_wins_over_parameters() -> None:
    tool = {"name": "f", "input_schema": SCHEMA, "parameters": EMPTY_SCHEMA}
    assert _normalize_tool(tool)["schema"] is SCHEMA


def test_normalize_tool_defaults_to_an_empty_object_schema() -> None:
    assert _normalize_tool({"name": "f"}) == {
        "name": "f",
        "description": "",
        "schema": EMPTY_SCHEMA,
    }


@pytest.mark.parametrize("tool", [{}, {"name": ""}, {"name": None, "parameters": SCHEMA}])
def test_normalize_tool_requires_a_name(tool: dict) -> None:
    with pytest.raises(ValueError, match="Each tool must have a 'name'."):
        _normalize_tool(tool)


@pytest.mark.parametrize(
    "convert", [to_openai_tools, to_anthropic_tools, to_bedrock_tools, to_gemini_tools]
)
def test_every_converter_propagates_the_missing_name_error(convert) -> None:
    with pytest.raises(ValueError, match="name"):
        convert([TOOL, {"description": "nameless"}])


# --- converters ----------------------------------------------------------------------


def test_to_openai_tools_shape() -> None:
    assert to_openai_tools([TOOL]) == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": SCHEMA,
            },
        }
    ]


def test_groq_mistral_ollama_converters_are_the_same_object() -> None:
    assert to_groq_tools is to_openai_tools
    assert to_mistral_tools is to_openai_tools
    assert to_ollama_tools is to_openai_tools


def test_to_anthropic_tools_shape() -> None:
    assert to_anthropic_tools([TOOL]) == [
        {"name": "get_weather", "description": "Weather for a city.", "input_schema": SCHEMA}
    ]


def test_to_bedrock_tools_returns_the_tool_config_dict() -> None:
    assert to_bedrock_tools([TOOL]) == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "Weather for a city.",
                    "inputSchema": {"json": SCHEMA},
                }
            }
        ]
    }


def test_to_bedrock_tools_leaves_out_an_empty_description() -> None:
    # Bedrock: ToolSpecification.description has min length 1.
    assert to_bedrock_tools([{"name": "f"}]) == {
        "tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": EMPTY_SCHEMA}}}]
    }


def test_to_gemini_tools_wraps_all_declarations_in_one_element() -> None:
    other = {"name": "get_time", "description": "Time.", "input_schema": EMPTY_SCHEMA}
    result = to_gemini_tools([TOOL, other])
    assert result == [
        {
            "function_declarations": [
                {"name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA},
                {"name": "get_time", "description": "Time.", "parameters": EMPTY_SCHEMA},
            ]
        }
    ]


def test_to_gemini_tools_output_is_accepted_by_google_genai() -> None:
    from google.genai import types

    (wrapper,) = to_gemini_tools([TOOL])
    types.Tool.model_validate(wrapper)


@pytest.mark.parametrize(
    "convert",
    [
        to_openai_tools,
        to_groq_tools,
        to_mistral_tools,
        to_ollama_tools,
        to_anthropic_tools,
        to_bedrock_tools,
        to_gemini_tools,
    ],
)
@pytest.mark.parametrize("falsy", [None, []])
def test_every_converter_returns_none_for_falsy_input(convert, falsy) -> None:
    assert convert(falsy) is None


@pytest.mark.parametrize(
    "convert", [to_openai_tools, to_anthropic_tools, to_bedrock_tools, to_gemini_tools]
)
def test_converters_never_mutate_their_input(convert) -> None:
    given_tools = [copy.deepcopy(TOOL), {"name": "g", "input_schema": copy.deepcopy(SCHEMA)}]
    before = copy.deepcopy(given_tools)
    convert(given_tools)
    assert given_tools == before


# --- parsers: OpenAI / Groq / Mistral -----------------------------------------------


def _openai_message(*calls: tuple[str, str, object]):
    from openai.types.chat import ChatCompletionMessage

    return ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, n, a in calls
            ]
            or None,
        }
    )


def test_parse_openai_tool_calls_reads_id_name_and_json_arguments() -> None:
    message = _openai_message(("call_1", "get_weather", '{"city": "Paris"}'), ("call_2", "f", "{}"))
    assert parse_openai_tool_calls(message) == [
        ToolCall("call_1", "get_weather", {"city": "Paris"}),
        ToolCall("call_2", "f", {}),
    ]


def test_parse_openai_tool_calls_keeps_invalid_json_under_raw() -> None:
    message = _openai_message(("call_1", "f", '{"city": "Par'))
    assert parse_openai_tool_calls(message) == [ToolCall("call_1", "f", {"_raw": '{"city": "Par'})]


def test_parse_openai_tool_calls_keeps_none_arguments_under_raw() -> None:
    # TypeError from json.loads(None) falls back too.
    class Fn:
        name = "f"
        arguments = None

    class Call:
        id = "c"
        function = Fn()

    class Message:
        tool_calls = [Call()]

    assert parse_openai_tool_calls(Message()) == [ToolCall("c", "f", {"_raw": None})]


@pytest.mark.parametrize("raw", ["", "   ", "\n"])
def test_empty_argument_string_means_no_arguments(raw: str) -> None:
    assert parse_openai_tool_calls(_openai_message(("c", "f", raw)))[0].arguments == {}


@pytest.mark.parametrize("raw", ["[1, 2]", "3", '"text"', "null", "true"])
def test_json_that_is_not_an_object_stays_under_raw(raw: str) -> None:
    assert parse_openai_tool_calls(_openai_message(("c", "f", raw)))[0].arguments == {"_raw": raw}


def test_arguments_already_a_dict_are_used_as_they_are() -> None:
    # Mistral's SDK may hand back a dict.
    message = {
        "tool_calls": [{"id": "abcDEF123", "function": {"name": "f", "arguments": {"a": 1}}}]
    }
    assert parse_openai_tool_calls(message) == [ToolCall("abcDEF123", "f", {"a": 1})]


def test_parse_openai_tool_calls_returns_empty_list_without_calls() -> None:
    assert parse_openai_tool_calls(_openai_message()) == []


# --- parsers: Anthropic -------------------------------------------------------------


def _anthropic_content(blocks: list[dict]):
    from anthropic.types import Message

    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": blocks,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    ).content


def test_parse_anthropic_tool_calls_reads_tool_use_blocks_and_skips_text() -> None:
    content = _anthropic_content(
        [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "noop", "input": {}},
        ]
    )
    assert parse_anthropic_tool_calls(content) == [
        ToolCall("toolu_1", "get_weather", {"city": "Oslo"}),
        ToolCall("toolu_2", "noop", {}),
    ]


def test_parse_anthropic_tool_calls_returns_empty_list_without_calls() -> None:
    assert parse_anthropic_tool_calls(_anthropic_content([{"type": "text", "text": "hi"}])) == []
    assert parse_anthropic_tool_calls([]) == []


# --- parsers: Gemini ----------------------------------------------------------------


def _gemini_response(parts: list[dict], candidates: int = 1):
    from google.genai import types

    return types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finish_reason": "STOP"}
                for _ in range(candidates)
            ]
        }
    )


def test_parse_gemini_tool_calls_reads_function_call_parts_with_id_none() -> None:
    response = _gemini_response(
        [
            {"text": "ok"},
            {"function_call": {"name": "get_weather", "args": {"city": "Rome"}}},
            {"function_call": {"name": "noop"}},
        ]
    )
    assert parse_gemini_tool_calls(response) == [
        ToolCall(None, "get_weather", {"city": "Rome"}),
        ToolCall(None, "noop", {}),
    ]


def test_parse_gemini_tool_calls_passes_a_non_empty_id_through() -> None:
    response = _gemini_response(
        [
            {"function_call": {"id": "fc_7", "name": "f", "args": {}}},
            {"function_call": {"id": "", "name": "g", "args": {"x": 1}}},
        ]
    )
    assert parse_gemini_tool_calls(response) == [
        ToolCall("fc_7", "f", {}),
        ToolCall(None, "g", {"x": 1}),
    ]


def test_parse_gemini_tool_calls_reads_each_candidate() -> None:
    response = _gemini_response([{"function_call": {"name": "f", "args": {"a": 1}}}], candidates=2)
    assert parse_gemini_tool_calls(response) == [ToolCall(None, "f", {"a": 1})] * 2


def test_parse_gemini_tool_calls_returns_empty_list_without_calls() -> None:
    from google.genai import types

    assert parse_gemini_tool_calls(_gemini_response([{"text": "hi"}])) == []
    assert parse_gemini_tool_calls(types.GenerateContentResponse.model_validate({})) == []


def test_parse_gemini_tool_calls_returns_plain_dicts() -> None:
    (call,) = parse_gemini_tool_calls(
        _gemini_response([{"function_call": {"name": "f", "args": {"a": [1]}}}])
    )
    assert type(call.arguments) is dict


# --- parsers: Bedrock ---------------------------------------------------------------


def test_parse_bedrock_tool_calls_reads_tool_use_dicts() -> None:
    blocks = [
        {"text": "Checking."},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Lima"}}},
        {"toolUse": {"toolUseId": "tooluse_2", "name": "noop", "input": {}}},
    ]
    assert parse_bedrock_tool_calls(blocks) == [
        ToolCall("tooluse_1", "get_weather", {"city": "Lima"}),
        ToolCall("tooluse_2", "noop", {}),
    ]


def test_parse_bedrock_tool_calls_returns_empty_list_without_calls() -> None:
    assert parse_bedrock_tool_calls([{"text": "hi"}]) == []
    assert parse_bedrock_tool_calls([]) == []


# --- parsers: Ollama ----------------------------------------------------------------


def test_parse_ollama_tool_calls_uses_dict_arguments_as_they_are() -> None:
    import ollama

    message = ollama.Message(
        role="assistant",
        tool_calls=[
            ollama.Message.ToolCall(function={"name": "get_weather", "arguments": {"city": "Kyiv"}})
        ],
    )
    assert parse_ollama_tool_calls(message) == [ToolCall(None, "get_weather", {"city": "Kyiv"})]


def test_parse_ollama_tool_calls_parses_string_arguments() -> None:
    message = {"tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}
    assert parse_ollama_tool_calls(message) == [ToolCall(None, "f", {"a": 1})]


def test_parse_ollama_tool_calls_keeps_invalid_json_under_raw() -> None:
    message = {"tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}
    assert parse_ollama_tool_calls(message) == [ToolCall(None, "f", {"_raw": "{oops"})]


def test_parse_ollama_tool_calls_returns_empty_list_without_calls() -> None:
    import ollama

    assert parse_ollama_tool_calls(ollama.Message(role="assistant", content="hi")) == []
    assert parse_ollama_tool_calls({"role": "assistant"}) == []


# --- tool_calls_to_dicts ------------------------------------------------------------


def test_tool_calls_to_dicts() -> None:
    calls = [ToolCall("a", "f", {"x": 1}), ToolCall(None, "g", {})]
    assert tool_calls_to_dicts(calls) == [
        {"id": "a", "name": "f", "arguments": {"x": 1}},
        {"id": None, "name": "g", "arguments": {}},
    ]
    assert tool_calls_to_dicts([]) == []


# --- properties ---------------------------------------------------------------------


@given(st.text())
def test_no_parser_raises_on_any_argument_string_and_raw_keeps_it(raw: str) -> None:
    openai_like = {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": raw}}]}
    ollama_like = {"tool_calls": [{"function": {"name": "f", "arguments": raw}}]}
    for parsed in (parse_openai_tool_calls(openai_like), parse_ollama_tool_calls(ollama_like)):
        (call,) = parsed
        if "_raw" in call.arguments and len(call.arguments) == 1:
            assert call.arguments["_raw"] == raw
        elif raw.strip():
            assert call.arguments == json.loads(raw)
        else:
            assert call.arguments == {}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4))
def test_valid_json_objects_round_trip(obj: dict) -> None:
    message = {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": json.dumps(obj)}}]}
    assert parse_openai_tool_calls(message)[0].arguments == obj


# --- imports ------------------------------------------------------------------------


SDKS = (
    "openai",
    "groq",
    "mistralai",
    "ollama",
    "anthropic",
    "boto3",
    "botocore",
    "google.genai",
    "pydantic",
)


def test_import_zerda_llm_loads_no_sdk_and_no_pydantic() -> None:
    code = (
        "import sys, zerda, zerda.llm, zerda.llm.tools\n"
        f"loaded = [m for m in {SDKS!r} if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(zerda.__file__).parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == ""


def test_tools_module_imports_no_sdk() -> None:
    source = Path(tools.__file__).read_text()
    for sdk in SDKS:
        assert f"import {sdk}" not in source and f"from {sdk}" not in source
