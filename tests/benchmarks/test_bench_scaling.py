"""benchmarks/bench_scaling.py's history and its report (the measurement itself is run by
``make bench``, never by the test suite)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks")]

import bench_report  # noqa: E402
import bench_scaling  # noqa: E402

from zerda.llm.messages import validate_messages  # noqa: E402


def test_a_history_of_n_round_trips_is_3n_valid_messages() -> None:
    messages = bench_scaling.history(4)
    assert len(messages) == 12
    assert [m["role"] for m in messages[:3]] == ["user", "assistant", "tool"]
    assert messages[4]["tool_calls"][0]["id"] == "r00000001"
    assert len(validate_messages(messages)) == 12


def _size(zerda: float, raw: float, floor: float) -> dict[str, object]:
    return {
        "zerda": {"cpu_us": zerda * 1e3},
        "raw": {"cpu_us": raw * 1e3},
        "floor": {"cpu_us": floor * 1e3},
        "zerda_vs_floor": zerda / floor,
        "raw_vs_floor": raw / floor,
        "zerda_vs_raw": zerda / raw,
        "messages": 3,
        "body_bytes": 2048,
    }


def test_the_table_marks_the_goals_missed() -> None:
    results = {
        "openai": {
            "scaling": {"sizes": {"10": _size(1.05, 1.0, 0.5), "1000": _size(50.0, 40.0, 10.0)}}
        },
        "gemini": {"scaling": {"failed": "boom"}},
    }
    assert bench_report.scaling_table(results).splitlines()[2:] == [
        "| openai | 10 (3, 2) | 1.05 | 1.00 | 0.50 | 2.10x | 2.00x | 1.05x |",
        "| openai | 1,000 (3, 2) | 50.00 | 40.00 | 10.00 | 5.00x ⚠ | 4.00x | 1.25x ⚠ |",
        "| gemini | failed: boom |  |  |  |  |  |  |",
    ]
