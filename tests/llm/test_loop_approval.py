"""Approvals (docs/loop.md, "Approvals, pause and resume"): ``requires_approval`` and the
``@zerda.llm.tool`` decorator, ``approve=`` answers, a paused run whose history is its whole
state, and ``decisions=`` resuming it, in another process or on another provider."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import zerda
from tests.llm.loop_support import (
    ID_A,
    ID_B,
    ROWS,
    WEATHER_PARIS,
    answered,
    call,
    get_weather,
    llm_for,
    sent_text,
    unanswered_calls,
)
from zerda.llm import PAUSE, tool, tool_from_function
from zerda.llm.functions import callable_registry
from zerda.testing import MockLLMServer

DELETED: list[str] = []


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture
def mock(server: MockLLMServer) -> Iterator[MockLLMServer]:
    server.reset()
    DELETED.clear()
    yield server
    server.reset()


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Deletes a file.

    Args:
        path: The file.
    """
    DELETED.append(path)
    return f"deleted {path}"


TOOLS = [get_weather, delete_file]


def get_weather_dict() -> dict[str, Any]:
    return {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}


PARIS = {"id": ID_A, "name": "get_weather", "arguments": {"city": "Paris"}}
DELETE = {"id": ID_B, "name": "delete_file", "arguments": {"path": "/tmp/x"}}


def script_pause(mock: MockLLMServer, provider: str) -> None:
    """A turn asking for a call that runs and one that needs approval."""
    mock.enqueue(
        provider,
        text="On it.",
        tool_calls=[
            call("get_weather", ID_A, city="Paris"),
            call("delete_file", ID_B, path="/tmp/x"),
        ],
    )


# --- the decorator ------------------------------------------------------------------------


def test_the_decorator_bare_and_with_arguments_keeps_the_function() -> None:
    @tool
    def plain(x: int) -> int:
        """Doubles."""
        return 2 * x

    @tool(name="lookup.city", description="Finds a city.", strict=True, timeout=2)
    def find(name: str) -> str:
        """Ignored for the description."""
        return name

    assert plain(2) == 4 and find("Oslo") == "Oslo"  # still ordinary functions
    assert tool_from_function(plain)["name"] == "plain"
    assert tool_from_function(find) == {
        "name": "lookup.city",
        "description": "Finds a city.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        "strict": True,
    }
    assert callable_registry([find]) == {"lookup.city": find}


