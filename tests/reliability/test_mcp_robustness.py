"""Issue 34 (risk "MCP has no timeout by default") and issue 36 (MCP errors): MCPTools waits
at most ``timeout`` seconds (60 by default) for the start (initialize, list_tools) and for each
tool call; a failed start is one ZerdaError naming the server (command or URL, never a header,
an env value or a URL credential) and the cause, never an exception group; no server process
outlives a failed start, an interrupted ``__enter__`` or an interpreter exiting meanwhile; a
command server's stderr goes to ``errlog`` (it works where ``sys.stderr`` has no file
descriptor, as in a notebook), and an older server's protocol-probe dump is one DEBUG record.

Every server here is a local process or 127.0.0.1."""

from __future__ import annotations

import inspect
import io
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from zerda.llm import create_interface, errors  # noqa: E402
from zerda.llm.mcp import MCPTools, _ProtocolNoise  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402

SERVER_FILE = Path(__file__).parents[1] / "llm" / "mcp_server.py"
SERVER = [sys.executable, str(SERVER_FILE)]
SECRET = "sk-MARKER-mcp-secret-7731"

# A server that reads the first request and never answers, ignoring SIGTERM too; it writes
# its pid to the file named by its first argument.
HANG = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
    sys.stdin.readline()
    time.sleep(600)
    """
)


def hang_server(tmp_path: Path) -> tuple[list[str], Path]:
    pid_file = tmp_path / "server.pid"
    return [sys.executable, "-c", HANG, str(pid_file)], pid_file


def gone(pid: int) -> bool:
    """Whether the process has ended and been reaped (a zombie still has /proc/<pid>)."""
    if Path("/proc").is_dir():
        return not Path(f"/proc/{pid}").exists()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_gone(pid: int, within: float = 30.0) -> bool:
    """Polls (the kill and the reaping happen in other threads or processes); generous."""
    deadline = time.monotonic() + within
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def read_pid(pid_file: Path) -> int:
    return int(pid_file.read_text())


# What a server that never answers is given to start. It has only to write its pid (an
# interpreter importing nothing but the standard library, under 0.1 s even on a loaded box)
# before it is killed: 2 s is a wide margin, and the error must name it.
NO_ANSWER_TIMEOUT = 2


# The mcp SDK's stdio client stops a server by closing its stdin, waiting, sending SIGTERM,
# waiting again, then SIGKILL (mcp.client.stdio; 2 s per wait in mcp 2.3). The tests that
# kill a server shorten the waits to 0.3 s: the steps are the same, so a server ignoring
# SIGTERM is still killed, as they check.
KILL_WAITS = ("PROCESS_TERMINATION_TIMEOUT", "FORCE_KILL_TIMEOUT")


@pytest.fixture
def quick_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.client import stdio

    for name in KILL_WAITS:
        if hasattr(stdio, name):  # an mcp without these names waits as it does
            monkeypatch.setattr(stdio, name, 0.3)


# quick_kill in an interpreter of its own.
_QUICK_KILL = f"""
from mcp.client import stdio
for name in {KILL_WAITS!r}:
    if hasattr(stdio, name):
        setattr(stdio, name, 0.3)
