"""Import time, each figure measured in a fresh interpreter (``python -c``), median of runs.

The timer starts inside the child, after the interpreter is up, so startup is not counted.
Zerda's sources are byte-compiled first (:func:`compile_sources`), as pip compiles an
installed wheel and as the SDKs in site-packages already are: a checkout run with
``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile Zerda's modules in every child.
Per provider: Zerda (import zerda.llm, create the interface, build its SDK client) against
the raw SDK (import it, build its client) and the SDK's import alone; also the provider
module alone, which must not import its SDK.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

from bench_data import MODELS
from bench_server import SRC, child_env

from zerda.testing import MockLLMServer

SDK_IMPORT = {
    "openai": "import openai",
    "groq": "import groq",
    "mistral": "import mistralai.client",
    "ollama": "import ollama",
    "anthropic": "import anthropic",
    "bedrock": "import boto3",
    "gemini": "from google import genai",
}
SDK_CLIENT = {
    "openai": "openai.OpenAI(**kw)",
    "groq": "groq.Groq(**kw)",
    "mistral": "mistralai.client.Mistral(**kw)",
    "ollama": "ollama.Client(**kw)",
    "anthropic": "anthropic.Anthropic(**kw)",
    "bedrock": "boto3.client(**kw)",
    "gemini": "genai.Client(**kw)",
}
MODULES = {p: f"zerda.llm.providers.{'aws' if p == 'bedrock' else p}" for p in SDK_IMPORT}
# Top-level modules that ``import zerda.llm`` must not load.
HEAVY = ("openai", "groq", "mistralai", "ollama", "anthropic", "boto3", "botocore", "google.genai")
HEAVY_ALL = (*HEAVY, "pydantic", "httpx")

_TEMPLATE = """\
import gc, json, sys, time
kw = {kw!r}
_full = []  # the process's full collections in the timed window: CPU seconds each
def _watch(phase, info, _start=[0.0]):
    if info["generation"] == 2:
        if phase == "start":
            _start[0] = time.process_time()
        else:
            _full.append(time.process_time() - _start[0])
gc.callbacks.append(_watch)
_c0, _t0 = time.process_time(), time.perf_counter()
{code}
_c1, _t1 = time.process_time(), time.perf_counter()
gc.callbacks.remove(_watch)
_heavy = [m for m in {heavy!r} if m in sys.modules]
print(json.dumps([_t1 - _t0, _c1 - _c0, _heavy, _full]))
"""


def compile_sources() -> None:
    """Writes the ``__pycache__`` of every Zerda module (what ``pip install`` of the wheel
    does), so each child loads bytecode for Zerda as it does for the SDKs."""
    import compileall

    compileall.compile_dir(str(SRC / "zerda"), quiet=1)


def _once(code: str, kw: dict[str, Any]) -> tuple[float, float, list[str], list[float]]:
    script = _TEMPLATE.format(kw=kw, code=code, heavy=HEAVY_ALL)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=child_env(), timeout=120
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["no output"]
        raise RuntimeError(lines[-1])
    wall, cpu, heavy, full = json.loads(proc.stdout.strip().splitlines()[-1])
    return float(wall), float(cpu), list(heavy), [float(x) for x in full]


def measure(cases: dict[str, tuple[str, dict[str, Any]]], runs: int) -> dict[str, Any]:
    """Runs the cases interleaved (a, b, c, a, b, c...) ``runs`` times: median wall and CPU
    milliseconds of each (CPU time is the steadier figure on a busy machine), and every
    round's figures for :func:`paired_ratio`."""
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    fulls: dict[str, list[list[float]]] = {name: [] for name in cases}
    loaded: dict[str, list[str]] = {}
    for _ in range(runs):
        for name, (code, kw) in cases.items():
            wall, cpu, heavy, full = _once(code, kw)
            walls[name].append(wall)
            cpus[name].append(cpu)
            fulls[name].append(full)
            loaded[name] = heavy
    return {
        name: {
            "ms": statistics.median(walls[name]) * 1e3,
            "cpu_ms": statistics.median(cpus[name]) * 1e3,
            "loaded": loaded[name],
            "walls": walls[name],
            "cpus": cpus[name],
            "full_collections": fulls[name],
        }
        for name in cases
    }


def paired_ratio(ours: list[float], theirs: list[float]) -> float:
    """The median of the per-round ratios: the two cases of a round ran one after the
    other, so a load that drifts across rounds (a 2-core machine shared with other work)
    weighs on both sides of each ratio, not on one side's median (as bench-peers does)."""
    return statistics.median(a / b for a, b in zip(ours, theirs, strict=True))


def bench_zerda_llm(runs: int) -> dict[str, Any]:
    compile_sources()
    result = measure({"zerda.llm": ("import zerda.llm", {})}, runs)["zerda.llm"]
    return {"ms": result["ms"], "cpu_ms": result["cpu_ms"], "modules_loaded": result["loaded"]}


def bench_provider(provider: str, runs: int) -> dict[str, Any]:
    compile_sources()
    addr = MockLLMServer(port=1)  # addresses only; nothing is called
    options = {"model": MODELS[provider], **addr.client_options(provider)}
    zerda = f"from zerda.llm import create_interface\ncreate_interface({provider!r}, **kw).client"
    raw = f"{SDK_IMPORT[provider]}\n{SDK_CLIENT[provider]}"
    cases = {
        "module": (f"import {MODULES[provider]}", {}),
        "zerda": (zerda, options),
        "raw": (raw, addr.sdk_client_kwargs(provider)),
        "sdk_import": (SDK_IMPORT[provider], {}),
    }
    m = measure(cases, runs)
    out: dict[str, Any] = {"module_sdk_loaded": [x for x in m["module"]["loaded"] if x in HEAVY]}
    for name in cases:
        out[name] = {"ms": m[name]["ms"], "cpu_ms": m[name]["cpu_ms"]}
    out["ratio_wall"] = paired_ratio(m["zerda"]["walls"], m["raw"]["walls"])
    out["ratio_cpu"] = paired_ratio(m["zerda"]["cpus"], m["raw"]["cpus"])
    out["extra_cpu_ms"] = m["zerda"]["cpu_ms"] - m["raw"]["cpu_ms"]
    out.update(_full_collections(m["zerda"], m["raw"]))
    return out


def _full_collections(zerda: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """The full garbage collections in each side's timed window, and the CPU ratio without
    them. CPython runs a full collection once ten young-generation ones have run and the
    objects promoted since the last one exceed a quarter of the old generation: a point in
    the process's allocations, not in one library's. An SDK whose import plus client ends
    just short of it (boto3) leaves it to its first call, and any library imported beside it
    pulls it into this window; that collection walks every object of the process (mostly
    the SDK's), about 15-25 ms after boto3. Both figures are kept: the CPU ratio with
    everything, and without the full collections of either side."""

    def less_full(side: dict[str, Any]) -> list[float]:
        pairs = zip(side["cpus"], side["full_collections"], strict=True)
        return [cpu - sum(full) for cpu, full in pairs]

    return {
        "full_collections": {
            "zerda": statistics.median(len(f) for f in zerda["full_collections"]),
            "raw": statistics.median(len(f) for f in raw["full_collections"]),
        },
        "ratio_cpu_without_full_collections": paired_ratio(less_full(zerda), less_full(raw)),
    }
