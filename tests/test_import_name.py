"""PyPI's unrelated ``zerda`` distribution ships a top-level ``zerda`` package too: installed
beside zerda-llm, the two overwrite each other's files. ``import zerda`` says so, once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def import_zerda(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(path)}
    code = "import zerda, zerda.llm"
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_warns_once_when_the_other_zerda_is_installed(tmp_path: Path) -> None:
    (tmp_path / "zerda-0.1.0.dist-info").mkdir()
    out = import_zerda(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("UserWarning: the 'zerda' distribution (zerda-0.1.0.dist-info)") == 1
    assert "pip uninstall zerda" in out.stderr


def test_no_warning_with_zerda_llm_alone(tmp_path: Path) -> None:
    (tmp_path / "zerda_llm-0.1.0.dist-info").mkdir()
    out = import_zerda(tmp_path)
    assert out.returncode == 0 and out.stderr == ""
