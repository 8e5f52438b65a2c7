"""Random provider response bodies, valid in shape but odd in value — null or empty
content, no candidates, unknown block types, unknown finish reasons, tool arguments of every
JSON type (and text that is not JSON) — served byte for byte in each provider's own JSON
shape. The SDK, the parsers and the result mapping never raise, and never drop a tool call
or a piece of text: everything in the body is in the result (DESIGN.md §3).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability._support import Interfaces
from zerda.testing import MockLLMServer

DEEP = int(os.environ.get("ZERDA_FUZZ_EXAMPLES", "0"))  # see test_fuzz_inputs.py
FUZZ = settings(
    max_examples=DEEP or 50,
    deadline=None,
    derandomize=not DEEP,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
STOP_REASONS = {
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "content_filter",
    "error",
    "other",
}
UNKNOWN_REASONS = ["mystery_reason", "FUTURE_REASON", ""]

# --- what a body holds, and what the result must then hold ------------------------------


@dataclass
class Expected:
    """The text and the calls a body carries, as the result must show them."""

    content: str | None
    calls: list[tuple[str | None, str, dict[str, Any]]]  # (id, name, arguments)
    unknown_stop: bool  # the body's stop reason is one no table knows: "other"


def arguments_of(raw: Any) -> dict[str, Any]:
    """DESIGN.md §3: a dict as it is; blank text is {}; text holding a JSON object is that
    object; anything else — other JSON, text that is not JSON — is kept under _raw."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        return parsed if isinstance(parsed, dict) else {"_raw": raw}
    return {"_raw": raw}


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
objects = st.dictionaries(st.text(max_size=6), json_value, max_size=4)
# Arguments as text (OpenAI-likes): JSON of every type, blank, or not JSON at all.
argument_texts = st.one_of(
    json_value.map(json.dumps),
    objects.map(json.dumps),
    st.sampled_from(["", "   ", '{"city": "Par', "not json", "[1, 2", "null"]),
)
texts = st.text(max_size=12)
names = st.text(min_size=1, max_size=12)
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12)


def joined(pieces: list[str]) -> str | None:
    return "".join(pieces) or None


def reason(draw: st.DrawFn, known: list[str], allow_none: bool = True) -> tuple[Any, bool]:
    """A finish reason: a known one, an unknown one, or (where the shape allows) none."""
    options: list[Any] = [*known, *UNKNOWN_REASONS] + ([None] if allow_none else [])
    value = draw(st.sampled_from(options))
    return value, value in UNKNOWN_REASONS


# --- bodies, one shape per provider -----------------------------------------------------


@st.composite
def openai_bodies(draw: st.DrawFn, mistral: bool = False) -> tuple[dict[str, Any], Expected]:
    """A chat.completion (OpenAI, Groq, Mistral); Mistral's content may be a list of chunks
    (text and thinking) and its arguments a dict."""
    content: Any = draw(st.one_of(st.none(), texts))
    text = content or None
    if mistral and draw(st.booleans()):
        pieces = draw(st.lists(texts, max_size=3))
        content = [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}] + [
            {"type": "text", "text": p} for p in pieces
        ]
        text = joined(pieces)
    raw_args = st.one_of(argument_texts, objects) if mistral else argument_texts
    calls = draw(st.lists(st.tuples(ids, names, raw_args), max_size=3, unique_by=lambda c: c[0]))
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls or draw(st.booleans()):
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    if not mistral:
        message |= {"refusal": None, "annotations": draw(st.sampled_from([[], None]))}
    finish, unknown = reason(draw, ["stop", "length", "tool_calls", "content_filter"])
    usage: Any = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    if not mistral:  # Mistral's schema requires usage; OpenAI's allows null
        usage = draw(st.sampled_from([None, usage]))
    body = {
        "id": "chatcmpl-fuzz",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage,
    }
    expected = [(i, n, arguments_of(a)) for i, n, a in calls]
    return body, Expected(text, expected, unknown)


@st.composite
def anthropic_bodies(draw: st.DrawFn) -> tuple[dict[str, Any], Expected]:
    blocks: list[dict[str, Any]] = []
    pieces: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    for n in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["text", "tool_use", "thinking", "unknown"]))
        if kind == "text":
            pieces.append(draw(texts))
            blocks.append({"type": "text", "text": pieces[-1], "citations": None})
        elif kind == "tool_use":
            call_id, name, raw = f"toolu_{n}", draw(names), draw(json_value)
            calls.append((call_id, name, arguments_of(raw)))
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": raw})
        elif kind == "thinking":
            blocks.append({"type": "thinking", "thinking": draw(texts), "signature": "c2ln"})
        else:
            blocks.append({"type": "mystery_block", "payload": draw(json_value)})
    stop, unknown = reason(draw, ["end_turn", "max_tokens", "tool_use", "refusal", "pause_turn"])
    body = {
        "id": "msg_fuzz",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": draw(st.sampled_from([4, None]))},
    }
    return body, Expected(joined(pieces), calls, unknown)


