"""Structured answers nested past Python's recursion limit (issue 34, item 2): a degenerate
``[[[[...`` answer (1,500 characters) or one nested hundreds of levels deep gives
``parsed: None`` and a ``parse_error`` from generate, stream and run on every row, in
native and tool mode; with ``raise_errors=True`` it is the usual OutputValidationError.
Nothing raises RecursionError, and the content is kept."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from zerda.llm import OutputValidationError, create_interface, registry
from zerda.llm._structured import OutputSpec, PartialParser, answer_text, parse_answer
from zerda.llm.errors import excerpt
from zerda.llm.registry import NAMES
from zerda.llm.tools import _parse_json_arguments
from zerda.testing import MockLLMServer

DEEP = "[" * 1500  # the degenerate output of the issue
CLOSED = "[" * 900 + "]" * 900  # valid JSON, nested too deep for the walks after json.loads
TREE = {  # a recursive schema: jsonschema walks the answer as deep as it nests
    "name": "tree",
    "schema": {"type": "object", "properties": {"c": {"type": "array", "items": {"$ref": "#"}}}},
}


def tree(pairs: int) -> str:
    """A valid tree answer, 2 * ``pairs`` + 1 levels deep."""
    return '{"c": [' * pairs + "{}" + "]}" * pairs


class City(BaseModel):
    name: str


# The rows whose wire carries tool arguments as JSON text the mock can fill with any text
# (google-genai's types hold Gemini's arguments as an object: the mock cannot send text).
_TEXT_ARGUMENTS = [p for p in NAMES if registry.get(p).wire not in ("gemini", "vertex")]
CASES = [
    (p, mode)
    for p in NAMES
    for mode in ("native", "tool")
    if mode in registry.get(p).traits.structured_output
    and (mode == "native" or p in _TEXT_ARGUMENTS)
]


@pytest.fixture(scope="module")
def mock() -> Any:
    with MockLLMServer() as server:
        yield server


def _make(server: MockLLMServer, provider: str) -> Any:
    return create_interface(
        provider, model="test-model", max_retries=0, **server.client_options(provider)
    )


def _enqueue(server: MockLLMServer, provider: str, mode: str, text: str) -> None:
    if mode == "native":
        server.enqueue(provider, text=text)
    else:
        server.enqueue(provider, tool_calls=[{"name": "City", "arguments": text}])


def _invalid(result: dict[str, Any], text: str) -> None:
    assert "error" not in result, result.get("error")
    assert result["parsed"] is None
    assert result["content"] == text
    assert result["parse_error"].startswith("the answer nests too deeply"), result["parse_error"]


@pytest.mark.parametrize(("provider", "mode"), CASES)
def test_generate_stream_and_run_give_a_parse_error(
    mock: MockLLMServer, provider: str, mode: str
) -> None:
    llm = _make(mock, provider)
    kw: dict[str, Any] = {"response_format": City, "structured_output": mode}
    _enqueue(mock, provider, mode, DEEP)
    _invalid(llm.generate("q", **kw), DEEP)
    _enqueue(mock, provider, mode, DEEP)
    events = list(llm.stream("q", **kw))
    assert [e["type"] for e in events if e["type"] not in ("text", "partial")] == ["done"]
    _invalid(events[-1]["result"], DEEP)
    _enqueue(mock, provider, mode, DEEP)
    result = llm.run("q", **kw)
    _invalid(result, DEEP)
    assert result["turns"] == 1
    _enqueue(mock, provider, mode, DEEP)
    with pytest.raises(OutputValidationError) as info:
        llm.generate("q", raise_errors=True, **kw)
    assert info.value.result is not None
    _invalid(info.value.result, DEEP)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "bedrock", "ollama"])
def test_async_and_deep_valid_json(mock: MockLLMServer, provider: str) -> None:
    async def calls() -> list[dict[str, Any]]:
        llm = _make(mock, provider)
        mock.enqueue(provider, text=DEEP)
        first = await llm.generate_async("q", response_format=City, structured_output="native")
        mock.enqueue(provider, text=CLOSED)
        events = [e async for e in llm.stream_async("q", response_format=TREE)]
        mock.enqueue(provider, text=CLOSED)
        run = await llm.run_async("q", response_format="json")
        await llm.aclose()
        return [first, events[-1]["result"], run]

    first, streamed, run = asyncio.run(calls())
    _invalid(first, DEEP)
    _invalid(streamed, CLOSED)
    _invalid(run, CLOSED)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (DEEP, "it is nested past what the JSON decoder takes"),
        (CLOSED, ""),  # decoded or not, depending on the stack: too deep either way
        ('{"a":' * 1200 + "1" + "}" * 1200, ""),
        ("[" * 150 + "]" * 150, "150 levels of dicts and lists"),
        ("{" * 1500, None),  # not JSON at its second character
    ],
)
@pytest.mark.parametrize("kind", ["model", "schema", "json"])
def test_parse_answer_never_raises(text: str, why: str | None, kind: str) -> None:
    schema = TREE["schema"] if kind == "schema" else None
    spec = OutputSpec(kind, "x", schema, model=City if kind == "model" else None)
    parsed, error = parse_answer(spec, text)
    assert parsed is None and error is not None
    if why is None:
        assert error.startswith("the answer is not valid JSON: Expecting property name")
    else:
        assert error.startswith("the answer nests too deeply (" + why)
        assert error.endswith("; Zerda parses at most 100 levels")


def test_validation_deep_in_the_stack_is_a_parse_error() -> None:
    # Within the depth limit, but validated from a caller already deep in its stack: the
    # recursive schema's walk reaches the recursion limit.
    spec = OutputSpec("schema", "tree", TREE["schema"])
    text = tree(49)

    def nested(levels: int) -> tuple[Any, str | None]:
        return parse_answer(spec, text) if levels == 0 else nested(levels - 1)

    parsed, error = nested(700)
    assert parsed is None
    assert error == (
        "the answer nests too deeply (it is nested too deeply to validate); "
        "Zerda parses at most 100 levels"
    )


def test_a_tree_within_the_limit_still_parses() -> None:
    spec = OutputSpec("schema", "tree", TREE["schema"])
    text = tree(49)
    assert parse_answer(spec, text) == (json.loads(text), None)


def test_partial_parser_and_tool_arguments_do_not_raise() -> None:
    parser = PartialParser()
    for text in (DEEP, CLOSED, '{"a": ' + DEEP):
        assert parser.feed(text) == []
    assert _parse_json_arguments(DEEP) == {"_raw": DEEP}
    assert _parse_json_arguments('{"a": ' + DEEP + "}") == {"_raw": '{"a": ' + DEEP + "}"}


def test_answer_text_of_arguments_too_deep_to_encode() -> None:
    arguments: Any = []
    for _ in range(3000):
        arguments = [arguments]
    assert answer_text({"a": arguments, "b": "é"}) == (
        '{"a": ' + "[" * 3001 + "]" * 3001 + ', "b": "é"}'
    )


def test_no_partial_deeper_than_an_answer_may_be() -> None:
    parser = PartialParser()
    assert parser.feed("[" * 150 + "]" * 150) == []  # jiter parses it: no partial all the same
    assert parser.feed('{"a": ' + "[" * 50) == [{"type": "partial", "partial": {"a": _nest(49)}}]


def _nest(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def test_an_excerpt_of_a_part_too_deep_to_show() -> None:
    assert excerpt(_nest(5000)) == "<a list nested too deeply to show>"
