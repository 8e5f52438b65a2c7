"""Structured output in tool mode on Gemini: the answer tool's call becomes the content and
its thought signature goes with it, so ``provider_data`` stays aligned with the calls left
(``tool_calls``), as the history mapping reads it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from zerda.llm import create_interface
from zerda.testing import MockLLMServer

pytest.importorskip("google.genai")


class City(BaseModel):
    name: str


ANSWER = {"name": "City", "arguments": {"name": "Paris"}}
OTHER = {"name": "get_time", "arguments": {"city": "Paris"}}
TOOLS = [{"name": "get_time", "description": "Time.", "parameters": {"type": "object"}}]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def _answer(server: MockLLMServer, calls: list[Any], **script: Any) -> dict[str, Any]:
    llm = create_interface("gemini", model="gemini-2.5-flash", **server.client_options("gemini"))
    server.enqueue("gemini", tool_calls=calls, **script)
    got: dict[str, Any] = llm.generate(
        "Paris?", tools=TOOLS, response_format=City, structured_output="tool"
    )
    return got


def test_a_signed_answer_leaves_no_signature_behind(server: MockLLMServer) -> None:
    got = _answer(server, [ANSWER])  # the server signs the answer call, the turn's first
    assert "provider_data" not in got and "provider_data" not in got["message"]
    assert (got["content"], got["tool_calls"], got["parsed"]) == (
        '{"name": "Paris"}',
        [],
        City(name="Paris"),
    )


def test_the_other_calls_keep_their_own_signatures(server: MockLLMServer) -> None:
    signed = {"gemini": {"thought_signatures": [None, "c2ln"]}}
    got = _answer(server, [ANSWER, OTHER], provider_data=signed)
    kept = {"gemini": {"thought_signatures": ["c2ln"]}}
    assert got["provider_data"] == got["message"]["provider_data"] == kept
    assert [c["name"] for c in got["tool_calls"]] == ["get_time"]


def test_a_signature_on_the_answer_is_not_moved_to_another_call(server: MockLLMServer) -> None:
    got = _answer(server, [ANSWER, OTHER])  # the default: the answer (first call) signed
    assert "provider_data" not in got
    assert [c["name"] for c in got["tool_calls"]] == ["get_time"]