def test_the_decorator_names_a_lambda() -> None:
    named = tool(name="double")(lambda x: 2 * x)
    assert callable_registry([named]) == {"double": named}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"timeout": -1}, "@tool(timeout=...) must be a positive number of seconds"),
        ({"timeout": 0}, "@tool(timeout=...) must be a positive number of seconds"),
        ({"requires_approval": "yes"}, "@tool(requires_approval=...) must be True or False"),
        ({"name": ""}, "@tool(name=...) must be a non-empty string"),
        ({"strict": 1}, "@tool(strict=...) must be True or False"),
    ],
)
def test_the_decorator_refuses_bad_settings(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tool(**arguments)


def test_the_decorator_refuses_a_class() -> None:
    with pytest.raises(TypeError, match="@tool decorates a function"):
        tool(dict)


# --- pause -------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ROWS)
def test_a_tool_that_requires_approval_pauses_the_run(mock: MockLLMServer, provider: str) -> None:
    script_pause(mock, provider)
    result = llm_for(mock, provider).run("Clean up", tools=TOOLS)
    assert result["stop_reason"] == "paused"
    assert result["pending"] == [{**DELETE, "index": 1}]
    assert result["content"] == "On it." and result["turns"] == 1
    # The call that needed no approval ran; the other has no result yet.
    assert answered(result) == [(WEATHER_PARIS, False)]
    assert unanswered_calls(result["messages"]) == [ID_B]
    assert DELETED == []
    assert json.loads(json.dumps(result["messages"])) == result["messages"]  # plain JSON
    assert len(mock.requests_for(provider)) == 1


@pytest.mark.parametrize("provider", ROWS)
@pytest.mark.parametrize(
    ("decision", "content", "is_error"),
    [
        (True, "deleted /tmp/x", False),
        (False, "The user refused this tool call.", True),
        ("Not that file.", "Not that file.", True),
        ({"arguments": {"path": "/tmp/y"}}, "deleted /tmp/y", False),
    ],
)
def test_decisions_resume_without_calling_the_model_first(
    mock: MockLLMServer, provider: str, decision: Any, content: str, is_error: bool
) -> None:
    llm = llm_for(mock, provider)
    script_pause(mock, provider)
    paused = llm.run("Clean up", tools=TOOLS)
    mock.enqueue(provider, text="Done.")
    resumed = llm.run(
        json.loads(json.dumps(paused["messages"])), tools=TOOLS, decisions={ID_B: decision}
    )
    assert (resumed["content"], resumed["stop_reason"], resumed["turns"]) == (
        "Done.",
        "end_turn",
        1,
    )
    assert answered(resumed) == [(WEATHER_PARIS, False), (content, is_error)]
    assert [m["role"] for m in resumed["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert len(mock.requests_for(provider)) == 2  # the pause's turn and the answer
    assert content in sent_text(mock, provider, 1)


# A new process: the tools, an interface, the stored history and the decision.
RESUME = f"""
import json, sys
from zerda.llm import create_interface, tool

@tool(requires_approval=True)
def delete_file(path: str) -> str:
    \"\"\"Deletes a file.\"\"\"
    return "deleted " + path

options = json.loads(sys.argv[2])
llm = create_interface("anthropic", model="test-model", max_retries=0, **options)
history = json.loads(open(sys.argv[1]).read())
result = llm.run(history, tools=[delete_file], decisions={{"{ID_B}": True}})
print(json.dumps([result["content"], result["messages"][-2]["content"]]))
"""


def test_a_paused_run_resumes_in_another_process(mock: MockLLMServer, tmp_path: Path) -> None:
    llm = llm_for(mock, "anthropic")
    script_pause(mock, "anthropic")
    paused = llm.run("Clean up", tools=TOOLS)
    state = tmp_path / "state.json"
    state.write_text(json.dumps(paused["messages"]))
    mock.enqueue("anthropic", text="Deleted it.")
    out = subprocess.run(
        [sys.executable, "-c", RESUME, str(state), json.dumps(mock.client_options("anthropic"))],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(zerda.__file__).parents[1])},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["Deleted it.", "deleted /tmp/x"]


@pytest.mark.parametrize("pause_on", ["anthropic", "gemini"])
def test_a_paused_run_resumes_on_another_provider(mock: MockLLMServer, pause_on: str) -> None:
    resume_on = "bedrock" if pause_on == "anthropic" else "openai-responses"
    script_pause(mock, pause_on)
    paused = llm_for(mock, pause_on).run("Clean up", tools=TOOLS)
    mock.enqueue(resume_on, text="Done.")
    resumed = llm_for(mock, resume_on).run(paused["messages"], tools=TOOLS, decisions={ID_B: True})
    assert resumed["content"] == "Done." and DELETED == ["/tmp/x"]
    assert len(mock.requests_for(resume_on)) == 1


def test_a_resume_with_some_calls_still_undecided_pauses_again(mock: MockLLMServer) -> None:
    mock.enqueue(
        "openai",
        tool_calls=[call("delete_file", ID_A, path="/a"), call("delete_file", ID_B, path="/b")],
    )
    llm = llm_for(mock, "openai")
    paused = llm.run("Clean up", tools=TOOLS)
    assert [p["id"] for p in paused["pending"]] == [ID_A, ID_B]
    again = llm.run(paused["messages"], tools=TOOLS, decisions={ID_B: True})
    assert again["stop_reason"] == "paused" and again["turns"] == 0
    assert again["pending"] == [
        {"id": ID_A, "name": "delete_file", "arguments": {"path": "/a"}, "index": 0}
    ]
    assert answered(again) == [("deleted /b", False)]
    mock.enqueue("openai", text="Done.")
    done = llm.run(again["messages"], tools=TOOLS, decisions={ID_A: "No."})
    # The results go back in call order, whatever order they were decided in.
    assert answered(done) == [("No.", True), ("deleted /b", False)]
    assert done["content"] == "Done." and len(mock.requests_for("openai")) == 2


def test_a_history_with_pending_calls_and_no_decisions_runs_them_first(
    mock: MockLLMServer,
) -> None:
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [PARIS]},
    ]
    mock.enqueue("openai", text="Sunny.")
    result = llm_for(mock, "openai").run(history, tools=TOOLS)
    assert answered(result) == [(WEATHER_PARIS, False)]
    assert result["content"] == "Sunny." and result["turns"] == 1


