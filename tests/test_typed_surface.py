"""A user's script is checked by their type checker (DESIGN §20): typos in argument names and
result keys fail ``mypy --strict`` and pyright at those lines; a correct script using results,
tool calls, usage, stream events and the loop passes both.

pyright runs as basedpyright (pyright's checker packaged with its own Node.js, so it needs no
download at test time), in pyright's "standard" mode.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

GOOD = '''\
from __future__ import annotations

from zerda.llm import create_interface, image, tool_result
from zerda.llm.types import Message, Result, RunResult, StreamEvent, Usage


def get_weather(city: str) -> dict[str, object]:
    """Current weather for a city."""
    return {"city": city, "temp_c": 18}


llm = create_interface("openai:gpt-4o-mini", api_key="k")
messages: list[Message] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Weather?"}, image(b"\\x89PNG")]},
]
result: Result = llm.generate(
    messages, tools=[get_weather], max_tokens=100, temperature=0.2, native={"seed": 1}
)
usage: Usage | None = result["usage"]
if usage is not None:
    total = (usage["input_tokens"] or 0) + (usage["output_tokens"] or 0)
if result["message"] is not None:
    messages.append(result["message"])
for call in result["tool_calls"]:
    messages.append(tool_result(call, get_weather(**call["arguments"])))
content: str | None = result["content"]
if "error" in result:
    print(result["error"]["type"], result["error"]["retryable"])
events: list[StreamEvent] = []
for event in llm.stream("hi", tool_choice="auto", reasoning="low"):
    if event["type"] == "text":
        print(event["text"])
    elif event["type"] == "tool_call_delta":
        print(event["index"], event["arguments"])
    elif event["type"] == "done":
        print(event["result"]["stop_reason"])
run: RunResult = llm.run("hi", tools=[get_weather], max_turns=3, budget={"tool_calls": 5})
print(run["messages"], run["turns"], run["usage"])
for step in llm.run("hi", tools=[get_weather], stream=True):
    if step["type"] == "tool_result":
        print(step["call"]["name"], step["is_error"])
'''

# Each line marked "# error" must be reported, and no other line.
BAD = """\
from __future__ import annotations

from zerda.llm import create_interface

llm = create_interface("openai:gpt-4o-mini", api_key="k")
llm.generate("hi", max_token=5)  # error
result = llm.generate("hi", max_tokens=5)
print(result["contnet"])  # error
usage = result["usage"]
if usage is not None:
    print(usage["input_token"])  # error
llm.stream("hi", temprature=0.5)  # error
for event in llm.stream("hi", temperature=0.5):
    if event["type"] == "text":
        print(event["txt"])  # error
for call in result["tool_calls"]:
    print(call["argument"])  # error
llm.run("hi", max_turn=3)  # error
run = llm.run("hi", max_turns=3)
print(run["turn"])  # error
"""


def marked_lines(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# error")}


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def mypy_errors(paths: list[Path]) -> tuple[dict[str, set[int]], str]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            "/dev/null",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = {
        path.name: {
            int(m.group(1))
            for m in re.finditer(rf"{re.escape(path.name)}:(\d+): error", out.stdout)
        }
        for path in paths
    }
    return lines, out.stdout


def pyright_errors(paths: list[Path]) -> tuple[dict[str, set[int]], str]:
    config = paths[0].parent / "pyrightconfig.json"
    config.write_text(json.dumps({"typeCheckingMode": "standard", "pythonVersion": "3.10"}))
    binary = Path(sys.executable).parent / "basedpyright"
    out = subprocess.run(
        [str(binary), "--outputjson", "--pythonpath", sys.executable, "-p", str(config)]
        + [str(path) for path in paths],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(out.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    lines = {
        path.name: {
            d["range"]["start"]["line"] + 1 for d in errors if Path(d["file"]).name == path.name
        }
        for path in paths
    }
    return lines, out.stdout


CHECKERS = {"mypy": mypy_errors, "pyright": pyright_errors}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Any]:
    """A checker's errors per script, the checker run once on both scripts (each run
    costs seconds: its start, and the zerda package it reads)."""
    folder = tmp_path_factory.mktemp("typed")
    paths = [write(folder, "good.py", GOOD), write(folder, "bad.py", BAD)]
    return functools.cache(lambda checker: CHECKERS[checker](paths))


@pytest.mark.parametrize("checker", list(CHECKERS))
def test_a_correct_script_passes(checked: Callable[[str], Any], checker: str) -> None:
    lines, report = checked(checker)
    assert lines["good.py"] == set(), report


@pytest.mark.parametrize("checker", list(CHECKERS))
def test_typos_in_arguments_and_keys_fail_at_their_lines(
    checked: Callable[[str], Any], checker: str
) -> None:
    lines, report = checked(checker)
    assert lines["bad.py"] == marked_lines(BAD), report


def test_native_options_reach_the_sdk_call_as_keywords_do() -> None:
    from zerda.llm import create_interface
    from zerda.testing import MockLLMServer

    with MockLLMServer() as server:
        llm = create_interface("openai:gpt-4o-mini", **server.client_options("openai"))
        server.enqueue("openai", text="7")
        server.enqueue("openai", text="7")
        assert llm.generate("Pick.", native={"seed": 7})["content"] == "7"
        assert llm.generate("Pick.", seed=7)["content"] == "7"  # type: ignore[call-arg]
        first, second = server.requests_for("openai")
        assert first.body == second.body and first.body["seed"] == 7
        with pytest.raises(TypeError, match="'seed' given both as an argument and in native="):
            llm.generate("Pick.", seed=1, native={"seed": 7})  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="native must be a dict"):
            llm.stream("Pick.", native=[("seed", 7)])  # type: ignore[arg-type]
