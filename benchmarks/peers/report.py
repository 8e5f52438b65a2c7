"""The peers' results as Markdown: the "Peers" section of benchmarks/RESULTS.md and the
short table of the README, each written between its markers, the rest of the file kept.

Pure formatting: nothing here imports a peer or an SDK, so it works (and is tested)
without the peers installed.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

PEER_NAMES = {
    "litellm": "LiteLLM",
    "any-llm": "any-llm",
    "pydantic-ai": "pydantic-ai",
    "aisuite": "aisuite",
}
DISTRIBUTIONS = {
    "litellm": "litellm",
    "any-llm": "any-llm-sdk",
    "pydantic-ai": "pydantic-ai-slim",
    "aisuite": "aisuite",
}
SDKS = ("openai", "anthropic", "google-genai", "httpx", "pydantic")

HEADING = "## Peers: Zerda beside LiteLLM, any-llm, pydantic-ai and aisuite"
START = "<!-- peers:start (written by benchmarks/peers/run_peers.py) -->"
END = "<!-- peers:end -->"

METHOD = (
    "`make bench-peers` (benchmarks/peers): the peers are installed into a separate "
    "`.venv-peers` with Zerda and the SDKs, never into the project's `.venv`. One "
    "MockLLMServer process answers every request (as in `make bench`); each comparison "
    "(one wire, one peer) runs in its own client process: Zerda, the raw SDK and the peer "
    "send the same conversation (system, user, a tool call and its result, two tools, "
    "max_tokens 256), each in its own documented form built once, in rotating blocks "
    "(A B C, B C A, ...) after a warm-up; figures are medians over blocks, ratios the "
    "medians of per-round ratios; CPU is `time.process_time()` of the client process. "
    "Before timing, one call of each kind per side goes to a private mock that counts the "
    "requests: a peer that does not send exactly one request per call, or whose answer "
    "lacks the tool call, is n/a on that wire, untimed."
)

READING = (
    "How to read it honestly: each peer does work per call that Zerda's call does not, and "
    "the reverse. **LiteLLM** resolves the provider from the model string, maps every "
    "parameter through its provider tables, builds a logging object for each call and "
    "runs its callbacks (success handlers on a background worker), computes the call's "
    "cost from its model price map, and returns a pydantic `ModelResponse`. **any-llm** "
    "validates its parameters into a pydantic model, runs its sync calls as async ones on "
    "a loop thread of its own, and converts every answer into OpenAI's pydantic types. "
    "**pydantic-ai**'s model request layer turns its message model (parts with "
    "timestamps, usage and provider details) into the SDK's request, transforms the tool "
    "schemas for each model profile, runs its sync calls on an event loop, and builds a "
    "`ModelResponse` of parts. **aisuite** is the thinnest: a converter from OpenAI-shaped "
    "messages to each SDK's call, and back to its own response type. **Zerda** checks the "
    "whole conversation and every tool before sending (a bad message is an error naming "
    "its index, part and field, raised before any request), converts it to the wire's "
    "body itself and returns plain dicts; those checks are in every Zerda figure here. "
    "Ratios below 1.00x mean less than the raw SDK's documented call, which builds and "
    "validates the SDK's own request and response models."
)


def notes(data: dict[str, Any]) -> list[str]:
    """What this run's environment changes in the reading (from its recorded versions)."""
    anthropic = data.get("machine", {}).get("versions", {}).get("anthropic") or ""
    if not anthropic.startswith("0.") or "anthropic" not in data.get("wires", {}):
        return []
    return [
        f"On the Anthropic wire this environment has anthropic {anthropic} (any-llm requires "
        "anthropic<1), not the 2.x release of `make bench`: every side here uses that "
        "release. It keeps `create()`'s deprecated-model tables in "
        "`anthropic.resources.messages.messages`, where Zerda's fast path finds them too."
    ]


def versions() -> dict[str, str | None]:
    """Installed versions of the peers and the SDKs (None where not installed)."""
    out: dict[str, str | None] = {}
    for dist in (*DISTRIBUTIONS.values(), *SDKS):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


# --- cells ----------------------------------------------------------------------------------


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def _us(value: float) -> str:
    return f"{value:,.0f}"


def _reason(result: Any) -> str | None:
    """ "n/a: ..." or "failed: ..." for a result that has no figures, else None."""
    if result is None:
        return "not run"
    if isinstance(result, dict) and "n/a" in result:
        return (
            str(result["n/a"]) if str(result["n/a"]).startswith("n/a") else f"n/a: {result['n/a']}"
        )
    if isinstance(result, dict) and "failed" in result:
        return f"failed: {result['failed']}"
    return None


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _behind(zerda: float, peer: float) -> str:
    """⚠ where Zerda, as printed, is above the peer (slower, or more memory)."""
    return " ⚠" if round(zerda, 2) > round(peer, 2) else ""


