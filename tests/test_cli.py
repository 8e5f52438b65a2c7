"""The zerda command, through its entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from zerda.cli import main
from zerda.llm.registry import NAMES as PROVIDERS
from zerda.testing import MockLLMServer


def zerda(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zerda", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


def test_demo_round_trips_on_every_provider() -> None:
    out = zerda("demo")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    count = len(PROVIDERS)
    assert len(lines) == count + 1  # one line per row, then the summary
    answer = 'get_weather({"city": "Paris"}) -> It is 18 °C and sunny in Paris.  (2 turns)'
    for provider, line in zip(PROVIDERS, lines[:-1], strict=True):
        assert line.split(None, 2) == [provider, "ok", answer]
    assert lines[-1] == f"{count}/{count} providers completed a tool-calling round trip"


def test_demo_verbose_prints_the_native_tool_shape() -> None:
    result = CliRunner().invoke(main, ["demo", "--provider", "anthropic", "--verbose"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if "native tool shape sent:" in x)
    native = json.loads(line.split("native tool shape sent: ", 1)[1])
    assert [t["name"] for t in native] == ["get_weather"] and "input_schema" in native[0]


def test_without_the_cli_extra_the_command_is_one_hint_line() -> None:
    code = (
        "import sys; sys.modules['click'] = None\n"  # import click fails as when not installed
        "from zerda._entry import main; main()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        'zerda: the command line needs the cli extra: pip install "zerda-llm[cli]"'
    ]


def test_help_on_every_command() -> None:
    runner = CliRunner()
    for args in (
        ["--help"],
        ["demo", "--help"],
        ["chat", "--help"],
        ["tools", "convert", "--help"],
        ["mock-server", "--help"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and "Usage:" in result.output


def test_tools_convert(tmp_path: Path) -> None:
    file = tmp_path / "tools.json"
    file.write_text(
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
                }
            ]
        )
    )
    result = CliRunner().invoke(main, ["tools", "convert", str(file), "--to", "bedrock"])
    assert result.exit_code == 0
    assert json.loads(result.output) == {
        "tools": [
            {
                "toolSpec": {
                    "name": "f",
                    "description": "d",
                    "inputSchema": {"json": {"type": "object"}},
                }
            }
        ]
    }


def test_tools_convert_maps_names_the_provider_refuses(tmp_path: Path) -> None:
    file = tmp_path / "tools.json"
    file.write_text(json.dumps([{"name": "fs.read", "parameters": {"type": "object"}}]))
    result = CliRunner().invoke(main, ["tools", "convert", str(file), "--to", "bedrock"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tools"][0]["toolSpec"]["name"] == "fs_read"
    assert result.stderr == "tool name 'fs.read' is sent to bedrock as 'fs_read'\n"


def test_tools_convert_a_bad_file_is_one_line(tmp_path: Path) -> None:
    file = tmp_path / "tools.json"
    file.write_text(json.dumps({"description": "nameless"}))
    result = CliRunner().invoke(main, ["tools", "convert", str(file), "--to", "openai"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: {file}: tools[0]: Each tool must have a 'name'."
    ]


def test_chat_json_against_the_mock_server(server: MockLLMServer) -> None:
    server.enqueue("openai", text="Hello there.")
    base = server.base_url("openai")
    out = zerda("chat", "openai:gpt-4o-mini", "hi", "--base-url", base, "--api-key", "k", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["content"] == "Hello there."
    assert server.last_request("openai").body["messages"] == [{"role": "user", "content": "hi"}]


def test_chat_runs_the_tool_loop_with_tool_options(server: MockLLMServer) -> None:
    server.enqueue("anthropic", tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}])
    server.enqueue("anthropic", text="Sunny in Oslo.")
    out = zerda(
        "chat",
        "anthropic:claude-x",
        "Weather?",
        "--tool",
        "zerda.cli:get_weather",
        "--base-url",
        server.base_url("anthropic"),
        "--api-key",
        "k",
        "--system",
        "Be brief.",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Sunny in Oslo."
    assert out.stderr.splitlines() == [
        'ran get_weather({"city": "Oslo"}) -> '
        '{"city": "Oslo", "temperature": 18, "unit": "celsius", "sky": "sunny"}'
    ]
    assert server.last_request("anthropic").body["system"] == "Be brief."


def test_chat_region_goes_to_the_rows_region_option(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def fake_create(target: str, **options: object) -> object:
        seen.update(target=target, **options)
        raise ValueError("stop here")

    monkeypatch.setattr("zerda.llm.create_interface", fake_create)
    result = CliRunner().invoke(main, ["chat", "vertex:gemini-2.5-flash", "hi", "--region", "eu"])
    assert result.exit_code == 1 and seen == {"target": "vertex:gemini-2.5-flash", "location": "eu"}
    seen.clear()
    CliRunner().invoke(main, ["chat", "bedrock:m", "hi", "--region", "us-west-2"])
    assert seen == {"target": "bedrock:m", "region": "us-west-2"}


def test_chat_region_on_a_row_without_one_names_the_rows_that_take_it() -> None:
    result = CliRunner().invoke(main, ["chat", "openai:m", "hi", "--region", "eu"])
    assert result.exit_code == 1
    assert "--region: openai takes no region (rows that do: bedrock, " in result.output


def test_chat_stream_prints_text(server: MockLLMServer) -> None:
    server.enqueue("gemini", text="Once upon a time.", fragments=3)
    out = zerda(
        "chat",
        "gemini:g",
        "story",
        "--stream",
        "--base-url",
        server.base_url("gemini"),
        "--api-key",
        "k",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Once upon a time."


def test_chat_errors_are_one_line_without_traceback(server: MockLLMServer) -> None:
    server.enqueue_error(401, "openai", message="invalid key")
    out = zerda(
        "chat",
        "openai:gpt-4o-mini",
        "hi",
        "--base-url",
        server.base_url("openai"),
        "--api-key",
        "k",
    )
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("Error: openai authentication:")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chat", "nope:m", "hi"], "unknown provider 'nope'"),
        (["chat", "openai", "hi"], "expected PROVIDER:MODEL"),
        (
            ["chat", "openai:m", "hi", "--api-key", "k", "--tool", "no_such_module:f"],
            "--tool 'no_such_module:f'",
        ),
    ],
)
def test_chat_bad_arguments(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output


def test_mock_server_prints_base_urls() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "zerda", "mock-server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(1 + len(PROVIDERS))]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert lines[0].startswith("MockLLMServer on http://127.0.0.1:")
    assert [line.split()[0] for line in lines[1:]] == list(PROVIDERS)


# --- issue 18, item 14 ------------------------------------------------------------------


@pytest.fixture
def tools_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A tools module in the current folder, which is not on sys.path (as for the `zerda`
    console script, whose sys.path starts with its bin folder)."""
    name = "zerda_cli_test_tools"
    (tmp_path / f"{name}.py").write_text(
        "def shout(text: str) -> str:\n"
        '    """Shouts.\n\n    Args:\n        text: What to shout.\n    """\n'
        "    return text.upper()\n"
    )
    monkeypatch.chdir(tmp_path)
    cwd = {"", str(tmp_path), str(Path.cwd())}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in cwd])
    yield name
    sys.modules.pop(name, None)


def tool_round_trip(server: MockLLMServer) -> None:
    server.enqueue("openai", tool_calls=[{"name": "shout", "arguments": {"text": "hi"}}])
    server.enqueue("openai", text="They shouted HI.")


def test_chat_tool_from_a_module_in_the_current_folder(
    server: MockLLMServer, tools_module: str
) -> None:
    tool_round_trip(server)
    args = ["chat", "openai:m", "hi", "--api-key", "k", "--base-url", server.base_url("openai")]
    result = CliRunner().invoke(main, [*args, "--tool", f"{tools_module}:shout"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "They shouted HI.\n"
    assert result.stderr == 'ran shout({"text": "hi"}) -> HI\n'


def test_chat_tool_with_stream_prints_the_answer_once(
    server: MockLLMServer, tools_module: str
) -> None:
    tool_round_trip(server)
    args = ["chat", "openai:m", "hi", "--api-key", "k", "--base-url", server.base_url("openai")]
    result = CliRunner().invoke(main, [*args, "--tool", f"{tools_module}:shout", "--stream"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "They shouted HI.\n"


def test_demo_with_an_unknown_provider_is_one_error_line() -> None:
    out = zerda("demo", "--provider", "nope")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("Error: unknown provider 'nope' (known: ")
