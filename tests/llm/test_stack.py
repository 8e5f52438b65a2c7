"""zerda.llm._stack.in_fresh_chunk: a plain call, from a frame at the start of a fresh
stack chunk, so code that recurses back and forth near a chunk's end does not map and unmap
one at every crossing (what an SDK's import did below Zerda's frames)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from zerda.llm import _stack, create_interface
from zerda.llm._stack import in_fresh_chunk
from zerda.llm.interface import clients
from zerda.testing import MockLLMServer


def test_it_is_a_plain_call() -> None:
    assert in_fresh_chunk(divmod, 7, 2) == (3, 1)
    assert in_fresh_chunk(lambda: "built") == "built"
    with pytest.raises(ZeroDivisionError):
        in_fresh_chunk(divmod, 1, 0)


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info < (3, 11),
    reason="frame-stack chunks are CPython 3.11's",
)
def test_its_frame_takes_more_than_a_chunk() -> None:
    # 8 bytes a slot: more than a 16 KiB chunk, so CPython gives the frame its own.
    assert in_fresh_chunk.__code__.co_stacksize >= _stack._SLOTS > 16 * 1024 // 8


# At every depth of the caller's stack across a whole chunk, 200 descents of 60 frames:
# called plainly, at some depth each descent maps a chunk (and faults its pages in), and
# unmaps it on the way back; through in_fresh_chunk, none does.
CHILD = """
import resource, sys
from zerda.llm._stack import in_fresh_chunk

def down(k):
    return down(k - 1) if k else 0

def oscillate():
    for _ in range(200):
        down(60)

def faults(depth, fresh):
    if depth:
        return faults(depth - 1, fresh)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    in_fresh_chunk(oscillate) if fresh else oscillate()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

print(max(faults(d, False) for d in range(200)), max(faults(d, True) for d in range(200)))
"""


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info < (3, 11),
    reason="frame-stack chunks are CPython 3.11's",
)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts Linux's page faults")
def test_descents_near_a_chunks_end_map_no_chunk() -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=False
    )
    assert child.returncode == 0, child.stderr[-2000:]
    plain, fresh = map(int, child.stdout.split())
    assert plain >= 200  # the crossing exists: at least a fault for each descent
    assert fresh <= 20


def test_the_sdk_import_and_the_client_builds_go_through_it(
    mock_llm_server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    called: list[str] = []

    def spy(function: Callable[..., Any], *args: Any) -> Any:
        called.append(function.__name__)
        return function(*args)

    monkeypatch.setattr(clients, "in_fresh_chunk", spy)
    with create_interface("openai", model="m-1", **mock_llm_server.client_options("openai")) as llm:
        assert llm.client is not None
        assert llm.async_client is not None
    assert called == ["import_module", "_make_client", "_make_async_client"]
