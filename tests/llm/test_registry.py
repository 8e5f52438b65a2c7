"""The registry is the one list of providers, and its traits are what the base enforces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, create_interface, registry
from zerda.testing import MockLLMServer

NAMES = list(registry.NAMES)
TOOLS = [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def make(server: MockLLMServer, name: str) -> Any:
    return create_interface(name, model="m", max_retries=0, **server.client_options(name))


@pytest.mark.parametrize("name", NAMES)
def test_every_row_builds_its_interface_and_answers(server: MockLLMServer, name: str) -> None:
    spec = registry.get(name)
    llm = make(server, name)
    assert type(llm) is spec.interface_class()
    assert (llm.provider, llm.spec) == (name, spec)
    server.enqueue(name, text="hello")
    assert llm.generate("hi")["content"] == "hello"


@pytest.mark.parametrize("name", NAMES)
def test_aliases_and_case_resolve_to_the_row(name: str) -> None:
    spec = registry.get(name)
    for alias in (name.upper(), *spec.aliases):
        assert registry.get(alias) is spec


def test_an_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown provider 'nope' \(known: .*openai"):
        create_interface("nope:m")


def test_a_model_given_twice_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="the model is given twice: 'gpt-4o'"):
        create_interface("openai:gpt-4o", model="gpt-4o-mini", api_key="k")


@pytest.mark.parametrize("name", NAMES)
def test_parallel_tool_calls_false_is_sent_only_where_the_row_allows(
    server: MockLLMServer, name: str
) -> None:
    llm = make(server, name)
    before = len(server.requests_for(name))
    if registry.get(name).traits.parallel_tool_calls:
        server.enqueue(name, text="ok")
        assert llm.generate("hi", tools=TOOLS, parallel_tool_calls=False)["content"] == "ok"
        assert len(server.requests_for(name)) == before + 1
        return
    with pytest.raises(InvalidRequestError, match=f"{name} has no such switch"):
        llm.generate("hi", tools=TOOLS, parallel_tool_calls=False, raise_errors=True)
    assert len(server.requests_for(name)) == before


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("choice", ["auto", "none", "required", "get_weather"])
def test_tool_choice_is_refused_where_the_provider_cannot_enforce_it(
    server: MockLLMServer, name: str, choice: str
) -> None:
    llm = make(server, name)
    kind = "name" if choice == "get_weather" else choice
    if kind in registry.get(name).traits.tool_choice:
        server.enqueue(name, text="ok")
        result = llm.generate("hi", tools=TOOLS, tool_choice=choice)
        assert result["content"] == "ok", result.get("error")
        return
    result = llm.generate("hi", tools=TOOLS, tool_choice=choice)
    assert result["error"]["type"] == "invalid_request"
    assert f"{name} cannot enforce it" in result["error"]["message"]


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_tool_name_is_refused(server: MockLLMServer, name: str) -> None:
    llm = make(server, name)
    before = len(server.requests_for(name))
    result = llm.generate("hi", tools=[{"name": ""}])
    assert result["error"]["type"] == "invalid_request"
    assert "tools[0]" in result["error"]["message"]
    assert len(server.requests_for(name)) == before


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", ["fs.read", "a b", "x" * 129])
def test_names_outside_the_rule_in_full_are_sent_mapped(
    server: MockLLMServer, name: str, bad: str
) -> None:
    """The strict server checks the name sent against the wire's own rule (a name with a
    newline is refused: tests/reliability/test_input_checks.py)."""
    server.enqueue(name, text="ok")
    result = make(server, name).generate("hi", tools=[{"name": bad}])
    assert result["content"] == "ok", result.get("error")
    assert server.last_request(name).rejected_by is None


def test_every_wire_has_a_renderer() -> None:
    from zerda.testing._server import load_renderer

    for wire in registry.wires():
        assert hasattr(load_renderer(wire), "render")
