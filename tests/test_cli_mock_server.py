"""The CLI round trip of docs/cli.md: ``zerda mock-server --script FILE`` in one process,
``zerda chat --base-url`` against it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from zerda.cli import DEFAULT_MOCK_ANSWER, main
from zerda.testing import MockLLMServer


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "zerda", "mock-server", "--port", "0", *args],
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
def script_file(tmp_path: Path) -> Path:
    path = tmp_path / "responses.json"
    path.write_text(
        json.dumps(
            {
                "responses": [
                    {"provider": "openai", "text": "Bonjour from the script"},
                    {"error": {"status": 401, "message": "bad key"}, "provider": "openai"},
                ],
                "default": {"text": "The script's default"},
            }
        )
    )
    return path


@pytest.fixture
def mock_server(script_file: Path) -> Iterator[str]:
    process, url = _start("--script", str(script_file))
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _chat(url: str, *extra: str) -> tuple[int, str]:
    args = ["chat", "openai:gpt-4o-mini", "Say hi", "--base-url", f"{url}/openai/v1"]
    result = CliRunner().invoke(main, [*args, "--api-key", "test", *extra])
    return result.exit_code, result.output


def test_chat_round_trip_against_the_mock_server_command(mock_server: str) -> None:
    assert _chat(mock_server) == (0, "Bonjour from the script\n")
    code, output = _chat(mock_server)
    assert code == 1 and "openai authentication: bad key" in output
    assert _chat(mock_server) == (0, "The script's default\n")  # queue empty: the default


def test_mock_server_answers_with_the_default_text_without_a_script() -> None:
    process, url = _start()
    try:
        assert _chat(url) == (0, DEFAULT_MOCK_ANSWER + "\n")
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_bad_script_file_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"txt": "typo"}]))
    result = CliRunner().invoke(main, ["mock-server", "--port", "0", "--script", str(path)])
    assert result.exit_code == 1
    assert "responses[0]: unknown Script field(s): txt" in result.output


def test_load_script_queues_per_provider(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"text": "a"}, {"provider": "gemini", "text": "b"}]))
    with MockLLMServer() as server:
        assert server.load_script(path) == 2
        assert (server.pending(), server.pending("gemini")) == (1, 1)