def test_calls_without_ids_are_decided_by_position_and_wait_together(
    mock: MockLLMServer,
) -> None:
    # Gemini and Ollama may send calls without ids; their results are matched by position,
    # so none of the turn's results is added before all can be.
    history = [
        {"role": "user", "content": "Go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": None, "name": "get_weather", "arguments": {"city": "Paris"}},
                {"id": None, "name": "delete_file", "arguments": {"path": "/x"}},
            ],
        },
    ]
    llm = llm_for(mock, "gemini")
    paused = llm.run(history, tools=TOOLS)
    assert paused["stop_reason"] == "paused" and paused["messages"] == history
    assert [(p["name"], p["index"]) for p in paused["pending"]] == [("delete_file", 1)]
    mock.enqueue("gemini", text="Done.")
    done = llm.run(paused["messages"], tools=TOOLS, decisions={1: True})
    assert answered(done) == [(WEATHER_PARIS, False), ("deleted /x", False)]
    assert done["content"] == "Done."


# --- approve= -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "content", "is_error"),
    [
        (True, {"city": "Paris", "temp": 18, "unit": "celsius"}, False),
        (False, "The user refused this tool call.", True),
        ("Ask me first.", "Ask me first.", True),
        ({"arguments": {"city": "Oslo"}}, {"city": "Oslo", "temp": 18, "unit": "celsius"}, False),
    ],
)
async def test_approve_answers_every_call_sync_and_async(
    mock: MockLLMServer, answer: Any, content: Any, is_error: bool
) -> None:
    asked: list[dict[str, Any]] = []

    def approve(c: dict[str, Any]) -> Any:
        asked.append(c)
        return answer

    async def approve_async(c: dict[str, Any]) -> Any:
        return approve(c)

    llm = llm_for(mock, "openai")
    results = []
    for runner, check in (
        (llm.run, approve),
        (llm.run_async, approve_async),
        (llm.run, approve_async),
    ):
        mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
        mock.enqueue("openai", text="ok")
        result = runner("Weather?", tools=[get_weather], approve=check)
        results.append(await result if inspect.iscoroutine(result) else result)
    assert [c["arguments"] for c in asked] == [{"city": "Paris"}] * 3
    assert all(answered(r) == [(content, is_error)] for r in results)
    assert results[0] == results[1] == results[2]


