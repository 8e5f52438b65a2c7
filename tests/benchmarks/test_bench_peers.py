"""benchmarks/peers without the peers installed: the adapters module imports and reports
each missing peer as n/a, its conversation is the raw side's, and the report writer puts
its section and table between their markers, the rest of each file untouched (the
measurement itself is ``make bench-peers``, never run by the test suite)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks")]

import bench_raw  # noqa: E402
import run  # noqa: E402
from bench_data import MESSAGES, SYSTEM  # noqa: E402
from peers import adapters, report, run_peers  # noqa: E402


def test_a_peer_not_installed_is_not_applicable_with_the_reason() -> None:
    absent = [p for p in adapters.PEERS if adapters.missing(p)]
    if not absent:
        pytest.skip("every peer is installed here (.venv-peers)")
    for peer in absent:
        reason = adapters.not_applicable(peer, "openai")
        assert reason is not None
        assert reason.startswith("not installed (pip install ")
        assert adapters.PEERS[peer].distribution in reason


def test_the_openai_shaped_conversation_is_the_raw_sides() -> None:
    assert adapters.openai_messages(MESSAGES, SYSTEM) == bench_raw._openai_messages()
    assert adapters.openai_tools() == bench_raw._openai_tools()


def test_pydantic_ai_gets_the_same_conversation_in_its_message_model() -> None:
    pytest.importorskip("pydantic_ai")
    requests = adapters.pydantic_messages(MESSAGES, SYSTEM)
    kinds = [[type(p).__name__ for p in m.parts] for m in requests]
    assert kinds == [["SystemPromptPart", "UserPromptPart"], ["ToolCallPart"], ["ToolReturnPart"]]


def _timed(zerda: float, raw: float, peer: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        s: {"cpu_us": v * 1e3} for s, v in (("zerda", zerda), ("raw", raw), ("peer", peer))
    }
    for a, b in (("zerda", "raw"), ("peer", "raw"), ("zerda", "peer")):
        out[f"{a}_vs_{b}"] = out[f"{a}_vs_{b}_wall"] = out[a]["cpu_us"] / out[b]["cpu_us"]
    return out


def _per_call(timed: dict[str, Any]) -> dict[str, Any]:
    for side in ("zerda", "raw", "peer"):
        timed[side]["cpu_us_per_call"] = timed[side]["cpu_us"] / 16
    return timed


def _data() -> dict[str, Any]:
    size = {
        "zerda": {"cpu_us": 20e3},
        "raw": {"cpu_us": 800e3},
        "peer": {"cpu_us": 80e3},
        "floor": {"cpu_us": 10e3},
        "zerda_vs_floor": 2.0,
        "raw_vs_floor": 80.0,
        "peer_vs_floor": 8.0,
        "zerda_vs_peer": 0.25,
        "body_bytes": 2048,
    }
    check = {
        "generate": {"requests": 1, "tool_calls": ["get_forecast"], "body_bytes": 900},
        "stream": {"requests": 1, "chunks": 18},
        "async": {"requests": 1, "tool_calls": ["get_forecast"]},
        "zerda_body_bytes": 1000,
    }
    litellm = {
        "check": check,
        "overhead": _timed(1.0, 2.0, 4.0),
        "stream": _timed(1.1, 1.0, 1.0),  # Zerda above the peer: marked
        "async": {"16": _per_call(_timed(1.0, 2.0, 3.0))},
        "scaling": {"sizes": {"1000": size}},
    }
    missing = {s: {"n/a": "not installed (pip install aisuite)"} for s in ("check", "overhead")}
    return {
        "machine": {"date": "2026-12-06 10:00 UTC", "versions": {"litellm": "1.110.2"}},
        "config": {"quick": False},
        "wires": {"openai": {"litellm": litellm, "aisuite": missing}},
        "imports": {
            "openai": {
                "cases": {
                    "zerda": {"cpu_ms": 100.0, "ms": 110.0},
                    "raw": {"cpu_ms": 100.0, "ms": 100.0},
                    "litellm": {"cpu_ms": 400.0, "ms": 420.0},
                },
                "not_applicable": {"aisuite": "n/a: not installed"},
            }
        },
        "image": {
            "openai": {
                "raw": {"peak": 32 * 2**20, "cpu_s": 0.1, "caller": 1, "sdk": 0},
                "zerda": {"peak": 32 * 2**20, "cpu_s": 0.1, "zerda": 1, "sdk": 0},
                "peers": {"litellm": {"peak": 64 * 2**20, "cpu_s": 0.2, "encodings": 1}},
            }
        },
    }


def test_the_short_table_gives_both_ratios_and_marks_where_zerda_is_behind() -> None:
    assert report.summary_table(_data()).splitlines()[2:] == [
        "| openai | LiteLLM 1.110.2 | 0.50x / 2.00x | 1.10x / 1.00x ⚠ | 0.50x / 1.50x "
        "| 2.00x / 8.00x | 1.00x / 4.00x | 1.00x / 2.00x; CPU 1.00x / 2.00x |",
        "| openai | aisuite | n/a: not installed (pip install aisuite) |  |  |  |  |  |",
    ]


def test_the_section_goes_between_its_markers_and_the_rest_is_kept(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    before = "# Results\n\n## Summary\n\nold\n\n## Image payload\n\nimage table\n"
    results.write_text(before)
    report.write_results(results, _data())
    report.write_results(results, _data())  # replaced in place, not appended twice
    text = results.read_text()
    assert text.startswith(before + "\n" + report.HEADING + "\n\n" + report.START + "\n")
    assert text.endswith(report.END + "\n")
    assert text.count(report.START) == 1
    assert "| openai | LiteLLM | 1 / 1 / 1 | 900 / 1,000 | 18 |" in text
    # make bench's run.py rewrites the rest of RESULTS.md and keeps both sections as they were
    assert run._image_section(results) == "\n## Image payload\n\nimage table\n"
    assert report.kept_section(results) == "\n" + text[text.index(report.HEADING) :]


def test_the_readme_block_is_replaced_between_its_markers_only(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Zerda\n\nintro\n\n{report.START}\nold table\n{report.END}\n\n## Next\n")
    assert report.write_readme(readme, _data())
    text = readme.read_text()
    assert text.startswith(
        f"# Zerda\n\nintro\n\n{report.START}\nFrom `make bench-peers` of 2026-12-06"
    )
    assert text.endswith(f"{report.END}\n\n## Next\n")
    assert "old table" not in text and report.READING in text
    readme.write_text("# no markers\n")
    assert not report.write_readme(readme, _data())
    assert readme.read_text() == "# no markers\n"


def test_the_runner_rewrites_the_results_from_json_without_measuring(tmp_path: Path) -> None:
    saved = tmp_path / "results-peers.json"
    saved.write_text(json.dumps(_data()))
    assert run_peers.main(["--from-json", str(saved), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "RESULTS.md").read_text() == report.results_section(_data())


def test_a_peer_whose_import_fails_costs_its_own_row_only() -> None:
    cases = {
        "zerda": ("import json", {}),
        "raw": ("import json", {}),
        "litellm": ("import a_module_that_is_not_there", {}),
    }
    ok, failing = run_peers.runnable(cases)
    assert list(ok) == ["zerda", "raw"]
    assert failing == {
        "litellm": "n/a: ModuleNotFoundError: No module named 'a_module_that_is_not_there'"
    }
