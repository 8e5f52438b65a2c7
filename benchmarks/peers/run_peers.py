"""Zerda beside its peers (LiteLLM, any-llm, pydantic-ai, aisuite) and the raw SDK, on the
OpenAI, Anthropic and Gemini wires: ``make bench-peers`` runs it in ``.venv-peers``.

    .venv-peers/bin/python benchmarks/peers/run_peers.py [--quick] [--wires a,b]
        [--peers litellm,any-llm,pydantic-ai,aisuite] [--only overhead,stream,...] [--out DIR]

The sections are ``make bench``'s: short call (overhead), stream, async (x1, x16, x256),
history 10/100/1,000 round trips (scaling), import + client (import), the 8 MiB image
(image). Each (wire, peer) comparison runs in its own process (worker.py) against one
MockLLMServer process; a peer not installed, or that cannot talk to the mock on a wire,
is "n/a" with the reason. Writes ``results-peers.json`` and, into this checkout's
benchmarks folder, the Peers section of RESULTS.md and the README's peers table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "src")]

from bench_data import MODELS  # noqa: E402
from bench_image import run_child as image_child  # noqa: E402
from bench_imports import _once, compile_sources, measure  # noqa: E402
from bench_report import machine  # noqa: E402
from bench_server import child_env, serve  # noqa: E402
from run import _choices  # noqa: E402

from peers.adapters import PEERS, WIRES, not_applicable  # noqa: E402
from peers.report import versions, write_readme, write_results  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402

SECTIONS = ("overhead", "stream", "async", "scaling", "import", "image")
WORKER_SECTIONS = ("overhead", "stream", "async", "scaling")
WORKER = HERE / "worker.py"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke run")
    parser.add_argument("--wires", default=",".join(WIRES))
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--out", type=Path, default=BENCH, help="where results-peers.json goes")
    parser.add_argument("--x256", action="store_true", help="async at 256 concurrent calls too")
    parser.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="measure nothing: rewrite RESULTS.md and README.md from this results-peers.json",
    )
    args = parser.parse_args(argv)
    args.wires = _choices(args.wires, WIRES, "wire")
    args.peers = _choices(args.peers, tuple(PEERS), "peer")
    args.only = _choices(args.only, SECTIONS, "section")
    return args


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _json_tail(proc: subprocess.CompletedProcess[str]) -> Any:
    """The last stdout line as JSON, or the last stderr line as the reason it failed."""
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        err = proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}, no output"]
        raise RuntimeError(err[-1][:300]) from None


def run_worker(
    wire: str, peer: str, port: int, sections: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    """One comparison in its own process; its failure becomes each section's result."""
    cmd = [sys.executable, str(WORKER), wire, peer, str(port), ",".join(sections)]
    cmd += ["--quick"] if args.quick else []
    cmd += ["--x256"] if args.x256 else []
    timeout = 600 if args.quick else 1800
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=timeout)
        result: dict[str, Any] = _json_tail(proc)
        return result
    except (subprocess.TimeoutExpired, RuntimeError) as exc:
        reason = (
            f"timed out after {timeout} s"
            if isinstance(exc, subprocess.TimeoutExpired)
            else str(exc)
        )
        return {s: {"failed": reason} for s in ["check", *sections]}