@st.composite
def bedrock_bodies(draw: st.DrawFn) -> tuple[dict[str, Any], Expected]:
    blocks: list[dict[str, Any]] = []
    pieces: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    for n in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["text", "toolUse", "reasoning", "unknown"]))
        if kind == "text":
            pieces.append(draw(texts))
            blocks.append({"text": pieces[-1]})
        elif kind == "toolUse":
            call_id, name, raw = f"tooluse_{n}", draw(names), draw(json_value)
            calls.append((call_id, name, arguments_of(raw)))
            blocks.append({"toolUse": {"toolUseId": call_id, "name": name, "input": raw}})
        elif kind == "reasoning":
            reasoning = {"reasoningText": {"text": draw(texts), "signature": "sig"}}
            blocks.append({"reasoningContent": reasoning})
        else:
            blocks.append({"mysteryBlock": {"payload": draw(json_value)}})
    # stopReason is required in a Converse response: always present.
    stop, unknown = reason(
        draw, ["end_turn", "tool_use", "max_tokens", "content_filtered"], allow_none=False
    )
    body = {
        "output": {"message": {"role": "assistant", "content": blocks}},
        "stopReason": stop,
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
        "metrics": {"latencyMs": 5},
    }
    return body, Expected(joined(pieces), calls, unknown)


@st.composite
def gemini_bodies(draw: st.DrawFn) -> tuple[dict[str, Any], Expected]:
    """Gemini sends args as an object (a Struct) and may send no candidates at all."""
    parts: list[dict[str, Any]] = []
    pieces: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["text", "thought", "call"]))
        if kind == "text":
            pieces.append(draw(texts))
            parts.append({"text": pieces[-1]})
        elif kind == "thought":
            parts.append({"text": draw(texts), "thought": True})
        else:
            call_id = draw(st.one_of(st.none(), ids))
            name, args = (
                draw(st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)),
                draw(objects),
            )
            call: dict[str, Any] = {"name": name, "args": args}
            if call_id:
                call["id"] = call_id
            calls.append((call_id, name, args))
            parts.append({"functionCall": call})
    finish, unknown = reason(draw, ["STOP", "MAX_TOKENS", "SAFETY", "MALFORMED_FUNCTION_CALL"])
    candidate: dict[str, Any] = {"index": 0}
    if parts or draw(st.booleans()):
        candidate["content"] = {"role": "model", "parts": parts}
    if finish is not None:
        candidate["finishReason"] = finish
    no_candidates = not parts and draw(st.booleans())
    body: dict[str, Any] = {
        "candidates": [] if no_candidates else [candidate],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4},
        "modelVersion": "m",
    }
    if no_candidates and draw(st.booleans()):
        body["promptFeedback"] = {"blockReason": "SAFETY"}
    unknown = unknown and not no_candidates
    return body, Expected(joined(pieces), calls, unknown)


@st.composite
def ollama_bodies(draw: st.DrawFn) -> tuple[dict[str, Any], Expected]:
    content = draw(st.one_of(st.none(), texts))
    calls = draw(st.lists(st.tuples(st.one_of(st.none(), ids), names, json_value), max_size=3))
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if draw(st.booleans()):
        message["thinking"] = draw(texts)
    if calls or draw(st.booleans()):
        message["tool_calls"] = [
            {"function": {"name": n, "arguments": a}} | ({"id": i} if i else {})
            for i, n, a in calls
        ]
    done_reason, unknown = reason(draw, ["stop", "length"])
    body = {
        "model": "m",
        "created_at": "2026-01-01T00:00:00Z",
        "message": message,
        "done": True,
        "done_reason": done_reason,
        "prompt_eval_count": 3,
        "eval_count": draw(st.sampled_from([4, None])),
    }
    expected = [(i, n, arguments_of(a)) for i, n, a in calls]
    return body, Expected(content or None, expected, unknown)


BODIES = {
    "openai": openai_bodies(),
    "groq": openai_bodies(),
    "mistral": openai_bodies(mistral=True),
    "ollama": ollama_bodies(),
    "anthropic": anthropic_bodies(),
    "bedrock": bedrock_bodies(),
    "gemini": gemini_bodies(),
}

