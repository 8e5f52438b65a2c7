"""The garbage collector is paused while a request is converted and while Zerda's modules
load, and only then (zerda.llm._gc): resumed after, also when the conversion fails, and
never enabled by Zerda when the caller disabled it."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.llm.errors import InvalidRequestError
from zerda.testing import MockLLMServer


@pytest.fixture
def llm(mock_llm_server: MockLLMServer) -> Iterator[Any]:
    mock_llm_server.set_default("openai", text="hi")
    with create_interface(
        "openai", model="m-1", **mock_llm_server.client_options("openai")
    ) as interface:
        yield interface


@pytest.fixture(autouse=True)
def _collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def _spy(llm: Any, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the collector was enabled each time the request was built."""
    seen: list[bool] = []
    build = llm._build_request

    def spying(req: Any) -> Any:
        seen.append(gc.isenabled())
        return build(req)

    monkeypatch.setattr(llm, "_build_request", spying)
    return seen


def test_the_collector_is_paused_while_the_request_is_built_and_resumed_after(
    llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _spy(llm, monkeypatch)
    result = llm.generate("hi")
    assert result["content"] == "hi"
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_is_resumed_when_the_request_is_refused(llm: Any) -> None:
    with pytest.raises(InvalidRequestError):
        llm.generate([{"role": "nobody", "content": "hi"}], raise_errors=True)
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled(
    llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _spy(llm, monkeypatch)
    gc.disable()
    assert llm.generate("hi")["content"] == "hi"
    assert list(llm.stream("hi"))[-1]["result"]["content"] == "hi"
    assert seen == [False, False]
    assert not gc.isenabled()


# In a fresh interpreter: the Zerda modules ``step`` loads, those found while the collector
# was enabled, and whether it is enabled after ``step``.
_SPY = """
import gc, json, sys
{before}

class Spy:
    found = []

    def find_spec(self, name, path=None, target=None):
        if name.startswith("zerda.llm."):
            Spy.found.append((name, gc.isenabled()))
        return None

sys.meta_path.insert(0, Spy())
{step}
enabled = sorted(name for name, on in Spy.found if on)
print(json.dumps([len(Spy.found), enabled, gc.isenabled()]))
"""


def _loads(step: str, before: str = "") -> tuple[int, list[str], bool]:
    proc = subprocess.run(
        [sys.executable, "-c", _SPY.format(before=before, step=step)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    count, enabled, after = json.loads(proc.stdout.strip().splitlines()[-1])
    return count, enabled, after


def test_zerdas_modules_load_with_the_collector_paused() -> None:
    # All but the pause's own module; what they create lives as long as the process, so
    # collections meanwhile would only walk it (docs/decisions.md).
    count, enabled, after = _loads("import zerda.llm")
    assert (enabled, after) == (["zerda.llm._gc"], True)
    assert count > 30


def test_a_wires_modules_load_with_the_collector_paused() -> None:
    count, enabled, after = _loads(
        "registry.get('bedrock').interface_class()", before="from zerda.llm import registry"
    )
    assert (enabled, after) == ([], True)
    assert count > 5


def test_importing_zerda_leaves_a_disabled_collector_disabled() -> None:
    count, _, after = _loads("import zerda.llm", before="gc.disable()")
    assert (count > 30, after) == (True, False)