def test_approve_may_answer_pause(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
    result = llm_for(mock, "openai").run("Weather?", tools=[get_weather], approve=lambda c: PAUSE)
    assert result["stop_reason"] == "paused"
    assert result["pending"] == [{**PARIS, "index": 0}]


def test_approve_asks_in_call_order_before_running_any(mock: MockLLMServer) -> None:
    seen: list[str] = []

    def approve(c: dict[str, Any]) -> bool:
        seen.append(f"asked {c['arguments']['city']}")
        return True

    def weather(city: str) -> str:
        """Weather."""
        seen.append(f"ran {city}")
        return "sunny"

    mock.enqueue(
        "openai", tool_calls=[call("weather", ID_A, city="A"), call("weather", ID_B, city="B")]
    )
    mock.enqueue("openai", text="ok")
    llm_for(mock, "openai").run("Go", tools=[weather], approve=approve)
    assert seen[:2] == ["asked A", "asked B"] and sorted(seen[2:]) == ["ran A", "ran B"]


def test_an_approve_answer_of_another_kind_is_an_error(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
    with pytest.raises(ValueError, match=rf"approve\(\) for tool call '{ID_A}': expected True"):
        llm_for(mock, "openai").run("Go", tools=[get_weather], approve=lambda c: None)


def test_on_tool_call_keeps_working_as_true_or_false(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("get_weather", ID_A, city="Paris")])
    mock.enqueue("openai", text="ok")
    # Its answer is taken as True or False: a text means yes here, as it always did.
    result = llm_for(mock, "openai").run("Go", tools=[get_weather], on_tool_call=lambda c: "yes")
    assert answered(result) == [(WEATHER_PARIS, False)]


def test_on_tool_call_decides_for_a_tool_that_requires_approval(mock: MockLLMServer) -> None:
    mock.enqueue("openai", tool_calls=[call("delete_file", ID_B, path="/x")])
    mock.enqueue("openai", text="ok")
    result = llm_for(mock, "openai").run("Go", tools=TOOLS, on_tool_call=lambda c: False)
    assert answered(result) == [("The user refused this tool call.", True)]


def test_a_dict_tool_may_require_approval_and_be_answered_by_the_caller(
    mock: MockLLMServer,
) -> None:
    lookup = {
        "name": "lookup",
        "description": "Looks up a record (answered by the application).",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
        "requires_approval": True,
    }
    mock.enqueue("openai", tool_calls=[call("lookup", ID_A, key="k1")])
    llm = llm_for(mock, "openai")
    paused = llm.run("Find k1", tools=[lookup])
    assert paused["pending"][0]["name"] == "lookup"
    assert "requires_approval" not in sent_text(mock, "openai", 0)  # never sent
    # The application answers the call itself, then the run continues from the history.
    history = [
        *paused["messages"],
        {
            "role": "tool",
            "tool_call_id": ID_A,
            "name": "lookup",
            "content": "v1",
            "is_error": False,
        },
    ]
    mock.enqueue("openai", text="It is v1.")
    assert llm.run(history, tools=[lookup])["content"] == "It is v1."


# --- bad input: refused before anything is sent ---------------------------------------------


def paused_history(mock: MockLLMServer) -> list[dict[str, Any]]:
    script_pause(mock, "openai")
    messages: list[dict[str, Any]] = llm_for(mock, "openai").run("Go", tools=TOOLS)["messages"]
    mock.reset()
    return messages


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ({"nope": True}, r"decisions: 'nope' names no pending tool call \(pending: 'ghiJKL456'\)"),
        ({ID_B: 3}, r"decisions\['ghiJKL456'\]: expected True, False, a denial text"),
        ({ID_B: {"arguments": "x"}}, r"decisions\['ghiJKL456'\]: expected True"),
        ([ID_B], r"decisions must be a dict"),
    ],
)
def test_bad_decisions_are_refused_before_anything_is_sent(
    mock: MockLLMServer, decisions: Any, message: str
) -> None:
    history = paused_history(mock)
    with pytest.raises(ValueError, match=message):
        llm_for(mock, "openai").run(history, tools=TOOLS, decisions=decisions)
    assert mock.requests_for("openai") == [] and DELETED == []


def test_decisions_without_pending_calls_are_refused(mock: MockLLMServer) -> None:
    with pytest.raises(ValueError, match="decisions= was given, but the history has no pending"):
        llm_for(mock, "openai").run("Hi", tools=TOOLS, decisions={ID_A: True})
    assert mock.requests_for("openai") == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"approve": "yes"}, "approve must be a function of the call"),
        ({"approve": bool, "on_tool_call": bool}, "pass approve= or on_tool_call="),
        (
            {"tools": [{**get_weather_dict(), "requires_approval": "y"}]},
            r"tools\[0\] \('get_weather'\): requires_approval must be True or False",
        ),
    ],
)
def test_bad_approval_arguments_are_refused(
    mock: MockLLMServer, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        llm_for(mock, "openai").run("Hi", **{"tools": TOOLS, **arguments})
    assert mock.requests_for("openai") == []


def test_the_decorator_and_pause_import_no_asyncio_and_no_pydantic() -> None:
    code = (
        "import sys\n"
        "from zerda.llm import PAUSE, tool\n"
        "@tool(requires_approval=True, timeout=5)\n"
        "def f(x: int) -> int:\n"
        "    return x\n"
        "print(sorted(m for m in ('asyncio', 'pydantic', 'concurrent.futures') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(zerda.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