def run_comparisons(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    sections = [s for s in args.only if s in WORKER_SECTIONS]
    out: dict[str, Any] = {wire: {} for wire in args.wires}
    with serve() as port:
        for wire in args.wires:
            for peer in args.peers:
                why = not_applicable(peer, wire)
                if why:
                    out[wire][peer] = {s: {"n/a": why} for s in ["check", *sections]}
                    continue
                _progress(f"[peers] {wire} / {peer}: {', '.join(sections) or 'check'}")
                out[wire][peer] = run_worker(wire, peer, port, sections, args)
                save(args, {**data, "wires": out, "partial": True})  # a stopped run keeps these
    return out


def save(args: argparse.Namespace, data: dict[str, Any]) -> None:
    (args.out / "results-peers.json").write_text(json.dumps(data, indent=2) + "\n")


def import_cases(wire: str, peers: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """bench_imports' Zerda and raw cases for ``wire``, and each peer's (its import and
    what it builds before a call), all given the mock's address."""
    from bench_imports import SDK_CLIENT, SDK_IMPORT

    addr = MockLLMServer(port=1)  # addresses only; nothing is called
    sdk_kw = addr.sdk_client_kwargs(wire)
    zerda = f"from zerda.llm import create_interface\ncreate_interface({wire!r}, **kw).client"
    cases = {
        "zerda": (zerda, {"model": MODELS[wire], **addr.client_options(wire)}),
        "raw": (f"{SDK_IMPORT[wire]}\n{SDK_CLIENT[wire]}", sdk_kw),
    }
    for peer in peers:
        cases[peer] = (PEERS[peer].import_code(wire), sdk_kw)
    return cases


def run_imports(args: argparse.Namespace) -> dict[str, Any]:
    # 3 runs, not make bench's 5: LiteLLM's import alone is seconds of CPU per interpreter.
    runs = 2 if args.quick else 3
    compile_sources()
    out: dict[str, Any] = {}
    for wire in args.wires:
        _progress(f"[peers] import + client: {wire}")
        peers = [p for p in args.peers if not not_applicable(p, wire)]
        cases, failing = runnable(import_cases(wire, peers))
        try:
            out[wire] = {"runs": runs, "cases": measure(cases, runs)}
        except Exception as exc:
            out[wire] = {"failed": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        failing.update({p: f"n/a: {not_applicable(p, wire)}" for p in args.peers if p not in peers})
        out[wire]["not_applicable"] = failing
    return out


def runnable(
    cases: dict[str, tuple[str, dict[str, Any]]],
) -> tuple[dict[str, tuple[str, dict[str, Any]]], dict[str, str]]:
    """(the cases that run once in a fresh interpreter, {peer: "n/a: why"} for the
    others): a peer whose import or client fails costs its own row, not the section."""
    ok: dict[str, tuple[str, dict[str, Any]]] = {}
    failing: dict[str, str] = {}
    for name, (code, kw) in cases.items():
        try:
            _once(code, kw)
        except RuntimeError as exc:
            if name in ("zerda", "raw"):
                raise
            failing[name] = f"n/a: {exc}"[:300]
            continue
        ok[name] = (code, kw)
    return ok, failing


def image_peer(wire: str, peer: str, port: int, quick: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(WORKER), wire, peer, str(port), "image"] + (
        ["--quick"] if quick else []
    )
    proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), check=False)
    try:
        result: dict[str, Any] = _json_tail(proc)
        return result
    except RuntimeError as exc:
        return {"error": str(exc)}


def run_image(args: argparse.Namespace) -> dict[str, Any]:
    """bench_image's raw and Zerda children, and one child per peer, on one lenient mock."""
    out: dict[str, Any] = {}
    with serve(strict=False) as port:
        for wire in args.wires:
            _progress(f"[peers] image: {wire}")
            row: dict[str, Any] = {side: image_child(wire, side, port) for side in ("raw", "zerda")}
            row["peers"] = {}
            for peer in args.peers:
                why = not_applicable(peer, wire)
                row["peers"][peer] = (
                    {"n/a": f"n/a: {why}"} if why else image_peer(wire, peer, port, args.quick)
                )
            out[wire] = row
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        write(args, json.loads(args.from_json.read_text()))
        return 0
    info = machine()
    info["versions"] = versions()
    config = {"quick": args.quick, "wires": args.wires, "peers": args.peers, "sections": args.only}
    data: dict[str, Any] = {"machine": info, "config": config}
    _progress(f"[peers] load average at start: {info['load_average_at_start']}")
    data["wires"] = run_comparisons(args, data)
    if "import" in args.only:
        data["imports"] = run_imports(args)
    if "image" in args.only:
        data["image"] = run_image(args)
    info["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    _progress(f"[peers] load average at the end: {info['load_average_at_end']}")
    save(args, data)
    write(args, data)
    return 0


def write(args: argparse.Namespace, data: dict[str, Any]) -> None:
    """The Peers section of RESULTS.md and, into this checkout, the README's table."""
    write_results(args.out / "RESULTS.md", data)
    _progress(
        f"[peers] wrote {args.out / 'results-peers.json'} and the Peers section of RESULTS.md"
    )
    if args.out.resolve() == BENCH and write_readme(BENCH.parent / "README.md", data):
        _progress("[peers] updated the peers table in README.md")
    from peers.report import results_section

    print(results_section(data))


if __name__ == "__main__":
    raise SystemExit(main())