def _pair(zerda: float, peer: float) -> str:
    return f"{zerda:.2f}x / {peer:.2f}x{_behind(zerda, peer)}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _comparisons(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (wire, peer, sections)
        for wire, peers in data.get("wires", {}).items()
        for peer, sections in peers.items()
    ]


# --- the short table (README) -------------------------------------------------------------


def _short_cells(wire: str, peer: str, sections: dict[str, Any], data: dict[str, Any]) -> list[str]:
    cells = []
    for section, key in (("overhead", None), ("stream", None), ("async", "16")):
        r: Any = sections.get(section)
        r = r.get(key) if key and isinstance(r, dict) and key in r else r
        if _reason(r):
            cells.append("n/a")
            continue
        suffix = "_wall" if section == "async" else ""
        cells.append(_pair(r[f"zerda_vs_raw{suffix}"], r[f"peer_vs_raw{suffix}"]))
    scaling = sections.get("scaling")
    size = (scaling or {}).get("sizes", {}).get("1000") if not _reason(scaling) else None
    cells.append(_pair(size["zerda_vs_floor"], size["peer_vs_floor"]) if size else "n/a")
    imp = _import_ratios(data.get("imports", {}).get(wire), peer)
    cells.append(_pair(*imp) if imp else "n/a")
    img = _image_ratios(data.get("image", {}).get(wire), peer)
    cells.append(f"{_pair(img[0], img[1])}; CPU {_pair(img[2], img[3])}" if img else "n/a")
    return cells


def summary_table(data: dict[str, Any]) -> str:
    header = [
        "wire",
        "peer",
        "short call CPU",
        "stream CPU",
        "async ×16 (calls/s, inverted)",
        "history 1,000 round trips, ÷ floor",
        "import + client CPU",
        "8 MiB image: peak; CPU",
    ]
    rows = []
    for wire, peer, sections in _comparisons(data):
        name = _peer_label(peer, data)
        reason = _reason(sections.get("check"))
        if reason:
            rows.append([wire, name, _escape(reason)] + [""] * (len(header) - 3))
            continue
        rows.append([wire, name, *_short_cells(wire, peer, sections, data)])
    return _table(header, rows)


def _peer_label(peer: str, data: dict[str, Any]) -> str:
    version = data.get("machine", {}).get("versions", {}).get(DISTRIBUTIONS.get(peer, peer))
    return f"{PEER_NAMES.get(peer, peer)} {version}" if version else PEER_NAMES.get(peer, peer)


def _import_ratios(imports: Any, peer: str) -> tuple[float, float] | None:
    if not imports or _reason(imports) or peer not in imports.get("cases", {}):
        return None
    cases = imports["cases"]
    raw = cases["raw"]["cpu_ms"]
    return cases["zerda"]["cpu_ms"] / raw, cases[peer]["cpu_ms"] / raw


def _image_ratios(image: Any, peer: str) -> tuple[float, float, float, float] | None:
    if not image or peer not in image.get("peers", {}):
        return None
    raw, zerda, other = image["raw"], image["zerda"], image["peers"][peer]
    if (
        any("error" in x for x in (raw, zerda, other))
        or not raw.get("peak")
        or not raw.get("cpu_s")
    ):
        return None
    return (
        zerda["peak"] / raw["peak"],
        other["peak"] / raw["peak"],
        zerda["cpu_s"] / raw["cpu_s"],
        other["cpu_s"] / raw["cpu_s"],
    )


# --- the full tables (RESULTS.md) --------------------------------------------------------------


def check_table(data: dict[str, Any]) -> str:
    header = [
        "wire",
        "peer",
        "requests per call: generate / stream / async",
        "request body bytes: peer / Zerda",
        "stream chunks",
    ]
    rows = []
    for wire, peer, sections in _comparisons(data):
        c: Any = sections.get("check")
        reason = _reason(c)
        if reason:
            rows.append([wire, PEER_NAMES.get(peer, peer), _escape(reason), "", ""])
            continue
        requests = (
            f"{c['generate']['requests']} / {c['stream']['requests']} / {c['async']['requests']}"
        )
        size = f"{c['generate']['body_bytes']:,} / {c['zerda_body_bytes']:,}"
        rows.append([wire, PEER_NAMES.get(peer, peer), requests, size, str(c["stream"]["chunks"])])
    return _table(header, rows)


