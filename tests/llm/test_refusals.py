"""OpenAI refusals (DESIGN §3, issue 33): a Chat Completions ``message.refusal`` (streamed as
``delta.refusal``) and a Responses ``refusal`` content part are the result's ``content``,
with the stop reason ``content_filter``, on both endpoints and every row on their wires,
from generate and from stream alike (the stream's done result is generate's result), with
the fast path on and off. The native bodies are checked as OpenAI sends them (served
verbatim), as MockLLMServer renders ``enqueue(..., refusal=...)``, and in every recorded
OpenAI exchange that carries a ``refusal`` field (../shared/fixtures/recorded)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.providers.openai_like import expected_from_recording
from zerda.llm import registry
from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer
from zerda.testing._server import load_renderer

REFUSAL = "I'm sorry, I can't help with that."
RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"


def _carries_refusals(provider: str) -> bool:
    """Whether the row's wire has a refusal field of its own (its mock renderer says so)."""
    return bool(getattr(load_renderer(registry.get(provider).wire), "REFUSAL_FIELD", False))


ROWS = [p for p in registry.NAMES if _carries_refusals(p)]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def llm(server: MockLLMServer, provider: str, fast: bool = True) -> Any:
    model = registry.get(provider).demo_model
    options = server.client_options(provider)
    return create_interface(provider, model, **options, max_retries=0, fast_path=fast)


def test_the_rows_with_refusals_are_those_of_both_openai_endpoints() -> None:
    assert {"openai", "openai-responses", "azure", "azure-responses", "deepseek"} <= set(ROWS)
    assert not {"groq", "mistral", "anthropic", "gemini", "bedrock", "ollama"} & set(ROWS)


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
@pytest.mark.parametrize("provider", ROWS)
def test_a_refusal_is_content_filter_with_its_text(
    server: MockLLMServer, provider: str, fast: bool
) -> None:
    client = llm(server, provider, fast)
    server.enqueue(provider, refusal=REFUSAL, usage={"input_tokens": 7, "output_tokens": 9})
    generated = client.generate("Help me with something bad.")
    server.enqueue(
        provider, refusal=REFUSAL, usage={"input_tokens": 7, "output_tokens": 9}, fragments=4
    )
    events = list(client.stream("Help me with something bad."))
    assert generated["content"] == REFUSAL
    assert generated["stop_reason"] == "content_filter"
    assert generated["tool_calls"] == []
    assert generated["message"] == {"role": "assistant", "content": REFUSAL, "tool_calls": []}
    assert "".join(e["text"] for e in events if e["type"] == "text") == REFUSAL
    assert [e["type"] for e in events].count("text") == 4
    assert events[-1] == {"type": "done", "result": generated}


@pytest.mark.parametrize("provider", ROWS)
def test_text_without_a_refusal_stays_end_turn(server: MockLLMServer, provider: str) -> None:
    client = llm(server, provider)
    server.enqueue(provider, text="Sure.")
    result = client.generate("hi")
    assert (result["content"], result["stop_reason"]) == ("Sure.", "end_turn")


@pytest.mark.parametrize("provider", [p for p in registry.NAMES if p not in ROWS])
def test_a_scripted_refusal_elsewhere_is_text_with_the_content_filter_stop(
    server: MockLLMServer, provider: str
) -> None:
    """A wire with no refusal field sends a scripted refusal as text with its own
    content-filter stop reason (Anthropic's ``refusal``, Gemini's ``SAFETY``...); Ollama,
    which has no content filter, as text that ends the turn."""
    server.enqueue(provider, refusal=REFUSAL)
    result = llm(server, provider).generate("hi")
    stop = "end_turn" if registry.get(provider).wire == "ollama" else "content_filter"
    assert (result["content"], result["stop_reason"]) == (REFUSAL, stop)


# --- the native bodies, served verbatim ----------------------------------------------------


def _chunks(deltas: list[dict[str, Any]], finish: str = "stop") -> str:
    """A Chat Completions stream as OpenAI sends a refusal: content null throughout, the
    refusal in its own key, a clean ``stop``, the usage chunk, [DONE]."""

    def chunk(delta: dict[str, Any], reason: str | None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o-2024-08-06",
            "choices": [choice],
        }
        return f"data: {json.dumps(body)}\n\n"

    usage = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-2024-08-06",
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": 8, "total_tokens": 13},
    }
    lines = [chunk(d, None) for d in deltas] + [chunk({}, finish)]
    return "".join(lines) + f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n"


CHAT_JSON = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": REFUSAL,
                "annotations": [],
            },
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 8, "total_tokens": 13},
}
CHAT_SSE = _chunks(
    [
        {"role": "assistant", "content": None, "refusal": ""},
        {"refusal": "I'm sorry, "},
        {"refusal": "I can't help with that."},
    ]
)
RESPONSE_ITEM = {
    "id": "msg_1",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "refusal", "refusal": REFUSAL}],
}
RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "status": "completed",
    "error": None,
    "incomplete_details": None,
    "model": "gpt-4o-2024-08-06",
    "output": [RESPONSE_ITEM],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {"input_tokens": 5, "output_tokens": 8, "total_tokens": 13},
}


