"""A smoke run of benchmarks/run.py: it measures, writes valid JSON with ratios, and writes
only under --out (never over the committed benchmarks/RESULTS.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks" / "run.py"


def test_quick_run_writes_ratios(tmp_path: Path) -> None:
    committed = ROOT / "benchmarks" / "RESULTS.md"
    before = committed.read_bytes() if committed.exists() else None
    cmd = [sys.executable, str(RUN), "--quick", "--providers", "openai"]
    cmd += ["--only", "overhead,convert", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]

    data = json.loads((tmp_path / "results.json").read_text())
    overhead = data["providers"]["openai"]["overhead"]
    assert "failed" not in overhead, overhead
    ratios = data["summary"]["ratios"]
    assert set(ratios) == {"openai.overhead.cpu", "openai.overhead.wall"}
    assert all(isinstance(v, float) and v > 0 for v in ratios.values())
    assert overhead["wire"]["generate"]["same_body"] is True

    convert = data["providers"]["openai"]["convert"]
    assert convert["tools_1000"]["ops_per_s"] > 0
    assert convert["parse_1000"]["ops_per_s"] > 0
    assert convert["history_200"]["ops_per_s"] > 0

    markdown = (tmp_path / "RESULTS.md").read_text()
    assert "## Per-call overhead" in markdown and "## Conversion throughput" in markdown
    after = committed.read_bytes() if committed.exists() else None
    assert after == before
