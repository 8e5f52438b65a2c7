"""The mock server, in its own process so that its CPU time is not the client's.

``python benchmarks/bench_server.py`` starts one MockLLMServer answering every provider with
``bench_data.RESPONSE``, prints its port on one line, and serves until its stdin closes.
:func:`serve` is the parent's side: a context manager yielding the port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def child_env() -> dict[str, str]:
    """The environment of every benchmark subprocess: zerda from this checkout."""
    env = dict(os.environ)
    paths = [str(SRC), str(HERE)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


@contextmanager
def serve(strict: bool = True) -> Iterator[int]:
    """``strict=False``: a server that answers whatever it is sent (bench_image sends
    images larger than some APIs take, to measure the client's memory)."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), *([] if strict else ["--lenient"])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=child_env(),
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.strip().isdigit():
            raise RuntimeError(f"the mock server did not start (said {line!r})")
        yield int(line)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    from bench_data import PROVIDERS, RESPONSE

    from zerda.testing import MockLLMServer

    with MockLLMServer(strict="--lenient" not in sys.argv) as server:
        for provider in PROVIDERS:
            server.set_default(provider, **RESPONSE)
        print(server.url.rsplit(":", 1)[1], flush=True)
        threading.Thread(target=_forget_requests, args=(server,), daemon=True).start()
        sys.stdin.read()  # serve until the parent closes our stdin (or dies)


def _forget_requests(server: Any) -> None:
    """Empties the server's request log every second: nobody reads it here, and the
    history-scaling section sends thousands of bodies of up to 300 KB."""
    state = server._state
    while True:
        time.sleep(1.0)
        with state.lock:
            state.log.clear()


if __name__ == "__main__":
    main()