def timed_table(data: dict[str, Any], section: str) -> str:
    header = ["wire", "peer"]
    header += ["concurrent calls"] if section == "async" else []
    header += [
        "Zerda CPU µs/call",
        "raw CPU µs/call",
        "peer CPU µs/call",
        "Zerda ÷ raw",
        "peer ÷ raw",
    ]
    header += ["Zerda ÷ peer (CPU)", "Zerda ÷ peer (wall)"]
    rows = []
    for wire, peer, sections in _comparisons(data):
        r: Any = sections.get(section)
        reason = _reason(r) or _reason(sections.get("check"))
        if reason:
            rows.append(
                [wire, PEER_NAMES.get(peer, peer), _escape(reason)] + [""] * (len(header) - 3)
            )
            continue
        levels = r.items() if section == "async" else [(None, r)]
        for level, x in levels:
            per = "cpu_us_per_call" if section == "async" else "cpu_us"
            row = [wire, PEER_NAMES.get(peer, peer)] + ([level] if level else [])
            row += [_us(x[side][per]) for side in ("zerda", "raw", "peer")]
            row += [_x(x["zerda_vs_raw"]), _x(x["peer_vs_raw"])]
            row += [_x(x["zerda_vs_peer"]) + _behind(x["zerda_vs_peer"], 1.0)]
            row += [_x(x["zerda_vs_peer_wall"]) + _behind(x["zerda_vs_peer_wall"], 1.0)]
            rows.append(row)
    return _table(header, rows)


def scaling_table(data: dict[str, Any]) -> str:
    header = ["wire", "peer", "round trips (body KB)", "Zerda CPU ms/call", "raw ms", "peer ms"]
    header += ["floor ms", "Zerda ÷ floor", "raw ÷ floor", "peer ÷ floor", "Zerda ÷ peer"]
    rows = []
    for wire, peer, sections in _comparisons(data):
        r: Any = sections.get("scaling")
        reason = _reason(r) or _reason(sections.get("check"))
        if reason:
            rows.append(
                [wire, PEER_NAMES.get(peer, peer), _escape(reason)] + [""] * (len(header) - 3)
            )
            continue
        for size, x in r["sizes"].items():
            row = [
                wire,
                PEER_NAMES.get(peer, peer),
                f"{int(size):,} ({x['body_bytes'] / 1024:,.0f})",
            ]
            row += [f"{x[side]['cpu_us'] / 1e3:,.2f}" for side in ("zerda", "raw", "peer", "floor")]
            row += [_x(x["zerda_vs_floor"]), _x(x["raw_vs_floor"]), _x(x["peer_vs_floor"])]
            row += [_x(x["zerda_vs_peer"]) + _behind(x["zerda_vs_peer"], 1.0)]
            rows.append(row)
    return _table(header, rows)


def import_table(data: dict[str, Any]) -> str:
    header = ["wire", "import + client", "CPU ms", "wall ms", "÷ raw SDK (CPU)"]
    rows = []
    for wire, imports in data.get("imports", {}).items():
        reason = _reason(imports)
        if reason:
            rows.append([wire, _escape(reason), "", "", ""])
            continue
        raw = imports["cases"]["raw"]["cpu_ms"]
        for name, x in imports["cases"].items():
            label = {"zerda": "Zerda", "raw": "raw SDK"}.get(name, PEER_NAMES.get(name, name))
            rows.append(
                [wire, label, f"{x['cpu_ms']:,.1f}", f"{x['ms']:,.1f}", _x(x["cpu_ms"] / raw)]
            )
        for peer, why in imports.get("not_applicable", {}).items():
            rows.append([wire, PEER_NAMES.get(peer, peer), _escape(why), "", ""])
    return _table(header, rows)


def image_table(data: dict[str, Any]) -> str:
    header = [
        "wire",
        "side",
        "peak MiB",
        "÷ raw SDK",
        "CPU ms per send",
        "÷ raw SDK",
        "base64 encodings",
    ]
    rows = []
    for wire, image in data.get("image", {}).items():
        raw = image["raw"]
        sides = [("raw SDK", raw), ("Zerda", image["zerda"])]
        sides += [(PEER_NAMES.get(p, p), r) for p, r in image.get("peers", {}).items()]
        for label, x in sides:
            if "error" in x or "n/a" in x:
                rows.append([wire, label, _escape(x.get("error") or x["n/a"]), "", "", "", ""])
                continue
            peak = x["peak"] / raw["peak"] if raw.get("peak") else None
            cpu = x["cpu_s"] / raw["cpu_s"] if raw.get("cpu_s") else None
            encodings = x.get("encodings", sum(x.get(k, 0) for k in ("zerda", "caller", "sdk")))
            rows.append(
                [
                    wire,
                    label,
                    f"{x['peak'] / 2**20:.1f}",
                    _x(peak),
                    f"{x['cpu_s'] * 1e3:,.1f}",
                    _x(cpu),
                    str(encodings),
                ]
            )
    return _table(header, rows)


