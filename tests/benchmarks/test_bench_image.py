"""benchmarks/bench_image.py's report: its table, and its RESULTS.md section, which a full
``run.py`` rewrite of RESULTS.md keeps (the measurement itself is run by hand)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks")]

import bench_image  # noqa: E402
import run  # noqa: E402


def test_the_table_gives_ratios_and_marks_those_above_the_goal() -> None:
    rows = {
        "openai": {
            "raw": {"peak": 32 * 2**20, "zerda": 0, "caller": 1, "sdk": 0},
            "zerda": {"peak": 40 * 2**20, "zerda": 1, "caller": 0, "sdk": 0},
        },
        "bedrock": {
            "raw": {"peak": 20 * 2**20, "zerda": 0, "caller": 0, "sdk": 1},
            "zerda": {"peak": 40 * 2**20, "zerda": 1, "caller": 0, "sdk": 1},
        },
        "gemini": {"raw": {"error": "boom"}, "zerda": {"peak": 1}},
    }
    rows["openai"]["raw"]["cpu_s"] = 0.1
    rows["openai"]["zerda"]["cpu_s"] = 0.12
    assert bench_image.table(rows).splitlines()[2:] == [
        "| openai | 32.0 | 40.0 | 1.25x ⚠ | 100.0 | 120.0 | 1.20x ⚠ | 1 + 0 | 1 + 0 |",
        "| bedrock | 20.0 | 40.0 | 2.00x ⚠ |  |  |  | 0 + 1 | 1 + 1 |",
        "| gemini | failed: boom ||||||||",
    ]


def test_the_section_is_replaced_in_place_and_kept_by_run(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\n## Summary\n\nold\n")
    bench_image.write_section("## Image payload\n\nfirst", results)
    bench_image.write_section("## Image payload\n\nsecond", results)
    assert results.read_text() == "# Results\n\n## Summary\n\nold\n\n## Image payload\n\nsecond\n"
    assert run._image_section(results) == "\n## Image payload\n\nsecond\n"
