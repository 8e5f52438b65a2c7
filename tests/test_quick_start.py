"""The README's Quick start works with exactly what `pip install "zerda-llm[openai]"` installs.

The project's own environment has every extra, so an import the Quick start needs from another
extra would go unnoticed there. Here the Quick start runs in a subprocess where every module
outside the standard library and the distributions that ``zerda-llm[openai]`` requires (read
from the installed metadata, recursively) fails to import, as in a fresh venv with only that
extra; the OpenAI SDK reaches MockLLMServer through ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from zerda.testing import MockLLMServer

ROOT = Path(__file__).resolve().parents[1]

# Installed in the subprocess before the Quick start runs: a finder that refuses every
# top-level module that the allowed distributions do not provide.
BLOCKER = """
import sys
ALLOWED = set({allowed!r})

class _NotInstalled:
    @staticmethod
    def find_spec(name, path=None, target=None):
        top = name.partition(".")[0]
        # _sysconfigdata_*: the interpreter's build variables, a standard module by another name
        stdlib = top in sys.stdlib_module_names or top.startswith("_sysconfigdata")
        if stdlib or top in ALLOWED or top in sys.modules:
            return None
        raise ModuleNotFoundError(f"No module named {{top!r}}", name=top)

sys.meta_path.insert(0, _NotInstalled)
"""


def requirement_closure(dist: str, extras: set[str]) -> set[str]:
    """The canonical names of ``dist`` and of every distribution it requires with ``extras``."""
    seen: set[str] = set()
    todo = [(dist, frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        key = canonicalize_name(name)
        if (key in seen and not wanted) or not _installed(name):
            continue
        seen.add(key)
        for text in md.requires(name) or []:
            req = Requirement(text)
            envs = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return seen


def _installed(name: str) -> bool:
    try:
        md.distribution(name)
    except md.PackageNotFoundError:
        return False
    return True


def allowed_modules(dists: set[str]) -> set[str]:
    tops = md.packages_distributions()
    return {
        top
        for top, owners in tops.items()
        if any(canonicalize_name(owner) in dists for owner in owners)
    } | {"zerda"}


def quick_start() -> str:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"## Quick start.*?```python\n(.*?)```", readme, re.S)
    assert match, "README.md has no Quick start Python block"
    return match.group(1)


def test_quick_start_runs_with_only_the_openai_extra() -> None:
    dists = requirement_closure("zerda-llm", {"openai"})
    assert "openai" in dists and "click" not in dists and "mcp" not in dists
    prelude = BLOCKER.format(allowed=sorted(allowed_modules(dists)))
    with MockLLMServer() as server:
        for _ in range(2):  # run(), then the hand-driven loop: a call, then the answer
            server.enqueue(
                "openai", tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}]
            )
            server.enqueue("openai", text="It is 18 °C in Paris.")
        env = {
            **os.environ,
            "OPENAI_API_KEY": "test",
            "OPENAI_BASE_URL": server.base_url("openai"),
        }
        out = subprocess.run(
            [sys.executable, "-c", prelude + quick_start()],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        sent = server.requests_for("openai")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["It is 18 °C in Paris.", "It is 18 °C in Paris."]
    assert len(sent) == 4
    tool_message = sent[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"]) == {"city": "Paris", "temp_c": 18}


def test_the_blocker_refuses_what_the_extra_does_not_install() -> None:
    """The check above can fail: a module of another extra is refused in that subprocess."""
    prelude = BLOCKER.format(
        allowed=sorted(allowed_modules(requirement_closure("zerda-llm", {"openai"})))
    )
    code = prelude + "import anthropic\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "ModuleNotFoundError: No module named 'anthropic'" in out.stderr


def test_the_demo_runs_with_only_the_demo_extra() -> None:
    """`make demo` installs the demo extra alone (no dev tools): the demo needs nothing else."""
    dists = requirement_closure("zerda-llm", {"demo"})
    assert "pytest" not in dists and "mypy" not in dists
    prelude = BLOCKER.format(allowed=sorted(allowed_modules(dists)))
    code = (
        prelude
        + "import sys\nsys.argv = ['zerda', 'demo']\nfrom zerda._entry import main\nmain()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].endswith("providers completed a tool-calling round trip")