# --- the sections ------------------------------------------------------------------------------


def _header(data: dict[str, Any]) -> list[str]:
    m = data.get("machine", {})
    versions = ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items() if v)
    quick = data.get("config", {}).get("quick")
    return [
        f"- Date: {m.get('date')}; mode: {'quick (smoke run, not a measurement)' if quick else 'full'}",
        f"- Machine: {m.get('cpu')}, {m.get('cores')} cores; load average at start: "
        f"{m.get('load_average_at_start')}, at the end: {m.get('load_average_at_end')}",
        f"- Python {m.get('python')}; versions: {versions}",
        *[f"- {note}" for note in m.get("notes", [])],
    ]


SHORT_LEGEND = (
    "Each cell: Zerda ÷ raw SDK / peer ÷ raw SDK, both measured in the same process and "
    "run (history: ÷ the floor, `json.dumps` of the body plus one loopback POST; async: "
    "raw calls/s ÷ calls/s at 16 concurrent calls); lower is better, ⚠ marks a cell where "
    "Zerda is above the peer."
)


def results_section(data: dict[str, Any]) -> str:
    """The whole "Peers" section of RESULTS.md, heading and markers included."""
    parts = [HEADING, "", START, "", *_header(data), f"- Method: {METHOD}", "", SHORT_LEGEND, ""]
    parts += [summary_table(data), "", READING, "", *[n + "\n" for n in notes(data)]]
    parts += ["### Each peer reaches the mock: one request per call", "", check_table(data), ""]
    titles = {
        "overhead": "### Short call (generate), CPU per call",
        "stream": "### Stream, every chunk iterated",
        "async": "### Async, by concurrency (wall ratios: inverted throughput)",
    }
    for section, title in titles.items():
        if any(section in s for _, _, s in _comparisons(data)):
            parts += [title, "", timed_table(data, section), ""]
    if any("scaling" in s for _, _, s in _comparisons(data)):
        parts += [
            "### History: 10 / 100 / 1,000 tool round trips, CPU per call",
            "",
            scaling_table(data),
            "",
        ]
    if data.get("imports"):
        parts += ["### Import + client (fresh interpreter, median)", "", import_table(data), ""]
    if data.get("image"):
        parts += [
            "### 8 MiB image: tracemalloc peak and CPU of one send",
            "",
            image_table(data),
            "",
        ]
    return "\n".join(parts + [END]) + "\n"


def readme_block(data: dict[str, Any]) -> str:
    """What goes between the README's markers: the short table and how to read it."""
    m = data.get("machine", {})
    quick = " (a quick run: smoke figures)" if data.get("config", {}).get("quick") else ""
    return "\n".join(
        [
            f"From `make bench-peers` of {m.get('date')}{quick}, load average "
            f"{m.get('load_average_at_start')} at start ([full tables](benchmarks/RESULTS.md)). "
            + "".join(f"{note[0].upper()}{note[1:]}. " for note in m.get("notes", []))
            + SHORT_LEGEND,
            "",
            summary_table(data),
            "",
            READING,
            *["\n" + n for n in notes(data)],
        ]
    )


def write_results(path: Path, data: dict[str, Any]) -> None:
    """RESULTS.md's Peers section replaced in place (or appended); the rest kept."""
    text = path.read_text() if path.exists() else ""
    section = results_section(data)
    start = text.find(HEADING)
    if start >= 0 and END in text[start:]:
        end = text.index(END, start) + len(END)
        text = text[:start] + section.rstrip("\n") + text[end:]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    path.write_text(text)


def write_readme(path: Path, data: dict[str, Any], start: str = START) -> bool:
    """The block between the README's peers markers replaced; False when it has none."""
    text = path.read_text()
    if start not in text or END not in text.split(start, 1)[1]:
        return False
    head, rest = text.split(start, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(head + start + "\n" + readme_block(data) + "\n" + END + tail)
    return True


def kept_section(path: Path) -> str:
    """The Peers section of an existing RESULTS.md, for run.py to keep when it rewrites
    the rest ("" when there is none)."""
    text = path.read_text() if path.exists() else ""
    start = text.find(HEADING)
    if start < 0 or END not in text[start:]:
        return ""
    return "\n" + text[start : text.index(END, start) + len(END)] + "\n"
