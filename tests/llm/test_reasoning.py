"""reasoning=...: the shape check, the per-family table, the exact request each provider's
SDK sends for reasoning="high" and reasoning=False (as MockLLMServer received it),
refusals before sending, reasoning text in results and streams (the done result equal to
generate's) and usage summed by run()."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.test_base import KEY, Echo
from zerda.llm import errors, registry
from zerda.llm.providers import create_interface
from zerda.llm.reasoning import (
    REFUSE,
    TABLE,
    Reasoning,
    check_reasoning,
    family_for,
    plan_reasoning,
)
from zerda.llm.usage import add_usage, make_usage
from zerda.testing import MockLLMServer
from zerda.testing._script import Raw


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def make(server: MockLLMServer, provider: str, model: str, **options: Any) -> Any:
    return create_interface(provider, model, **server.client_options(provider), **options)


def sent(server: MockLLMServer, provider: str) -> dict[str, Any]:
    body: dict[str, Any] = server.last_request(provider).body
    return body


# --- the value's shape --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (False, Reasoning(on=False)),
        ("high", Reasoning(on=True, effort="high")),
        ({"budget_tokens": 2048}, Reasoning(on=True, budget_tokens=2048)),
        (
            {"effort": "low", "summary": False},
            Reasoning(on=True, effort="low", summary=False),
        ),
    ],
)
def test_check_reasoning(value: Any, expected: Reasoning | None) -> None:
    assert check_reasoning(value) == expected


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (
            "max",
            "reasoning effort 'max' is unknown: it is one of 'minimal', 'low', 'medium', 'high'",
        ),
        (True, "reasoning must be None, False, 'minimal'"),
        ({"level": "high"}, "reasoning has unknown key(s) 'level'"),
        ({"budget_tokens": "many"}, "budget_tokens must be an int"),
        ({"summary": "yes"}, "summary must be True or False"),
    ],
)
def test_bad_values_are_refused_before_sending(
    server: MockLLMServer, value: Any, says: str
) -> None:
    result = make(server, "openai", "gpt-5.1").generate("hi", reasoning=value)
    assert result["error"]["type"] == "invalid_request"
    assert says in result["error"]["message"]
    assert result["reasoning"] is None
    assert server.requests == []


def test_every_provider_has_a_fallback_row() -> None:
    for mode, families in TABLE.items():
        assert families[-1].pattern == "", mode
        assert family_for(mode, "some-new-model") is families[-1]


def test_the_table_has_a_mapping_for_every_registry_reasoning_mode() -> None:
    """The registry row's traits.reasoning names the table entry: every mode a row names
    is mapped, and no table entry is left that no row uses."""
    modes = {registry.get(n).traits.reasoning for n in registry.NAMES} - {None}
    assert modes == set(TABLE)


# --- the exact requests -------------------------------------------------------------------

CASES = [
    # provider, model, reasoning, the request fields it adds
    ("openai", "gpt-5.1", "high", {"reasoning_effort": "high"}),
    ("openai", "gpt-5.1", False, {"reasoning_effort": "none"}),
    ("openai", "gpt-5-mini", "minimal", {"reasoning_effort": "minimal"}),
    ("openai", "gpt-4o", False, {}),
    (
        "groq",
        "openai/gpt-oss-120b",
        "high",
        {"reasoning_effort": "high", "reasoning_format": "parsed"},
    ),
    (
        "groq",
        "qwen/qwen3-32b",
        "high",
        {"reasoning_effort": "default", "reasoning_format": "parsed"},
    ),
    ("groq", "qwen/qwen3-32b", False, {"reasoning_effort": "none"}),
    (
        "groq",
        "openai/gpt-oss-20b",
        {"effort": "low", "summary": False},
        {"reasoning_effort": "low", "reasoning_format": "hidden"},
    ),
    ("mistral", "mistral-small-latest", "high", {"reasoning_effort": "high"}),
    ("mistral", "mistral-small-latest", False, {"reasoning_effort": "none"}),
    ("mistral", "magistral-medium-latest", "high", {"prompt_mode": "reasoning"}),
    ("ollama", "qwen3:8b", "high", {"think": True}),
    ("ollama", "qwen3:8b", False, {"think": False}),
    ("ollama", "gpt-oss:20b", "high", {"think": "high"}),
    (
        "anthropic",
        "claude-haiku-4-5",
        "high",
        {"thinking": {"type": "enabled", "budget_tokens": 16384}, "max_tokens": 20480},
    ),
    ("anthropic", "claude-haiku-4-5", False, {"thinking": {"type": "disabled"}}),
    (
        "anthropic",
        "claude-opus-4-6",
        "high",
        {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}},
    ),
    (
        "anthropic",
        "claude-opus-4-6",
        {"budget_tokens": 2000},
        {"thinking": {"type": "enabled", "budget_tokens": 2000}, "max_tokens": 6096},
    ),
    ("anthropic", "claude-3-5-haiku-latest", False, {}),
]


def _base_body(server: MockLLMServer, provider: str, model: str) -> dict[str, Any]:
    make(server, provider, model).generate("hi")
    return sent(server, provider)


@pytest.mark.parametrize(("provider", "model", "reasoning", "fields"), CASES)
def test_request_fields(
    server: MockLLMServer, provider: str, model: str, reasoning: Any, fields: dict[str, Any]
) -> None:
    """The whole body the SDK sent: the body without reasoning, plus exactly these fields."""
    server.set_default(provider, text="ok")
    expected = {**_base_body(server, provider, model), **fields}
    result = make(server, provider, model).generate("hi", reasoning=reasoning)
    assert result["stop_reason"] == "end_turn", result.get("error")
    assert sent(server, provider) == expected


def test_openai_request_high_whole_body(server: MockLLMServer) -> None:
    server.enqueue("openai", text="4")
    make(server, "openai", "gpt-5.1").generate("2+2?", reasoning="high")
    assert sent(server, "openai") == {
        "model": "gpt-5.1",
        "messages": [{"role": "user", "content": "2+2?"}],
        "reasoning_effort": "high",
    }


def test_anthropic_request_false_whole_body(server: MockLLMServer) -> None:
    server.enqueue("anthropic", text="4")
    make(server, "anthropic", "claude-haiku-4-5").generate("2+2?", reasoning=False)
    assert sent(server, "anthropic") == {
        "model": "claude-haiku-4-5",
        "messages": [{"role": "user", "content": "2+2?"}],
        "max_tokens": 4096,
        "thinking": {"type": "disabled"},
    }


BEDROCK_CLAUDE = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"


@pytest.mark.parametrize(
    ("model", "reasoning", "fields"),
    [
        (
            BEDROCK_CLAUDE,
            "high",
            {
                "additionalModelRequestFields": {
                    "thinking": {"type": "enabled", "budget_tokens": 16384}
                },
                "inferenceConfig": {"maxTokens": 20480},
            },
        ),
        (
            BEDROCK_CLAUDE,
            False,
            {
                "additionalModelRequestFields": {"thinking": {"type": "disabled"}},
            },
        ),
        (
            "global.anthropic.claude-opus-4-6-v1",
            "high",
            {
                "additionalModelRequestFields": {"thinking": {"type": "adaptive"}},
                "outputConfig": {"effort": "high"},
            },
        ),
        (
            "us.amazon.nova-2-lite-v1:0",
            "high",
            {
                "additionalModelRequestFields": {
                    "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}
                },
            },
        ),
        (
            "us.amazon.nova-2-lite-v1:0",
            False,
            {
                "additionalModelRequestFields": {"reasoningConfig": {"type": "disabled"}},
            },
        ),
        (
            "openai.gpt-oss-120b-1:0",
            "low",
            {
                "additionalModelRequestFields": {"reasoning_effort": "low"},
            },
        ),
    ],
)
def test_bedrock_request(
    server: MockLLMServer, model: str, reasoning: Any, fields: dict[str, Any]
) -> None:
    server.set_default("bedrock", text="ok")
    llm = make(server, "bedrock", model)
    llm.generate("2+2?", reasoning=reasoning)
    assert sent(server, "bedrock") == {
        "messages": [{"role": "user", "content": [{"text": "2+2?"}]}],
        **fields,
    }


@pytest.mark.parametrize(
    ("model", "reasoning", "config"),
    [
        (
            "gemini-2.5-flash",
            "high",
            {"thinkingConfig": {"include_thoughts": True, "thinking_budget": 24576}},
        ),
        ("gemini-2.5-flash", False, {"thinkingConfig": {"thinking_budget": 0}}),
        (
            "gemini-3-flash-preview",
            "high",
            {"thinkingConfig": {"include_thoughts": True, "thinking_level": "HIGH"}},
        ),
        (
            "gemini-3-flash-preview",
            {"budget_tokens": 1000, "summary": False},
            {"thinkingConfig": {"include_thoughts": False, "thinking_budget": 1000}},
        ),
    ],
)
def test_gemini_request(
    server: MockLLMServer, model: str, reasoning: Any, config: dict[str, Any]
) -> None:
    """google-genai sends ThinkingConfig's fields in snake_case (the API reads both
    spellings, as proto3 JSON does; the recordings hold both)."""
    server.set_default("gemini", text="ok")
    make(server, "gemini", model).generate("2+2?", reasoning=reasoning)
    assert sent(server, "gemini") == {
        "contents": [{"role": "user", "parts": [{"text": "2+2?"}]}],
        "generationConfig": config,
    }


# --- refusals before sending ---------------------------------------------------------------

TOOLS = [{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}]


@pytest.mark.parametrize(
    ("provider", "model", "kwargs", "says"),
    [
        (
            "anthropic",
            "claude-haiku-4-5",
            {"reasoning": "low", "tool_choice": "required"},
            "refuses thinking with a forced tool_choice",
        ),
        (
            "anthropic",
            "claude-haiku-4-5",
            {"reasoning": "low", "tool_choice": "get_weather"},
            "refuses thinking with a forced tool_choice",
        ),
        (
            "bedrock",
            BEDROCK_CLAUDE,
            {"reasoning": "medium", "tool_choice": "required"},
            "refuses thinking with a forced tool_choice",
        ),
        (
            "anthropic",
            "claude-opus-4-6",
            {"reasoning": {"budget_tokens": 2048}, "tool_choice": "required"},
            "refuses thinking with a forced tool_choice",
        ),
        (
            "anthropic",
            "claude-haiku-4-5",
            {
                "reasoning": "low",
                "response_format": {"name": "answer", "schema": {"type": "object"}},
                "structured_output": "tool",  # the answer comes in a forced tool
            },
            "refuses thinking with a forced tool_choice",
        ),
        (
            "anthropic",
            "claude-haiku-4-5",
            {"reasoning": "high", "max_tokens": 8000},
            "the thinking budget (16384 tokens) must be below max_tokens (8000)",
        ),
        (
            "gemini",
            "gemini-2.5-flash",
            {"reasoning": {"budget_tokens": 500}, "max_tokens": 500},
            "the thinking budget (500 tokens) must be below max_tokens (500)",
        ),
        (
            "anthropic",
            "claude-opus-4-6",
            {"reasoning": "minimal"},
            "reasoning effort 'minimal': anthropic claude-opus-4-6 (Opus / Sonnet 4.6 (adaptive)) "
            "does not have it (it takes None, effort 'low', 'medium', 'high', budget_tokens, False)",
        ),
        (
            "mistral",
            "mistral-small-latest",
            {"reasoning": "low"},
            "reasoning effort 'low': mistral mistral-small-latest",
        ),
        ("openai", "o3", {"reasoning": False}, "openai o3 (o-series) cannot turn reasoning off"),
        (
            "openai",
            "gpt-4o",
            {"reasoning": "high"},
            "openai gpt-4o (gpt-4 / gpt-3.5 / chat models): does not reason",
        ),
        ("openai", "gpt-5.1", {"reasoning": {"budget_tokens": 100}}, "takes no thinking budget"),
        ("groq", "openai/gpt-oss-120b", {"reasoning": False}, "cannot turn reasoning off"),
        ("gemini", "gemini-2.5-pro", {"reasoning": False}, "cannot turn reasoning off"),
        ("gemini", "gemini-2.0-flash", {"reasoning": "low"}, ": does not reason"),
        (
            "bedrock",
            "us.meta.llama3-3-70b-instruct-v1:0",
            {"reasoning": "low"},
            "pass additionalModelRequestFields natively",
        ),
    ],
)
def test_refused_before_sending(
    server: MockLLMServer, provider: str, model: str, kwargs: dict[str, Any], says: str
) -> None:
    result = make(server, provider, model).generate("hi", tools=TOOLS, **kwargs)
    assert result["stop_reason"] == "error"
    assert result["error"]["type"] == "invalid_request"
    assert says in result["error"]["message"], result["error"]["message"]
    assert server.requests == []


def test_refusal_raises_with_raise_errors(server: MockLLMServer) -> None:
    llm = make(server, "anthropic", "claude-haiku-4-5", raise_errors=True)
    with pytest.raises(errors.InvalidRequestError, match="forced tool_choice"):
        llm.generate("hi", tools=TOOLS, tool_choice="required", reasoning="high")


def test_adaptive_thinking_allows_a_forced_tool_choice_for_the_models_the_row_names() -> None:
    """Adaptive thinking takes a forced tool_choice where the row's pattern names the model
    (a recorded claude-opus-4-6 exchange did so with a 200); elsewhere it is refused."""
    reasoning = check_reasoning("high")
    takes = r"claude-opus-4-6"
    plan = plan_reasoning(
        "anthropic",
        "claude-opus-4-6",
        reasoning,
        forced_tool_choice=True,
        forced_with_adaptive=takes,
    )
    assert plan is not None and plan.effort == "high"
    with pytest.raises(errors.InvalidRequestError, match="forces tool use"):
        plan_reasoning(
            "anthropic",
            "claude-sonnet-4-6",
            reasoning,
            forced_tool_choice=True,
            forced_with_adaptive=takes,
        )


# --- results and streams -------------------------------------------------------------------


def _sse(events: list[Any]) -> bytes:
    return (
        b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    )


def _groq_pair() -> tuple[Raw, Raw]:
    usage = {
        "prompt_tokens": 9,
        "completion_tokens": 20,
        "total_tokens": 29,
        "completion_tokens_details": {"reasoning_tokens": 15},
    }
    message = {"role": "assistant", "content": "4", "reasoning": "Two and two make four."}
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage,
    }
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    deltas = [
        {"role": "assistant", "reasoning": "Two and two "},
        {"reasoning": "make four."},
        {"content": "4"},
    ]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    chunks.append(
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "x_groq": {"id": "x", "usage": usage},
        }
    )
    return (
        Raw(200, json.dumps(body).encode(), {"content-type": "application/json"}),
        Raw(200, _sse(chunks), {"content-type": "text/event-stream"}, 40),
    )


def _mistral_pair() -> tuple[Raw, Raw]:
    usage = {"prompt_tokens": 9, "completion_tokens": 20, "total_tokens": 29}
    thinking = {
        "type": "thinking",
        "thinking": [{"type": "text", "text": "Two and two make four."}],
    }
    message = {"role": "assistant", "content": [thinking, {"type": "text", "text": "4"}]}
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage,
    }
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    parts = [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "Two and two "}]}
            ],
        },
        {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "make four."}]}]},
        {"content": "4"},
    ]
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in parts]
    chunks.append(
        {
            **base,
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}],
            "usage": usage,
        }
    )
    return (
        Raw(200, json.dumps(body).encode(), {"content-type": "application/json"}),
        Raw(200, _sse(chunks), {"content-type": "text/event-stream"}, 40),
    )


def _ollama_pair() -> tuple[Raw, Raw]:
    done = {
        "model": "qwen3",
        "created_at": "t",
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 9,
        "eval_count": 20,
    }
    body = {
        **done,
        "message": {"role": "assistant", "content": "4", "thinking": "Two and two make four."},
    }
    lines = [
        {
            "model": "qwen3",
            "created_at": "t",
            "done": False,
            "message": {"role": "assistant", "content": "", "thinking": "Two and two "},
        },
        {
            "model": "qwen3",
            "created_at": "t",
            "done": False,
            "message": {"role": "assistant", "content": "", "thinking": "make four."},
        },
        {
            "model": "qwen3",
            "created_at": "t",
            "done": False,
            "message": {"role": "assistant", "content": "4"},
        },
        {**done, "message": {"role": "assistant", "content": ""}},
    ]
    stream = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    return (
        Raw(200, json.dumps(body).encode(), {"content-type": "application/json"}),
        Raw(200, stream, {"content-type": "application/x-ndjson"}, 40),
    )


def _gemini_pair() -> tuple[Raw, Raw]:
    usage = {
        "promptTokenCount": 9,
        "candidatesTokenCount": 1,
        "thoughtsTokenCount": 19,
        "totalTokenCount": 29,
    }
    parts = [{"text": "Two and two make four.", "thought": True}, {"text": "4"}]
    body = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": usage,
    }
    chunks = [
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "Two and two ", "thought": True}]}}
            ]
        },
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "make four.", "thought": True}]}}
            ]
        },
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "4"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": usage,
        },
    ]
    stream = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)
    return (
        Raw(200, json.dumps(body).encode(), {"content-type": "application/json"}),
        Raw(200, stream, {"content-type": "text/event-stream"}, 40),
    )


EXPECTED_USAGE = {
    "groq": make_usage(9, 20, reasoning=15),
    "mistral": make_usage(9, 20),
    "ollama": make_usage(9, 20),
    "gemini": make_usage(9, 20, reasoning=19),
}
PAIRS = {
    "groq": _groq_pair,
    "mistral": _mistral_pair,
    "ollama": _ollama_pair,
    "gemini": _gemini_pair,
}
MODELS = {
    "groq": "qwen/qwen3-32b",
    "mistral": "magistral-small-latest",
    "ollama": "qwen3",
    "gemini": "gemini-2.5-flash",
}


@pytest.mark.parametrize("provider", sorted(PAIRS))
async def test_stream_reasoning_deltas_and_done_equals_generate(
    server: MockLLMServer, provider: str
) -> None:
    llm = make(server, provider, MODELS[provider])
    json_body, stream_body = PAIRS[provider]()
    server.enqueue_item(json_body, provider)
    generated = llm.generate("2+2?")
    assert (generated["content"], generated["reasoning"]) == ("4", "Two and two make four.")
    assert generated["usage"] == EXPECTED_USAGE[provider]
    server.enqueue_item(stream_body, provider)
    events = list(llm.stream("2+2?"))
    assert [e["text"] for e in events if e["type"] == "reasoning"] == ["Two and two ", "make four."]
    assert events[-1]["result"] == generated
    server.enqueue_item(stream_body, provider)
    async_events = [e async for e in llm.stream_async("2+2?")]
    assert async_events[-1]["result"] == generated


def test_anthropic_thinking_text_and_signature(server: MockLLMServer) -> None:
    """Anthropic's thinking text is the result's reasoning; the signed block stays in
    provider_data and goes back only to Anthropic."""
    block = {"type": "thinking", "thinking": "Two and two make four.", "signature": "c2lnbg=="}
    script = {"text": "4", "provider_data": {"anthropic": {"thinking": [block]}}}
    llm = make(server, "anthropic", "claude-haiku-4-5")
    server.enqueue("anthropic", **script)
    generated = llm.generate("2+2?", reasoning="low")
    assert generated["reasoning"] == "Two and two make four."
    assert generated["message"]["provider_data"] == {"anthropic": {"thinking": [block]}}
    server.enqueue("anthropic", fragments=3, **script)
    events = list(llm.stream("2+2?", reasoning="low"))
    assert "".join(e["text"] for e in events if e["type"] == "reasoning") == block["thinking"]
    assert events[-1]["result"] == generated

    history = [
        {"role": "user", "content": "2+2?"},
        generated["message"],
        {"role": "user", "content": "And 3+3?"},
    ]
    server.enqueue("anthropic", text="6")
    llm.generate(history, reasoning="low")
    assert sent(server, "anthropic")["messages"][1]["content"][0] == block
    server.enqueue("openai", text="6")
    make(server, "openai", "gpt-5.1").generate(history)
    assert sent(server, "openai")["messages"][1] == {"role": "assistant", "content": "4"}


def test_error_result_has_reasoning_none(server: MockLLMServer) -> None:
    server.enqueue_error(500, "openai", message="down")
    result = make(server, "openai", "gpt-5.1", max_retries=0).generate("hi")
    assert result["reasoning"] is None and result["usage"] is None


# --- usage ----------------------------------------------------------------------------------


def test_add_usage_per_key() -> None:
    a = make_usage(10, 5, cache_read=3)
    b = make_usage(20, 7, reasoning=4)
    assert add_usage(add_usage(None, a), b) == {
        "input_tokens": 30,
        "output_tokens": 12,
        "cache_read_tokens": 3,
        "cache_write_tokens": None,
        "reasoning_tokens": 4,
    }
    assert add_usage(a, None) == a


def test_run_sums_usage_per_key(server: MockLLMServer) -> None:
    def get_weather(city: str) -> str:
        """Weather."""
        return "sunny"

    call = {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}
    first = {"input_tokens": 10, "output_tokens": 5, "cache_write_tokens": 8}
    second = {"input_tokens": 30, "output_tokens": 2, "cache_read_tokens": 8}
    server.enqueue("anthropic", tool_calls=[call], usage=first)
    server.enqueue("anthropic", text="Sunny.", usage=second)
    result = make(server, "anthropic", "claude-haiku-4-5").run("Weather?", tools=[get_weather])
    # Anthropic reports no thinking count: None + None stays None.
    assert result["usage"] == make_usage(40, 7, cache_read=8, cache_write=8)


# --- the documented table ------------------------------------------------------------------


def _efforts_cell(family: Any) -> str:
    if not family.reasons:
        return "refused (does not reason)"
    if family.budgets:
        return "budget " + ", ".join(f"{k} {v}" for k, v in family.budgets.items())
    if not family.efforts:
        return "refused (no levels)"
    names = ", ".join(family.efforts)
    values = list(dict.fromkeys(family.efforts.values()))
    if values == list(family.efforts):
        return names
    if len(values) == 1:
        return f"{names} → `{json.dumps(values[0])}`"
    return f"{names} → " + ", ".join(f"`{v}`" for v in values)


def _off_cell(family: Any) -> str:
    if family.off == REFUSE:
        return "refused"
    if family.off is None:
        return "nothing sent"
    return f"`{json.dumps(family.off)}`"


def documented_table() -> str:
    rows = [
        "| provider | model family (id matches) | effort | budget_tokens | False | notes |",
        "|---|---|---|---|---|---|",
    ]
    for mode, families in TABLE.items():
        for f in families:
            pattern = f"`{f.pattern}`".replace("|", "\\|") if f.pattern else "any other"
            budget = "yes" if f.takes_budget else "—"
            rows.append(
                f"| {mode} | {f.name} ({pattern}) | {_efforts_cell(f)} | {budget} | "
                f"{_off_cell(f)} | {f.note} |"
            )
    return "\n".join(rows)


def test_docs_show_the_table_the_code_uses() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "reasoning.md").read_text()
    documented = page.split("<!-- table:start -->\n")[1].split("\n<!-- table:end -->")[0]
    assert documented == documented_table(), "paste documented_table() into docs/reasoning.md"


def test_a_failed_stream_keeps_the_reasoning_received(server: MockLLMServer) -> None:
    block = {"type": "thinking", "thinking": "abcdefghijkl", "signature": "c2lnbg=="}
    script = {"text": "done", "provider_data": {"anthropic": {"thinking": [block]}}}
    server.enqueue("anthropic", fragments=4, cut_after=4, **script)
    events = list(make(server, "anthropic", "claude-haiku-4-5", max_retries=0).stream("hi"))
    done = events[-1]["result"]
    received = "".join(e["text"] for e in events if e["type"] == "reasoning")
    assert done["stop_reason"] == "error"
    assert received and done["reasoning"] == received


def test_a_provider_without_a_reasoning_mode_refuses_reasoning() -> None:
    # Echo's registry row names no reasoning mode.
    result = Echo("m", api_key=KEY).generate("hi", reasoning="low")
    assert result["error"]["message"] == "reasoning: Zerda has no reasoning control for echo"
    assert Echo("m", api_key=KEY).generate("hi")["reasoning"] is None


FULL_USAGE = {
    "input_tokens": 100,
    "output_tokens": 40,
    "cache_read_tokens": 60,
    "cache_write_tokens": 10,
    "reasoning_tokens": 25,
}
_NOT_REPORTED = {"cache_read_tokens": None, "cache_write_tokens": None, "reasoning_tokens": None}
# What each provider reports of it: the mock writes DESIGN §12's counts in each provider's
# own fields and arithmetic (Anthropic's input without the cache...), Zerda adds them back.
REPORTED = {
    "openai": FULL_USAGE,
    "groq": {**FULL_USAGE, "cache_write_tokens": None},
    "mistral": {**FULL_USAGE, "cache_write_tokens": None, "reasoning_tokens": None},
    "ollama": {**FULL_USAGE, **_NOT_REPORTED},
    "anthropic": {**FULL_USAGE, "reasoning_tokens": None},
    "bedrock": {**FULL_USAGE, "reasoning_tokens": None},
    "gemini": {**FULL_USAGE, "cache_write_tokens": None},
}
MODEL_OF = {
    "openai": "gpt-5.1",
    "groq": "qwen/qwen3-32b",
    "mistral": "mistral-small-latest",
    "ollama": "qwen3",
    "anthropic": "claude-haiku-4-5",
    "bedrock": BEDROCK_CLAUDE,
    "gemini": "gemini-2.5-flash",
}


@pytest.mark.parametrize("provider", sorted(REPORTED))
def test_usage_from_generate_and_stream(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider, MODEL_OF[provider])
    server.enqueue(provider, text="Hello there.", usage=FULL_USAGE)
    generated = llm.generate("hi")
    assert generated["usage"] == REPORTED[provider]
    server.enqueue(provider, text="Hello there.", fragments=3, usage=FULL_USAGE)
    assert list(llm.stream("hi"))[-1]["result"] == generated
