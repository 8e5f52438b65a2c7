"""Two small portability fixes (issue 33): both Vertex AI rows take ``project`` and
``location`` (anthropic-vertex also its SDK's ``project_id`` / ``region``), and Ollama, which
applies no rule to tool names, gets MCP's dotted names unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface, registry
from zerda.testing import MockLLMServer


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


# --- Vertex AI: project and location on both rows ----------------------------------------

VERTEX_ROWS = [p for p in registry.NAMES if "Vertex AI" in registry.get(p).title]


def _without_place(server: MockLLMServer, provider: str) -> dict[str, Any]:
    names = ("project", "location", "project_id", "region")
    return {k: v for k, v in server.client_options(provider).items() if k not in names}


def test_the_vertex_rows() -> None:
    assert VERTEX_ROWS == ["anthropic-vertex", "vertex"]


@pytest.mark.parametrize("provider", VERTEX_ROWS)
def test_project_and_location_say_where_on_both_vertex_rows(
    server: MockLLMServer, provider: str
) -> None:
    llm = create_interface(
        provider,
        registry.get(provider).demo_model,
        project="proj-7",
        location="europe-west4",
        **_without_place(server, provider),
    )
    server.enqueue(provider, text="ok")
    assert llm.generate("hi")["content"] == "ok"
    assert "/projects/proj-7/locations/europe-west4/" in server.last_request(provider).path


def test_anthropic_vertex_still_takes_its_sdks_names(server: MockLLMServer) -> None:
    llm = create_interface(
        "anthropic-vertex",
        "claude-sonnet-4-6",
        project_id="proj-8",
        region="us-east5",
        **_without_place(server, "anthropic-vertex"),
    )
    server.enqueue("anthropic-vertex", text="ok")
    llm.generate("hi")
    assert "/projects/proj-8/locations/us-east5/" in server.last_request().path


def test_one_setting_under_two_names_with_two_values_is_refused(server: MockLLMServer) -> None:
    with pytest.raises(ValueError, match="location= and region= are one setting"):
        create_interface(
            "anthropic-vertex",
            "claude-sonnet-4-6",
            location="europe-west4",
            region="us-east5",
            **_without_place(server, "anthropic-vertex"),
        )
    same = create_interface(  # the same value twice is no conflict
        "anthropic-vertex",
        "claude-sonnet-4-6",
        project="p",
        project_id="p",
        region="us-east5",
        **_without_place(server, "anthropic-vertex"),
    )
    assert same.options["project_id"] == "p" and "project" not in same.options


# --- Ollama: tool names as they are --------------------------------------------------------

NAMES = ["github.create_issue", "fs.read", "get time", "x" * 80]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "documented"])
def test_ollama_gets_dotted_names_unchanged(server: MockLLMServer, fast: bool) -> None:
    llm = create_interface(
        "ollama", "qwen3", **server.client_options("ollama"), fast_path=fast, max_retries=0
    )
    tools = [{"name": n, "description": "A tool.", "parameters": {"type": "object"}} for n in NAMES]
    server.enqueue("ollama", tool_calls=[{"name": "github.create_issue", "arguments": {}}])
    result = llm.generate("File it.", tools=tools, tool_choice="github.create_issue")
    sent = [t["function"]["name"] for t in server.last_request("ollama").body["tools"]]
    assert sent == ["github.create_issue"]  # a named tool_choice sends only that tool
    assert result["tool_calls"][0]["name"] == "github.create_issue"
    server.enqueue("ollama", text="ok")
    llm.generate("hi", tools=tools)
    assert [t["function"]["name"] for t in server.last_request("ollama").body["tools"]] == NAMES


def test_ollama_still_refuses_a_control_character(server: MockLLMServer) -> None:
    llm = create_interface("ollama", "qwen3", **server.client_options("ollama"))
    tools = [{"name": "get_time\n", "parameters": {"type": "object"}}]
    result = llm.generate("hi", tools=tools)
    assert result["error"]["type"] == "invalid_request"
    assert "refuses the tool name 'get_time\\n'" in result["error"]["message"]
    assert server.requests == []
