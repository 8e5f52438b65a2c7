"""The registry is the one list of providers, and its traits are what the base enforces."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, create_interface, reasoning, registry
from zerda.llm._record import replace
from zerda.llm.registry import profiles
from zerda.testing import MockLLMServer

NAMES = list(registry.NAMES)
TOOLS = [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def make(server: MockLLMServer, name: str) -> Any:
    return create_interface(name, model="m", max_retries=0, **server.client_options(name))


def made(interfaces: Callable[..., Any], name: str) -> Any:
    """The row's interface, made once for the module (tests/conftest.py): the traits checked
    are the base's, on each call, and building an SDK client per check would cost more."""
    return interfaces(name, max_retries=0)


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
    server: MockLLMServer, interfaces: Callable[..., Any], name: str
) -> None:
    llm = made(interfaces, name)
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
    server: MockLLMServer, interfaces: Callable[..., Any], name: str, choice: str
) -> None:
    llm = made(interfaces, name)
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
def test_an_empty_tool_name_is_refused(
    server: MockLLMServer, interfaces: Callable[..., Any], name: str
) -> None:
    llm = made(interfaces, name)
    before = len(server.requests_for(name))
    result = llm.generate("hi", tools=[{"name": ""}])
    assert result["error"]["type"] == "invalid_request"
    assert "tools[0]" in result["error"]["message"]
    assert len(server.requests_for(name)) == before


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", ["fs.read", "a b", "x" * 129])
def test_names_outside_the_rule_in_full_are_sent_mapped(
    server: MockLLMServer, interfaces: Callable[..., Any], name: str, bad: str
) -> None:
    """The strict server checks the name sent against the wire's own rule (a name with a
    newline is refused: tests/reliability/test_input_checks.py)."""
    server.enqueue(name, text="ok")
    result = made(interfaces, name).generate("hi", tools=[{"name": bad}])
    assert result["content"] == "ok", result.get("error")
    assert server.last_request(name).rejected_by is None


def test_every_wire_has_a_renderer() -> None:
    from zerda.testing._server import load_renderer

    for wire in registry.wires():
        assert hasattr(load_renderer(wire), "render")


# --- model families: the profiles every hosting row reads ---------------------------------

ROWS_PY = Path(registry.rows.__file__)
MODEL_PATTERN_TRAITS = ("native_output_with_tools", "strict_output_models", "no_native_output")


def test_rows_write_no_model_pattern_of_their_own() -> None:
    # A row says ".*" (every model it serves) or nothing; which models of a family can do
    # what is the family's profile's, so a new generation is one edit in profiles.py.
    written = [
        (kw.arg, kw.value.value)
        for node in ast.walk(ast.parse(ROWS_PY.read_text()))
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg in MODEL_PATTERN_TRAITS and isinstance(kw.value, ast.Constant)
    ]
    assert written and all(value in ("", ".*") for _, value in written), written


@pytest.mark.parametrize(
    ("family", "rows"),
    [
        (profiles.CLAUDE, ("anthropic", "anthropic-bedrock", "anthropic-vertex", "bedrock")),
        (profiles.GEMINI, ("gemini", "vertex")),
    ],
)
def test_every_row_hosting_a_family_reads_its_profile(
    family: profiles.Profile, rows: tuple[str, ...]
) -> None:
    for name in rows:
        traits = registry.get(name).traits
        assert family.no_native_output in (traits.no_native_output or "."), name
        assert family.native_output_with_tools in traits.native_output_with_tools, name


def test_a_new_generation_is_one_profile_edit() -> None:
    # What a hosting row derives changes with the profile alone.
    newer = replace(profiles.CLAUDE, no_native_output=r"claude-3")
    derived = profiles.output_traits(newer, native_output_with_tools=".*")
    assert derived == {
        "no_native_output": "claude-3",
        "native_output_with_tools": ".*",
        "strict_output_models": "",
    }
    both = profiles.output_traits(
        profiles.GEMINI, replace(profiles.GEMINI, native_output_with_tools="gemini-4")
    )
    assert both["native_output_with_tools"] == "gemini-3|gemini-4"


def test_bedrock_reads_claudes_reasoning_rows_with_its_model_ids() -> None:
    claude = reasoning.TABLE["anthropic"]
    on_bedrock = reasoning.TABLE["bedrock"][: len(claude)]
    assert claude == profiles.CLAUDE.reasoning
    for mine, theirs in zip(claude, on_bedrock, strict=True):
        assert theirs.pattern == r"anthropic\." + (mine.pattern or "claude")
        assert (theirs.efforts, theirs.budgets, theirs.off) == (
            mine.efforts,
            mine.budgets,
            mine.off,
        )
        assert mine.matches("claude-opus-4-6") == theirs.matches("anthropic.claude-opus-4-6")


def test_the_gemini_generations_before_3_take_no_tool_media() -> None:
    for model, none in [
        ("gemini-2.5-flash", True),
        ("models/gemini-1.5-pro", True),
        ("gemini-3-pro-preview", False),
        ("gemini-10-ultra", False),
        ("gemma-3", False),
    ]:
        assert profiles.GEMINI.has("no_tool_media", model) is none, model