"""


@pytest.fixture
def kill_leftovers() -> Iterator[list[int]]:
    """Pids to kill after the test if a bug left them running (never our own processes)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not gone(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def chain_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


# --- the default timeout --------------------------------------------------------------------


def test_the_default_timeout_is_60_seconds() -> None:
    assert inspect.signature(MCPTools).parameters["timeout"].default == 60.0


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_an_unusable_timeout_is_refused_at_construction(timeout: float) -> None:
    with pytest.raises(ValueError, match="MCPTools: timeout must be a positive number"):
        MCPTools(SERVER, timeout=timeout)


def test_a_server_that_never_answers_initialize_fails_after_the_timeout(
    tmp_path: Path, kill_leftovers: list[int], quick_kill: None
) -> None:
    command, pid_file = hang_server(tmp_path)
    with pytest.raises(errors.TimeoutError) as caught, MCPTools(command, timeout=NO_ANSWER_TIMEOUT):
        pass
    pid = read_pid(pid_file)
    kill_leftovers.append(pid)
    assert caught.value.message.startswith(f"MCP server {command[0]} -c ")
    assert (
        f"did not start within {NO_ANSWER_TIMEOUT} s (connecting, initialize, list_tools;"
        in caught.value.message
    )
    assert wait_gone(pid), "the server outlived its failed start"


async def test_async_a_server_that_never_answers_initialize_fails_after_the_timeout(
    tmp_path: Path, kill_leftovers: list[int], quick_kill: None
) -> None:
    command, pid_file = hang_server(tmp_path)
    with pytest.raises(errors.TimeoutError, match=f"did not start within {NO_ANSWER_TIMEOUT} s"):
        async with MCPTools(command, timeout=NO_ANSWER_TIMEOUT):
            pass
    pid = read_pid(pid_file)
    kill_leftovers.append(pid)
    assert wait_gone(pid)


def test_a_hung_tool_call_fails_after_the_timeout_and_the_loop_goes_on() -> None:
    # The timeout also bounds the start, which a loaded machine can make slow: 10 s. The
    # direct call and the loop's call hang at the same time, so the test waits it out once.
    with (
        MockLLMServer() as mock,
        MCPTools([*SERVER, "--slow"], timeout=10) as tools,
        ThreadPoolExecutor(1) as beside,
    ):
        sleep, add = tools[-1], tools[0]
        mock.enqueue("openai", tool_calls=[{"name": "sleep", "arguments": {"seconds": 600}}])
        mock.enqueue("openai", text="Done.")
        llm = create_interface("openai", model="m", max_retries=0, **mock.client_options("openai"))
        hung = beside.submit(sleep.call, {"seconds": 600})
        result = llm.run("Wait", tools=tools)
        with pytest.raises(errors.TimeoutError) as caught:
            hung.result(timeout=60)
        assert caught.value.message == (
            f"MCP server {SERVER[0]} {SERVER[1]} --slow: tool 'sleep' did not answer within "
            "10 s (MCPTools(timeout=))"
        )
        assert add.call({"a": 2, "b": 2}).content == "4"  # the session still works
    assert result["content"] == "Done."
    assert result["messages"][2]["is_error"] is True
    assert result["messages"][2]["content"] == f"TimeoutError: {caught.value.message}"


# --- one clear error, no process left -------------------------------------------------------


def test_a_server_that_crashes_at_start_is_one_clear_error(
    tmp_path: Path, kill_leftovers: list[int]
) -> None:
    pid_file = tmp_path / "crash.pid"
    script = (
        "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); "
        "sys.stderr.write('Traceback...\\nImportError: no module named weather\\n'); sys.exit(3)"
    )
    command = [sys.executable, "-c", script, str(pid_file)]
    with pytest.raises(errors.ZerdaError) as caught, MCPTools(command, env={"TOKEN": SECRET}):
        pass
    error = caught.value
    kill_leftovers.append(read_pid(pid_file))
    assert type(error) is errors.ConnectionError
    assert error.retryable is False
    assert error.message.startswith(f"MCP server {command[0]} -c ")
    assert error.message.endswith(
        " closed the connection before the session started: it exited, or is not an MCP "
        "server; its stderr ended with: Traceback... | ImportError: no module named weather"
    )
    assert isinstance(error.__cause__, Exception)
    assert not hasattr(error.__cause__, "exceptions")  # no exception group, even as a cause
    assert SECRET not in chain_text(error)
    assert wait_gone(read_pid(pid_file))


def test_a_command_that_is_not_an_mcp_server_says_what_it_wrote(
    tmp_path: Path, kill_leftovers: list[int], quick_kill: None
) -> None:
    pid_file = tmp_path / "chatty.pid"
    script = (
        "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
        "print('Welcome to my CLI!', flush=True); sys.stdin.readline(); time.sleep(600)"
    )
    command = [sys.executable, "-c", script, str(pid_file)]
    with pytest.raises(errors.TimeoutError) as caught, MCPTools(command, timeout=NO_ANSWER_TIMEOUT):
        pass
    kill_leftovers.append(read_pid(pid_file))
    assert f"did not start within {NO_ANSWER_TIMEOUT} s" in caught.value.message
    assert "it wrote what is not MCP (JSON-RPC) on its stdout: " in caught.value.message
    assert "Welcome to my CLI!" in caught.value.message
    assert wait_gone(read_pid(pid_file))


def test_a_url_where_nothing_listens_is_one_clear_error_without_credentials() -> None:
    url = f"http://user:{SECRET}@127.0.0.1:{free_port()}/mcp?api_key={SECRET}"
    headers = {"Authorization": f"Bearer {SECRET}"}
    with pytest.raises(errors.ZerdaError) as caught, MCPTools(url, headers=headers):
        pass
    error = caught.value
    assert type(error) is errors.ConnectionError
    host = url.split("@")[1].split("/")[0]
    assert error.message == (
        f"MCP server http://{host}/mcp?... could not be reached: ConnectError: "
        "All connection attempts failed"
    )
    assert SECRET not in chain_text(error) and SECRET not in repr(error)


def test_a_url_that_is_no_mcp_endpoint_is_one_clear_error() -> None:
    with (
        MockLLMServer() as http,
        pytest.raises(errors.ZerdaError) as caught,
        MCPTools(http.url + "/not-mcp", headers={"X-Key": SECRET}),
    ):
        pass
    error = caught.value
    assert type(error) is errors.NotFoundError
    assert error.message.startswith(f"MCP server {http.url}/not-mcp ")
    assert error.message.endswith(": is this the server's MCP endpoint?")
    assert SECRET not in chain_text(error)


# --- the interpreter exits, or the caller is interrupted, during __enter__ --------------------

_EXIT_DURING_ENTER = """
import os, sys, threading, time
sys.path[:0] = {paths!r}
from zerda.llm.mcp import MCPTools
{quick_kill}
pid_file = sys.argv[1]
command = [sys.executable, "-c", {hang!r}, pid_file]
threading.Thread(
    target=lambda: MCPTools(command, timeout=None).__enter__(), daemon=True
).start()
while not (os.path.exists(pid_file) and open(pid_file).read()):
    time.sleep(0.05)
time.sleep(0.5)  # the server has read the first request
sys.exit(0)  # the interpreter exits while __enter__ waits for the server
"""

# The child installs Python's own Ctrl-C handler first: a pytest-xdist worker can hold SIGINT
# ignored by the time this test runs (seen after other tests of the suite), and an ignored
# signal stays ignored across exec, so Python would not install its handler and the
# interrupt below would never arrive.
_INTERRUPTED_ENTER = """
import os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path[:0] = {paths!r}
from zerda.llm.mcp import MCPTools
{quick_kill}
pid_file = sys.argv[1]
command = [sys.executable, "-c", {hang!r}, pid_file]

def interrupt():
    while not (os.path.exists(pid_file) and open(pid_file).read()):
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while `with` waits for the server

threading.Thread(target=interrupt, daemon=True).start()
try:
    with MCPTools(command, timeout=None):
        pass
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("script", [_EXIT_DURING_ENTER, _INTERRUPTED_ENTER])
def test_no_server_outlives_an_interpreter_leaving_during_enter(
    tmp_path: Path, kill_leftovers: list[int], script: str
) -> None:
    pid_file = tmp_path / "server.pid"
    paths = [str(Path(__file__).parents[2] / "src")]
    code = script.format(paths=paths, hang=HANG, quick_kill=_QUICK_KILL)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(pid_file)], capture_output=True, text=True, timeout=90
        )
    finally:  # a hung interpreter leaves its server: killed after the test all the same
        if pid_file.exists() and pid_file.read_text():
            kill_leftovers.append(read_pid(pid_file))
    pid = read_pid(pid_file)
    assert done.returncode == 0, done.stderr
    assert wait_gone(pid, within=10.0), "the server outlived the interpreter that started it"


# --- stderr: errlog, notebooks, an older server's protocol noise ------------------------------


def test_the_server_stderr_goes_to_errlog() -> None:
    errlog = io.StringIO()
    with MCPTools([*SERVER, "--say", "weather server ready"], errlog=errlog) as tools:
        assert tools[0].call({"a": 1, "b": 2}).content == "3"
    assert "weather server ready\n" in errlog.getvalue()


def test_errlog_must_be_writable() -> None:
    with pytest.raises(TypeError, match="MCPTools: errlog must be a text stream"):
        MCPTools(SERVER, errlog=42)  # type: ignore[arg-type]


def test_a_stderr_without_a_file_descriptor_works_as_in_a_notebook() -> None:
    # A notebook's sys.stderr has no fileno(); the SDK's default errlog is sys.stderr as it
    # was when mcp was imported.
    code = textwrap.dedent(
        f"""
        import io, sys
        sys.path[:0] = {[str(Path(__file__).parents[2] / "src")]!r}
        real, sys.stderr = sys.stderr, io.StringIO()
        from zerda.llm.mcp import MCPTools
        with MCPTools({[*SERVER, "--say", "hello from the server"]!r}) as tools:
            print(tools[0].call({{"a": 20, "b": 22}}).content)
        print("hello from the server" in sys.stderr.getvalue())
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["42", "True"]


def test_an_older_servers_protocol_probe_dump_is_one_debug_record(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="zerda")
    errlog = io.StringIO()
    with MCPTools([*SERVER, "--legacy", "--say", "legacy up"], errlog=errlog) as tools:
        assert [t.name for t in tools] == ["add"]
        assert tools[0].call({"a": 2, "b": 5}).content == "7"
    assert "legacy up\n" in errlog.getvalue()  # the server's own lines are passed on
    assert "validation error" not in errlog.getvalue() + capfd.readouterr().err
    records = [r.getMessage() for r in caplog.records if "server/discover" in r.getMessage()]
    import mcp

    probes = hasattr(mcp, "Client")  # mcp 2.x probes with server/discover; 1.x does not
    assert (
        records
        == [
            f"MCP server {SERVER[0]} {SERVER[1]} --legacy --say 'legacy up' is older than this mcp "
            "SDK: it refused the server/discover probe (its validation dump on stderr is not "
            "shown) and the session uses initialize"
        ]
        * probes
    )


def test_another_validation_dump_is_passed_on() -> None:
    noise = _ProtocolNoise("s")
    dump = [
        "Failed to validate request: 1 validation error for ClientRequest\n",
        "CallToolRequest.params.name\n",
        "  Field required [type=missing, input_value={}, input_type=dict]\n",
    ]
    passed = [line for text in [*dump, "next line\n"] for line in noise.feed(text)]
    assert passed == [*dump, "next line\n"]