# --- the property ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replay(module_server: MockLLMServer, llms: Interfaces) -> Any:
    def generate(provider: str, body: dict[str, Any]) -> dict[str, Any]:
        module_server.reset()
        module_server.enqueue_raw(200, body, {"content-type": "application/json"}, provider)
        result: dict[str, Any] = llms.get(provider, max_retries=0).generate("hi")
        return result

    return generate


def assert_nothing_lost(result: dict[str, Any], expected: Expected) -> None:
    assert "error" not in result, result["error"]
    json.dumps(result)  # plain JSON: no SDK object leaked into the result
    assert result["content"] == expected.content
    assert [(c["id"], c["name"], c["arguments"]) for c in result["tool_calls"]] == expected.calls
    assert result["stop_reason"] in STOP_REASONS
    if expected.calls:
        assert result["stop_reason"] == "tool_use"
    elif expected.unknown_stop:
        assert result["stop_reason"] == "other"
    assert result["message"]["tool_calls"] == result["tool_calls"]
    assert result["message"]["content"] == result["content"]


# google-genai warns about a finish reason it does not know, and carries on.
@pytest.mark.filterwarnings("ignore:.* is not a valid FinishReason:UserWarning")
@pytest.mark.parametrize("provider", list(BODIES))
@FUZZ
@given(data=st.data())
def test_odd_response_bodies_lose_nothing(replay: Any, provider: str, data: st.DataObject) -> None:
    body, expected = data.draw(BODIES[provider], label="body")
    assert_nothing_lost(replay(provider, body), expected)


# --- the same odd answers, streamed: generate and stream agree (DESIGN.md §7) ------------


@st.composite
def odd_scripts(draw: st.DrawFn, provider: str) -> tuple[dict[str, Any], Expected]:
    """Script fields for MockLLMServer.enqueue (rendered by the server in the provider's
    own JSON and stream shapes) and what the result must hold. A str argument is sent
    verbatim; Gemini's args is a Struct, so it carries objects only."""
    raw_args = objects if provider == "gemini" else st.one_of(objects, argument_texts)
    calls = [
        {
            "id": f"call{n:05d}",
            "name": draw(st.sampled_from(["f", "get_weather", "a-b"])),
            "arguments": draw(raw_args),
        }
        for n in range(draw(st.integers(0, 4)))
    ]
    text = draw(st.one_of(st.none(), st.text(max_size=20)))
    native = draw(st.sampled_from([None, "mystery_reason"]))
    fields: dict[str, Any] = {
        "text": text,
        "tool_calls": calls,
        "native_stop_reason": native,
        "fragments": draw(st.integers(1, 4)),
        "interleave": draw(st.booleans()),
    }
    expected = [(c["id"], c["name"], arguments_of(c["arguments"])) for c in calls]
    return fields, Expected(text or None, expected, native is not None)


@pytest.mark.filterwarnings("ignore:.* is not a valid FinishReason:UserWarning")
@pytest.mark.parametrize("provider", list(BODIES))
@settings(FUZZ, max_examples=DEEP or 25)
@given(data=st.data())
def test_odd_answers_stream_as_they_generate(
    module_server: MockLLMServer, llms: Interfaces, provider: str, data: st.DataObject
) -> None:
    fields, expected = data.draw(odd_scripts(provider), label="script")
    llm = llms.get(provider, max_retries=0)
    module_server.reset()
    module_server.enqueue(provider, **fields)
    module_server.enqueue(provider, **fields)

    result = llm.generate("hi")
    events = list(llm.stream("hi"))

    assert_nothing_lost(result, expected)
    assert events[-1] == {"type": "done", "result": result}
    text = "".join(e["text"] for e in events if e["type"] == "text")
    assert text == (result["content"] or "")
    assert [e["tool_call"] for e in events if e["type"] == "tool_call"] == result["tool_calls"]


# Line boundaries for str.splitlines that JSON encoders may leave unescaped (Go's
# encoding/json, Ollama's, escapes U+2028/U+2029 but not U+0085).
UNICODE_LINE_BREAKS = {"\x85", "\u2028", "\u2029"}


@pytest.mark.parametrize("text", [f"next{c}line" for c in sorted(UNICODE_LINE_BREAKS)])
def test_ollama_streams_text_with_unicode_line_breaks(
    module_server: MockLLMServer, llms: Interfaces, text: str
) -> None:
    module_server.reset()
    module_server.enqueue("ollama", text=text, fragments=2)

    events = list(llms.get("ollama", max_retries=0).stream("hi"))

    assert events[-1]["result"]["content"] == text
