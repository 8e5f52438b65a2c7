"""The two-terminal round trip of docs/cli.md, run as written: the script file its ``echo``
line writes, ``zerda mock-server --script`` in its own process, then each ``zerda chat``
line, whose output must be the ``# ...`` line under it. Also the same script as YAML."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from zerda.cli import main
from zerda.testing import MockLLMServer

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _round_trip_block() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("A round trip with no key and no network")
    block = text[start:].split("```bash\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


def _start(script: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "zerda", "mock-server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("MockLLMServer on "):
        process.kill()
        raise AssertionError(f"mock-server did not start: {line!r} {process.communicate()}")
    return process, line.removeprefix("MockLLMServer on ").split()[0].rstrip(";")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """The running server's URL and the doc's lines after its ``zerda mock-server`` line."""
    lines = _round_trip_block()
    echo = next(line for line in lines if line.startswith("echo "))
    content, target = re.fullmatch(r"echo '(.*)' > (\S+)", echo).groups()  # type: ignore[union-attr]
    script = tmp_path / target
    script.write_text(content + "\n")
    serve = next(i for i, line in enumerate(lines) if line.startswith("zerda mock-server"))
    assert f"--script {target}" in lines[serve]
    process, url = _start(script)
    try:
        yield url, lines[serve + 1 :]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_documented_round_trip_prints_what_the_doc_says(
    served: tuple[str, list[str]],
) -> None:
    url, lines = served
    pairs = [
        (line, lines[i + 1].removeprefix("# "))
        for i, line in enumerate(lines)
        if line.startswith("zerda chat")
    ]
    assert len(pairs) == 2  # the scripted answer, then the default one
    for command, expected in pairs:
        args = shlex.split(command.replace("http://127.0.0.1:8080", url))[1:]
        result = CliRunner().invoke(main, args)
        assert (result.exit_code, result.output) == (0, expected + "\n"), command


def test_a_yaml_script_file(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    script = tmp_path / "responses.yaml"
    script.write_text(
        "responses:\n"
        "  - provider: openai\n"
        "    text: From YAML\n"
        "  - provider: openai\n"
        "    error: {status: 401, message: bad key}\n"
        "default:\n"
        "  text: The YAML default\n"
    )
    process, url = _start(script)
    try:
        outputs = []
        for _ in range(3):
            args = ["chat", "openai:gpt-4o-mini", "hi", "--base-url", f"{url}/openai/v1"]
            result = CliRunner().invoke(main, [*args, "--api-key", "test"])
            outputs.append((result.exit_code, result.output.strip()))
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert outputs[0] == (0, "From YAML")
    assert outputs[1][0] == 1 and "openai authentication: bad key" in outputs[1][1]
    assert outputs[2] == (0, "The YAML default")


def test_a_json_script_with_an_error_body_field(tmp_path: Path) -> None:
    """``fields`` of an error go into the provider's error object (Groq's tool_use_failed)."""
    script = tmp_path / "r.json"
    fields = {"code": "tool_use_failed", "failed_generation": "<f>"}
    script.write_text(
        json.dumps(
            [{"provider": "groq", "error": {"status": 400, "message": "x", "fields": fields}}]
        )
    )
    with MockLLMServer() as server:
        assert server.load_script(script) == 1
        resp = httpx.post(
            server.url + "/groq/openai/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": "Bearer k"},
        )
    assert resp.json() == {
        "error": {
            "message": "x",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": "<f>",
        }
    }