def _responses_sse() -> str:
    """The Responses stream of a refusal: ``response.refusal.delta`` events, then the
    done item and ``response.completed``
    (https://platform.openai.com/docs/api-reference/responses-streaming/response/refusal/delta)."""
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    added = {**RESPONSE_ITEM, "status": "in_progress", "content": []}
    events = [
        {
            "type": "response.created",
            "response": {**RESPONSE, "status": "in_progress", "output": [], "usage": None},
        },
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.content_part.added", **at, "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", **at, "delta": "I'm sorry, "},
        {"type": "response.refusal.delta", **at, "delta": "I can't help with that."},
        {"type": "response.refusal.done", **at, "refusal": REFUSAL},
        {"type": "response.content_part.done", **at, "part": RESPONSE_ITEM["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": RESPONSE_ITEM},
        {"type": "response.completed", "response": RESPONSE},
    ]
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n"
        for n, e in enumerate(events)
    )


NATIVE = {
    "openai": (CHAT_JSON, CHAT_SSE),
    "openai-responses": (RESPONSE, _responses_sse()),
}
USAGE = {
    "input_tokens": 5,
    "output_tokens": 8,
    "cache_read_tokens": None,
    "cache_write_tokens": None,
    "reasoning_tokens": None,
}


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
@pytest.mark.parametrize("provider", list(NATIVE))
def test_the_native_refusal_bodies(server: MockLLMServer, provider: str, fast: bool) -> None:
    client = llm(server, provider, fast)
    body, sse = NATIVE[provider]
    server.enqueue_raw(200, body, {"content-type": "application/json"}, provider=provider)
    generated = client.generate("hi")
    server.enqueue_raw(200, sse, {"content-type": "text/event-stream"}, provider, chunk_size=40)
    events = list(client.stream("hi"))
    assert generated["content"] == REFUSAL
    assert (generated["stop_reason"], generated["usage"]) == ("content_filter", USAGE)
    assert "".join(e["text"] for e in events if e["type"] == "text") == REFUSAL
    assert events[-1] == {"type": "done", "result": generated}


# --- the recordings ------------------------------------------------------------------------


def _recordings() -> list[Any]:
    """Every recorded exchange of an endpoint with refusals that names ``refusal``."""
    folders = [RECORDED / p for p in ROWS if (RECORDED / p).is_dir()]
    files = [f for d in folders for f in sorted(d.glob("*.json")) if "refusal" in f.read_text()]
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem[-70:]}") for f in files]


def _refusal_text(fixture: dict[str, Any]) -> str:
    """The refusal the recorded answer holds: the message's, or the stream's deltas, or
    the Responses refusal parts ("" when its refusal fields are all null)."""
    body = fixture["response"]["body"]
    if isinstance(body, str):  # a stream: every JSON data line's refusal pieces
        lines = re.findall(r"^data: (\{.*\})$", body, re.M)
        return "".join(_refusal_of(json.loads(line)) for line in lines)
    return _refusal_of(body)


def _refusal_of(data: Any) -> str:
    """The refusal text of one body or chunk: choice 0's message or delta, a Responses
    message's refusal parts, or a stream's ``response.refusal.delta`` event."""
    if not isinstance(data, dict):
        return ""
    if data.get("type") == "response.refusal.delta":
        return str(data["delta"])
    if data.get("type", "response") != "response":  # the other stream events repeat it
        return ""
    choice = next(iter(data.get("choices") or []), {})
    part = choice.get("message") or choice.get("delta") or {}
    texts = [part.get("refusal")] if isinstance(part, dict) else []
    contents = [c for i in data.get("output") or [] for c in i.get("content") or []]
    texts += [c.get("refusal") for c in contents if c.get("type") == "refusal"]
    return "".join(t for t in texts if isinstance(t, str))


@pytest.mark.parametrize("path", _recordings())
def test_recorded_refusal_fields_parse_as_design_says(
    server: MockLLMServer, interfaces: Callable[..., Any], path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    provider = path.parent.name
    # One interface per provider and model for every recording (tests/conftest.py).
    client = interfaces(provider, fixture.get("model") or "gpt-4o", max_retries=0)
    server.enqueue_recorded(provider, fixture)
    if fixture["streaming"]:
        result = list(client.stream("recorded"))[-1]["result"]
    else:
        result = client.generate("recorded")
    if fixture["response"]["status"] >= 400:
        assert result["stop_reason"] == "error"
        return
    expected = expected_from_recording(fixture)
    refusal = _refusal_text(fixture)
    if refusal:
        stop = "tool_use" if expected["tool_calls"] else "content_filter"
        expected.update(content=(expected["content"] or "") + refusal, stop_reason=stop)
    assert {k: result[k] for k in ("tool_calls", "content", "stop_reason")} == expected
