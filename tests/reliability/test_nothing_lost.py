"""Nothing the model produced is lost (DESIGN.md §3, §7), on every provider: text that
arrived before a failure is kept, arguments that are not a JSON object are kept under
``_raw``, and every call of a parallel response is returned, in order, from generate and
from stream alike."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reliability._support import PROVIDERS, Interfaces
from zerda.testing import ErrorReply, MockLLMServer

CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_time", "arguments": {}},
    {"name": "get_weather", "arguments": {"city": "Oslo", "units": ["C", "F"]}},
    {"name": "convert", "arguments": {"amount": 12.5, "ok": True, "note": None}},
    {"name": "search", "arguments": {"q": 'é 漢字 \n "quoted"'}},
]
# The mock sends a str argument verbatim where arguments travel as text (OpenAI-like calls,
# streamed argument fragments) and as a JSON string where they travel as a value. Gemini's
# args is a Struct: it carries objects only.
VERBATIM_ARGUMENTS = [p for p in PROVIDERS if p != "gemini"]
NOT_AN_OBJECT = ['{"city": "Par', "[1, 2, 3]", '"just text"', "42", "nonsense"]


def calls_of(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["arguments"]) for c in result["tool_calls"]]


def streamed(llm: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    events = list(llm.stream("hi"))
    assert events[-1]["type"] == "done"
    return events[:-1], events[-1]["result"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_call_of_a_parallel_response_is_returned(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    llm = llms.get(provider)
    expected = [(c["name"], c["arguments"]) for c in CALLS]
    server.enqueue(provider, text="Checking.", tool_calls=CALLS)
    server.enqueue(provider, text="Checking.", tool_calls=CALLS, fragments=3, interleave=True)

    result = llm.generate("hi")
    events, done = streamed(llm)

    assert (result["content"], calls_of(result), result["stop_reason"]) == (
        "Checking.",
        expected,
        "tool_use",
    )
    assert calls_of(done) == expected and done["content"] == "Checking."
    streamed_calls = [e["tool_call"] for e in events if e["type"] == "tool_call"]
    assert streamed_calls == done["tool_calls"]
    ids = [c["id"] for c in result["tool_calls"]]
    if provider not in ("gemini", "ollama"):  # these send no ids
        assert None not in ids and len(set(ids)) == len(ids)


@pytest.mark.parametrize("provider", VERBATIM_ARGUMENTS)
@pytest.mark.parametrize("raw", NOT_AN_OBJECT)
def test_arguments_that_are_not_an_object_are_kept_under_raw(
    server: MockLLMServer, llms: Interfaces, provider: str, raw: str
) -> None:
    llm = llms.get(provider)
    calls = [{"name": "f", "arguments": raw}, {"name": "g", "arguments": {"fine": 1}}]
    server.enqueue(provider, tool_calls=calls)
    server.enqueue(provider, tool_calls=calls, fragments=2)

    result = llm.generate("hi")
    _, done = streamed(llm)

    expected = [("f", {"_raw": raw}), ("g", {"fine": 1})]
    assert calls_of(result) == expected
    assert calls_of(done) == expected


@pytest.mark.parametrize("provider", ["ollama", "anthropic", "bedrock"])
@pytest.mark.parametrize("raw", [[1, 2], "text", 7, True])
def test_object_arguments_of_another_json_type_are_kept_under_raw(
    server: MockLLMServer, llms: Interfaces, provider: str, raw: Any
) -> None:
    """Where the wire carries an object, a model (or a proxy) may still send another JSON
    value: it is kept whole. Served as a raw body, to control the JSON type exactly."""
    llm = llms.get(provider)
    server.enqueue_raw(200, _body_with_arguments(provider, raw), provider=provider)

    result = llm.generate("hi")

    assert calls_of(result) == [("f", {"_raw": raw})]


def _body_with_arguments(provider: str, raw: Any) -> dict[str, Any]:
    if provider == "ollama":
        message = {"role": "assistant", "content": "", "tool_calls": [_ollama_call(raw)]}
        return {"model": "m", "message": message, "done": True, "done_reason": "stop"}
    if provider == "anthropic":
        block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": raw}
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [block],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    use = {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": raw}}
    return {
        "output": {"message": {"role": "assistant", "content": [use]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    }


def _ollama_call(raw: Any) -> dict[str, Any]:
    return {"function": {"name": "f", "arguments": raw}}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_and_calls_before_a_cut_are_handed_over(
    server: MockLLMServer, llms: Interfaces, provider: str
) -> None:
    """A stream cut after its text and some calls: the text is in the error result (§7)
    and every call completed before the cut was already yielded as an event."""
    llm = llms.get(provider, max_retries=0)
    text = "one two three four"
    calls = [{**c, "id": f"callX000{i}"} for i, c in enumerate(CALLS[:2])]  # same every time
    server.enqueue(provider, text=text, tool_calls=calls, fragments=2)
    _, full = streamed(llm)
    assert full["content"] == text and len(full["tool_calls"]) == 2
    for cut in range(1, 12):
        server.enqueue(provider, text=text, tool_calls=calls, fragments=2, cut_after=cut)
        events, done = streamed(llm)
        got = "".join(e["text"] for e in events if e["type"] == "text")
        if "error" not in done:  # the cut fell after the last chunk
            assert done == full
            continue
        assert done["content"] == (got or None)
        assert text.startswith(got)
        assert done["tool_calls"] == [] and done["stop_reason"] == "error"
        yielded = [e["tool_call"] for e in events if e["type"] == "tool_call"]
        assert yielded == full["tool_calls"][: len(yielded)]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_text_before_an_error_event_is_kept_async(
    server: MockLLMServer, fresh: Any, provider: str
) -> None:
    llm = fresh(server).get(provider, max_retries=0)
    server.enqueue(provider, text="kept text here", fragments=3, stream_error=ErrorReply(503, "x"))

    events = [e async for e in llm.stream_async("hi")]

    got = "".join(e["text"] for e in events if e["type"] == "text")
    done = events[-1]["result"]
    assert got and "kept text here".startswith(got)
    assert (done["content"], done["stop_reason"]) == (got, "error")
