"""Structured output over the real SDKs and MockLLMServer: each provider's exact request in
native and tool mode, the parsed result (the same either way), invalid answers, bad input,
partial objects in streams, async, and run() with output_retries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from zerda.llm import OutputValidationError, create_interface, registry
from zerda.llm.registry import NAMES
from zerda.testing import MockLLMServer


class City(BaseModel):
    """A city."""

    name: str
    population: int | None = None


PROMPT = "Largest city of France?"
ANSWER = {"name": "Paris", "population": 2}
# pydantic's own schema of City, sent as it is where no strict dialect applies.
RAW = City.model_json_schema()
STRICT = {
    "title": "City",
    "description": "A city.",
    "type": "object",
    "properties": {
        "name": {"title": "Name", "type": "string"},
        "population": {"title": "Population", "anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
    "required": ["name", "population"],
    "additionalProperties": False,
}
USER_OPENAI = [{"role": "user", "content": PROMPT}]
OPENAI_TOOL = {
    "type": "function",
    "function": {"name": "City", "description": "A city.", "parameters": RAW},
}
OPENAI_CHOICE = {"type": "function", "function": {"name": "City"}}
JSON_SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "City", "schema": STRICT, "description": "A city.", "strict": True},
}

EXPECTED: dict[str, dict[str, Any]] = {
    "openai/native": {
        "model": "test-model",
        "messages": USER_OPENAI,
        "response_format": JSON_SCHEMA_FORMAT,
    },
    "openai/tool": {
        "model": "test-model",
        "messages": USER_OPENAI,
        "tool_choice": OPENAI_CHOICE,
        "tools": [OPENAI_TOOL],
    },
    # Groq: strict only on its gpt-oss models (the registry row); best effort otherwise.
    "groq/native": {
        "messages": USER_OPENAI,
        "model": "test-model",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "City", "schema": RAW, "description": "A city."},
        },
    },
    "groq/tool": {
        "messages": USER_OPENAI,
        "model": "test-model",
        "tool_choice": OPENAI_CHOICE,
        "tools": [OPENAI_TOOL],
    },
    "mistral/native": {
        "model": "test-model",
        "messages": [{"content": PROMPT, "role": "user"}],
        "stream": False,
        "response_format": JSON_SCHEMA_FORMAT,
    },
    "mistral/tool": {
        "model": "test-model",
        "messages": [{"content": PROMPT, "role": "user"}],
        "stream": False,
        "tools": [
            {
                "function": {"name": "City", "parameters": RAW, "description": "A city."},
                "type": "function",
            }
        ],
        "tool_choice": {"function": {"name": "City"}, "type": "function"},
    },
    "ollama/native": {
        "model": "test-model",
        "messages": USER_OPENAI,
        "format": RAW,
        "stream": False,
    },
    # Ollama enforces no tool_choice: a named choice sends only that tool.
    "ollama/tool": {
        "model": "test-model",
        "messages": USER_OPENAI,
        "tools": [OPENAI_TOOL],
        "stream": False,
    },
    "anthropic/native": {
        "max_tokens": 4096,
        "messages": USER_OPENAI,
        "model": "test-model",
        "output_config": {"format": {"type": "json_schema", "schema": STRICT}},
    },
    "anthropic/tool": {
        "max_tokens": 4096,
        "messages": USER_OPENAI,
        "model": "test-model",
        "tool_choice": {"type": "tool", "name": "City"},
        "tools": [{"name": "City", "description": "A city.", "input_schema": RAW}],
    },
    "bedrock/native": {
        "messages": [{"role": "user", "content": [{"text": PROMPT}]}],
        "outputConfig": {
            "textFormat": {
                "type": "json_schema",
                "structure": {
                    "jsonSchema": {
                        "name": "City",
                        "schema": json.dumps(STRICT),
                        "description": "A city.",
                    }
                },
            }
        },
    },
    "bedrock/tool": {
        "messages": [{"role": "user", "content": [{"text": PROMPT}]}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "City",
                        "description": "A city.",
                        "inputSchema": {"json": RAW},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": "City"}},
        },
    },
    "gemini/native": {
        "contents": [{"parts": [{"text": PROMPT}], "role": "user"}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": RAW},
    },
    "gemini/tool": {
        "contents": [{"parts": [{"text": PROMPT}], "role": "user"}],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "description": "A city.",
                        "name": "City",
                        "parameters": {
                            "description": "A city.",
                            "properties": {
                                "name": {"title": "Name", "type": "STRING"},
                                "population": {
                                    "nullable": True,
                                    "title": "Population",
                                    "type": "INTEGER",
                                },
                            },
                            "required": ["name"],
                            "title": "City",
                            "type": "OBJECT",
                        },
                    }
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": {"allowedFunctionNames": ["City"], "mode": "ANY"}},
        "generationConfig": {},
    },
}

# The rows on a shared wire send their parent's body, with what differs written here.
RESPONSES_TOOL = {
    "type": "function",
    "name": "City",
    "parameters": RAW,
    "strict": False,
    "description": "A city.",
}
EXPECTED["openai-responses/native"] = {
    "model": "test-model",
    "input": USER_OPENAI,
    "store": False,
    "text": {
        "format": {
            "type": "json_schema",
            "name": "City",
            "schema": STRICT,
            "description": "A city.",
            "strict": True,
        }
    },
}
EXPECTED["openai-responses/tool"] = {
    "model": "test-model",
    "input": USER_OPENAI,
    "tools": [RESPONSES_TOOL],
    "tool_choice": {"type": "function", "name": "City"},
    "store": False,
}
# anthropic 2.x's AnthropicBedrock / AnthropicVertex put the model in the URL and the API
# version in the body.
ANTHROPIC_VERSION = "2026-10-21"
# Chat Completions services with no strict dialect get the schema as given.
SCHEMA_AS_GIVEN = {
    "type": "json_schema",
    "json_schema": {"name": "City", "schema": RAW, "description": "A city."},
}
for _mode in ("native", "tool"):
    EXPECTED[f"azure/{_mode}"] = EXPECTED[f"openai/{_mode}"]
    EXPECTED[f"azure-responses/{_mode}"] = EXPECTED[f"openai-responses/{_mode}"]
    EXPECTED[f"vertex/{_mode}"] = EXPECTED[f"gemini/{_mode}"]
    for _cloud in ("anthropic-bedrock", "anthropic-vertex"):
        _body = {k: v for k, v in EXPECTED[f"anthropic/{_mode}"].items() if k != "model"}
        EXPECTED[f"{_cloud}/{_mode}"] = {**_body, "anthropic_version": ANTHROPIC_VERSION}
# Every OpenAI-compatible row sends the openai row's body; with no strict dialect the
# schema goes as given, and a row that cannot name a tool_choice forces the answer tool with
# "required" (LM Studio). Fireworks forces a call with "any" (its row's tool_choice_required):
# alone the answer tool is named, as everywhere.
for _row in registry.compatible():
    _traits = registry.get(_row).traits
    _forced = "required" if "name" not in _traits.tool_choice else None
    _tool = EXPECTED["openai/tool"]
    EXPECTED[f"{_row}/tool"] = {**_tool, "tool_choice": _forced} if _forced else _tool
    if "native" in _traits.structured_output:  # DeepSeek: json_object only, always a tool
        EXPECTED[f"{_row}/native"] = {
            "model": "test-model",
            "messages": USER_OPENAI,
            "response_format": SCHEMA_AS_GIVEN,
        }
# google-genai's Vertex AI converter sends tool_config's keys as they are (proto field names,
# which the API reads as it reads camelCase).
EXPECTED["vertex/tool"] = {
    **EXPECTED["gemini/tool"],
    "toolConfig": {"functionCallingConfig": {"allowed_function_names": ["City"], "mode": "ANY"}},
}

CASES = [
    (p, mode)
    for p in NAMES
    for mode in ("native", "tool")
    if mode in registry.get(p).traits.structured_output
]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def make(server: MockLLMServer, provider: str, model: str = "test-model", **kw: Any) -> Any:
    return create_interface(
        provider, model=model, max_retries=0, **server.client_options(provider), **kw
    )


def made(interfaces: Callable[..., Any], provider: str) -> Any:
    """``make``'s interface, made once per row for the module (tests/conftest.py): the
    parametrised tests below only call it."""
    return interfaces(provider, "test-model", max_retries=0)


def enqueue_answer(server: MockLLMServer, provider: str, mode: str, answer: Any = None) -> None:
    answer = ANSWER if answer is None else answer
    if mode == "native":
        text = answer if isinstance(answer, str) else json.dumps(answer)
        server.enqueue(provider, text=text)
    else:
        server.enqueue(provider, tool_calls=[{"name": "City", "arguments": answer}])


def expected_result(provider: str) -> dict[str, Any]:
    content = json.dumps(ANSWER)
    return {
        "content": content,
        "tool_calls": [],
        "stop_reason": "end_turn",
        "parsed": City(name="Paris", population=2),
        "message": {"role": "assistant", "content": content, "tool_calls": []},
        "cost": None,  # test-model has no price
    }


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("usage", "reasoning")}


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_exact_request_and_parsed_result(
    server: MockLLMServer, interfaces: Callable[..., Any], provider: str, mode: str
) -> None:
    llm = made(interfaces, provider)
    enqueue_answer(server, provider, mode)
    result = llm.generate(PROMPT, response_format=City, structured_output=mode)
    assert server.last_request(provider).body == EXPECTED[f"{provider}/{mode}"]
    assert _comparable(result) == expected_result(provider)
    assert isinstance(result["parsed"], City)


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_stream_partials_then_the_same_result(
    server: MockLLMServer, interfaces: Callable[..., Any], provider: str, mode: str
) -> None:
    llm = made(interfaces, provider)
    enqueue_answer(server, provider, mode)
    events = list(llm.stream(PROMPT, response_format=City, structured_output=mode))
    partials = [e["partial"] for e in events if e["type"] == "partial"]
    assert partials and partials[-1] == ANSWER
    assert [len(p) for p in partials] == sorted(len(p) for p in partials)
    assert events[-1]["type"] == "done" and events[-2]["type"] in ("partial", "text")
    assert "".join(e["text"] for e in events if e["type"] == "text") == json.dumps(ANSWER)
    assert not [e for e in events if e["type"] in ("tool_call", "tool_call_delta")]
    assert _comparable(events[-1]["result"]) == expected_result(provider)


@pytest.mark.parametrize("provider", NAMES)
def test_partials_grow_as_fragments_arrive(
    server: MockLLMServer, interfaces: Callable[..., Any], provider: str
) -> None:
    llm = made(interfaces, provider)
    server.enqueue(provider, tool_calls=[{"name": "City", "arguments": ANSWER}], fragments=6)
    events = list(llm.stream(PROMPT, response_format=City, structured_output="tool"))
    partials = [e["partial"] for e in events if e["type"] == "partial"]
    for earlier, later in zip(partials, partials[1:], strict=False):
        assert len(later) >= len(earlier)
    assert partials[-1] == ANSWER
    assert events[-1]["result"]["parsed"] == City(**ANSWER)


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_async_generate_and_stream_agree(
    server: MockLLMServer, interfaces: Callable[..., Any], provider: str, mode: str
) -> None:
    llm = made(interfaces, provider)

    async def both() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        enqueue_answer(server, provider, mode)
        result = await llm.generate_async(PROMPT, response_format=City, structured_output=mode)
        enqueue_answer(server, provider, mode)
        events = [
            e async for e in llm.stream_async(PROMPT, response_format=City, structured_output=mode)
        ]
        return result, events

    result, events = asyncio.run(both())
    assert _comparable(result) == expected_result(provider)
    assert _comparable(events[-1]["result"]) == expected_result(provider)
    assert [e["partial"] for e in events if e["type"] == "partial"][-1] == ANSWER


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_invalid_answer_keeps_content_and_says_why(
    server: MockLLMServer, interfaces: Callable[..., Any], provider: str, mode: str
) -> None:
    llm = made(interfaces, provider)
    enqueue_answer(server, provider, mode, {"name": 7})
    result = llm.generate(PROMPT, response_format=City, structured_output=mode)
    assert result["content"] == '{"name": 7}'
    assert result["parsed"] is None
    assert result["parse_error"].startswith("the answer does not match City: 1 validation error")
    enqueue_answer(server, provider, mode, {"name": 7})
    with pytest.raises(OutputValidationError) as info:
        llm.generate(PROMPT, response_format=City, structured_output=mode, raise_errors=True)
    assert info.value.type == "invalid_output"
    assert info.value.result is not None and info.value.result["content"] == '{"name": 7}'


def test_not_json_at_all(server: MockLLMServer) -> None:
    llm = make(server, "openai")
    server.enqueue("openai", text="Paris, I think")
    result = llm.generate(PROMPT, response_format=City)
    assert result["content"] == "Paris, I think"
    assert result["parsed"] is None
    assert result["parse_error"].startswith("the answer is not valid JSON: Expecting value")


SCHEMA = {
    "name": "city",
    "schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["name"],
    },
}


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_schema_dict_validated_with_jsonschema(
    server: MockLLMServer, interfaces: Callable[..., Any], provider: str, mode: str
) -> None:
    llm = made(interfaces, provider)
    name = "city"
    answer = {"name": "Paris", "population": 2}
    if mode == "native":
        server.enqueue(provider, text=json.dumps(answer))
    else:
        server.enqueue(provider, tool_calls=[{"name": name, "arguments": answer}])
    result = llm.generate(PROMPT, response_format=SCHEMA, structured_output=mode)
    assert result["parsed"] == answer and "parse_error" not in result
    if mode == "native":
        server.enqueue(provider, text='{"name": "Paris", "population": "many"}')
    else:
        bad = {"name": "Paris", "population": "many"}
        server.enqueue(provider, tool_calls=[{"name": name, "arguments": bad}])
    result = llm.generate(PROMPT, response_format=SCHEMA, structured_output=mode)
    assert result["parsed"] is None
    assert result["parse_error"] == (
        "the answer does not match the schema at population: 'many' is not of type 'integer'"
    )


def test_strict_nulls_for_optional_fields_are_dropped_before_validation(
    server: MockLLMServer,
) -> None:
    # Strict mode makes "population" required and nullable: the model writes null, which
    # the caller's own schema (population: integer, optional) does not allow.
    llm = make(server, "openai")
    server.enqueue("openai", text='{"name": "Paris", "population": null}')
    result = llm.generate(PROMPT, response_format=SCHEMA)
    assert result["parsed"] == {"name": "Paris"}
    assert result["content"] == '{"name": "Paris", "population": null}'


@pytest.mark.parametrize("provider", ["openai", "groq", "mistral", "ollama", "gemini"])
def test_json_mode(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)
    server.enqueue(provider, text='{"anything": [1, 2]}')
    result = llm.generate(PROMPT, response_format="json")
    assert result["parsed"] == {"anything": [1, 2]}
    body = server.last_request(provider).body
    native = {
        "openai": ("response_format", {"type": "json_object"}),
        "groq": ("response_format", {"type": "json_object"}),
        "mistral": ("response_format", {"type": "json_object"}),
        "ollama": ("format", "json"),
        "gemini": ("generationConfig", {"responseMimeType": "application/json"}),
    }[provider]
    assert body[native[0]] == native[1]


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_json_without_a_json_mode_travels_in_a_tool(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)
    server.enqueue(provider, tool_calls=[{"name": "json_answer", "arguments": {"a": 1}}])
    result = llm.generate(PROMPT, response_format="json")
    assert result["parsed"] == {"a": 1} and result["content"] == '{"a": 1}'
    body = server.last_request(provider).body
    assert "output_config" not in body and "outputConfig" not in body


WEATHER = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def test_gemini_2_with_tools_uses_the_tool_gemini_3_native(server: MockLLMServer) -> None:
    old = make(server, "gemini", model="gemini-2.5-flash")
    server.enqueue("gemini", tool_calls=[{"name": "City", "arguments": ANSWER}])
    assert old.generate(PROMPT, tools=[WEATHER], response_format=City)["parsed"] == City(**ANSWER)
    body = server.last_request("gemini").body
    assert "responseJsonSchema" not in body["generationConfig"]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    new = make(server, "gemini", model="gemini-3-flash-preview")
    server.enqueue("gemini", text=json.dumps(ANSWER))
    assert new.generate(PROMPT, tools=[WEATHER], response_format=City)["parsed"] == City(**ANSWER)
    assert server.last_request("gemini").body["generationConfig"]["responseJsonSchema"] == RAW


def test_tool_mode_beside_tools_lets_the_model_call_them_first(server: MockLLMServer) -> None:
    llm = make(server, "anthropic")
    server.enqueue("anthropic", tool_calls=[{"id": "t1", "name": "get_weather", "arguments": {}}])
    result = llm.generate(PROMPT, tools=[WEATHER], response_format=City, structured_output="tool")
    assert server.last_request("anthropic").body["tool_choice"] == {"type": "any"}
    assert [c["name"] for c in result["tool_calls"]] == ["get_weather"]
    assert result["parsed"] is None and "parse_error" not in result


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"response_format": 42}, "response_format must be a pydantic model class"),
        ({"response_format": City(name="x")}, "response_format must be a pydantic model class"),
        ({"response_format": {"schema": {}}}, "response_format: a schema dict needs a 'name'"),
        (
            {"response_format": {"name": "x", "schema": {"type": 3}}},
            "response_format 'x': schema at #/type: 3 is not valid under any of the given "
            "schemas (accepted: a type name ('array', 'boolean', 'integer', 'null', 'number', "
            "'object', 'string') or a list of them; checked against "
            "http://json-schema.org/draft-07/schema#)",
        ),
        ({"response_format": "json", "structured_output": "fast"}, "structured_output must be"),
        ({"structured_output": "tool"}, "structured_output needs a response_format"),
        (
            {
                "response_format": {
                    "name": "m",
                    "schema": {
                        "type": "object",
                        "properties": {
                            "x": {"type": "object", "additionalProperties": {"type": "integer"}}
                        },
                    },
                }
            },
            "response_format 'm': schema at #/properties/x: a map",
        ),
    ],
)
def test_bad_input_is_refused_before_sending(
    server: MockLLMServer, kwargs: dict[str, Any], message: str
) -> None:
    llm = make(server, "openai")
    before = len(server.requests)
    result = llm.generate(PROMPT, **kwargs)
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"].startswith(message)
    assert len(server.requests) == before


def test_results_without_response_format_keep_their_shape(server: MockLLMServer) -> None:
    llm = make(server, "openai")
    server.enqueue("openai", text="{}")
    assert "parsed" not in llm.generate(PROMPT)


def test_strict_tool_for_openai_shaped_providers(server: MockLLMServer) -> None:
    tool = {**WEATHER, "strict": True}
    strict_params = {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}},
        "required": ["city"],
        "additionalProperties": False,
    }
    for provider in ("openai", "groq", "mistral"):
        server.enqueue(provider, text="ok")
        make(server, provider).generate(PROMPT, tools=[tool])
        function = server.last_request(provider).body["tools"][0]["function"]
        assert function["strict"] is True
        assert function["parameters"] == strict_params
    server.enqueue("anthropic", text="ok")
    make(server, "anthropic").generate(PROMPT, tools=[tool])
    assert server.last_request("anthropic").body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather in a city.",
            "input_schema": WEATHER["parameters"],
        }
    ]


def test_run_ends_with_a_parsed_answer_after_tools(server: MockLLMServer) -> None:
    calls = []

    def get_weather(city: str) -> str:
        """Weather in a city."""
        calls.append(city)
        return "sunny"

    llm = make(server, "openai")
    server.enqueue(
        "openai", tool_calls=[{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]
    )
    server.enqueue("openai", text=json.dumps(ANSWER))
    result = llm.run(PROMPT, tools=[get_weather], response_format=City)
    assert calls == ["Paris"]
    assert result["parsed"] == City(**ANSWER) and result["turns"] == 2


def test_run_sends_one_validation_error_back(server: MockLLMServer) -> None:
    llm = make(server, "openai")
    server.enqueue("openai", text='{"name": 7}')
    server.enqueue("openai", text=json.dumps(ANSWER))
    result = llm.run(PROMPT, response_format=City, output_retries=1)
    assert result["parsed"] == City(**ANSWER) and result["turns"] == 2
    feedback = server.last_request("openai").body["messages"]
    assert feedback[1] == {"role": "assistant", "content": '{"name": 7}'}
    assert feedback[2]["role"] == "user"
    assert feedback[2]["content"].startswith(
        "Your answer is not valid: the answer does not match City: 1 validation error"
    )
    # Without retries left, the invalid answer is the result (or raised, when asked).
    server.enqueue("openai", text='{"name": 7}')
    server.enqueue("openai", text='{"name": 8}')
    result = llm.run(PROMPT, response_format=City, output_retries=1)
    assert result["parsed"] is None and result["turns"] == 2 and "parse_error" in result
    server.enqueue("openai", text='{"name": 7}')
    with pytest.raises(OutputValidationError):
        llm.run(PROMPT, response_format=City, raise_errors=True)


def test_run_async_with_retry(server: MockLLMServer) -> None:
    llm = make(server, "anthropic")
    server.enqueue("anthropic", text="not json")
    server.enqueue("anthropic", text=json.dumps(ANSWER))
    result = asyncio.run(llm.run_async(PROMPT, response_format=City, output_retries=1))
    assert result["parsed"] == City(**ANSWER) and result["turns"] == 2


def test_caller_schema_is_not_mutated(server: MockLLMServer) -> None:
    schema = json.loads(json.dumps(SCHEMA))
    llm = make(server, "openai")
    server.enqueue("openai", text='{"name": "x"}')
    llm.generate(PROMPT, response_format=schema)
    assert schema == SCHEMA


def test_groq_with_tools_answers_in_a_tool_and_is_strict_only_on_gpt_oss(
    server: MockLLMServer,
) -> None:
    llm = make(server, "groq")
    server.enqueue("groq", tool_calls=[{"name": "City", "arguments": ANSWER}])
    assert llm.generate(PROMPT, tools=[WEATHER], response_format=City)["parsed"] == City(**ANSWER)
    body = server.last_request("groq").body
    assert "response_format" not in body and body["tool_choice"] == "required"
    oss = make(server, "groq", model="openai/gpt-oss-120b")
    server.enqueue("groq", text=json.dumps(ANSWER))
    oss.generate(PROMPT, response_format=City)
    assert server.last_request("groq").body["response_format"] == JSON_SCHEMA_FORMAT


def test_openai_style_response_formats_are_read(server: MockLLMServer) -> None:
    llm = make(server, "openai")
    server.enqueue("openai", text='{"a": 1}')
    assert llm.generate(PROMPT, response_format={"type": "json_object"})["parsed"] == {"a": 1}
    server.enqueue("openai", text='{"name": "Paris"}')
    wrapped = {"type": "json_schema", "json_schema": SCHEMA}
    assert llm.generate(PROMPT, response_format=wrapped)["parsed"] == {"name": "Paris"}


@pytest.mark.parametrize(
    ("provider", "old", "new"),
    [
        ("anthropic", "claude-3-5-haiku-latest", "claude-haiku-4-5"),
        ("anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929"),
        (
            "bedrock",
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ),
    ],
)
def test_models_without_native_output_answer_in_a_tool(
    server: MockLLMServer, provider: str, old: str, new: str
) -> None:
    llm = make(server, provider, model=old)
    server.enqueue(provider, tool_calls=[{"name": "City", "arguments": ANSWER}])
    assert llm.generate(PROMPT, response_format=City)["parsed"] == City(**ANSWER)
    body = server.last_request(provider).body
    assert "output_config" not in body and "outputConfig" not in body
    newer = make(server, provider, model=new)
    assert newer._prepare(PROMPT, response_format=City).output.mode == "native"
