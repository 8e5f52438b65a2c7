"""One comparison, Zerda, the raw SDK and one peer on one wire, in its own process (a
peer's import side effects, threads and caches stay out of the others' figures).

``python benchmarks/peers/worker.py WIRE PEER PORT SECTIONS [--quick]`` prints one JSON
object: ``{section: result | {"failed": reason} | {"n/a": reason}}``; with SECTIONS
``image``, the peer's figures for the 8 MiB image (a process of its own, as bench_image's).

Every section reuses ``make bench``'s pieces: the clients and the raw SDK side of
``bench_worker`` / ``bench_raw``, the rotating blocks of ``bench_scaling.rotate`` (each
side's per-call CPU and wall time, medians over blocks, ratios the medians of per-round
ratios), and the history, documented raw call and floor of ``bench_scaling``. The first
section, ``check``, sends one call of each kind per side to a private MockLLMServer and
counts what arrives: a peer that does not send exactly one request per call, or whose
answer has not the tool call, is "n/a" with the reason, and is not timed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent / "src")]

from bench_data import MESSAGES, MODELS, RESPONSE, zerda_kwargs  # noqa: E402
from bench_raw import RAW  # noqa: E402
from bench_scaling import SIZES, Floor, _documented_kwargs, _wire, history, raw_call, rotate  # noqa: E402
from bench_timing import Plan  # noqa: E402
from bench_worker import _addr, _interface, _rounds, check  # noqa: E402

from peers.adapters import PEERS, Peer  # noqa: E402
from zerda.llm import create_interface  # noqa: E402
from zerda.testing import MockLLMServer  # noqa: E402

# x256 only when asked (--x256): a round of 256 calls through the slower peers lasts
# seconds on a shared 2-core machine, and that row measures the mock server's ceiling
# more than the clients (benchmarks/README.md, "Async").
CONCURRENCY = (1, 16)
SIDES = ("zerda", "raw", "peer")
PAIRS = (("zerda", "raw"), ("peer", "raw"), ("zerda", "peer"))
SCALING_PAIRS = (*PAIRS, ("zerda", "floor"), ("raw", "floor"), ("peer", "floor"))
EXPECTED = [c["name"] for c in RESPONSE["tool_calls"]]


def plans(quick: bool) -> dict[str, Plan]:
    if quick:
        quick_plan = Plan(0.05, 2, 0.05)
        return {"sync": quick_plan, "async": quick_plan, "scaling": quick_plan}
    # Fewer blocks than make bench's (60 pairs): three or four sides per block, twelve
    # comparisons, on two cores shared with other work.
    return {"sync": Plan(0.5, 12, 0.2), "async": Plan(0.5, 4, 0.4), "scaling": Plan(0.2, 3, 0.2)}


def _peer(wire: str, peer: str, port: int) -> Peer:
    return PEERS[peer](wire, _addr(port).sdk_client_kwargs(wire))


def _repeat(call: Callable[[], Any]) -> Callable[[int], None]:
    def block(n: int) -> None:
        for _ in range(n):
            call()

    return block


# --- check: each side sends one request per call, and its answer is parsed --------------------


def _count(server: MockLLMServer, wire: str, call: Callable[[], Any]) -> tuple[int, Any, int]:
    """(requests the server got, the call's return value, bytes of the last body)."""
    server.reset()
    server.set_default(wire, **RESPONSE)
    out = call()
    log = server.requests
    return len(log), out, len(log[-1].raw_body) if log else 0


def check_peer(wire: str, peer: str) -> dict[str, Any]:
    """Untimed: on a private mock, one generate, stream and async call of each side."""
    out: dict[str, Any] = {}
    with MockLLMServer() as server:
        adapter = PEERS[peer](wire, server.sdk_client_kwargs(wire))
        native = adapter.prepare(MESSAGES)
        n, result, size = _count(server, wire, lambda: adapter.generate(native))
        names = adapter.tool_names(result)
        out["generate"] = {"requests": n, "tool_calls": names, "body_bytes": size}
        n, chunks, _ = _count(server, wire, lambda: adapter.stream(native))
        out["stream"] = {"requests": n, "chunks": chunks}
        loop = asyncio.new_event_loop()
        try:
            fresh = PEERS[peer](wire, server.sdk_client_kwargs(wire))  # its clients on this loop
            n, result, _ = _count(
                server, wire, lambda: loop.run_until_complete(fresh.agenerate(native))
            )
        finally:
            loop.close()
        out["async"] = {"requests": n, "tool_calls": fresh.tool_names(result)}
        zerda = create_interface(wire, model=MODELS[wire], **server.client_options(wire))
        _, _, out["zerda_body_bytes"] = _count(
            server, wire, lambda: zerda.generate(MESSAGES, **zerda_kwargs())
        )
    bad = [
        f"{kind}: {r['requests']} requests"
        + (f", tool calls {r.get('tool_calls')}" if "tool_calls" in r else "")
        for kind, r in out.items()
        if isinstance(r, dict) and (r["requests"] != 1 or r.get("tool_calls", EXPECTED) != EXPECTED)
    ]
    if bad:
        raise RuntimeError(
            "the peer's call did not reach the mock once per call: " + "; ".join(bad)
        )
    return out


# --- timed sections -----------------------------------------------------------------------------


def bench_overhead(wire: str, peer: str, port: int, quick: bool) -> dict[str, Any]:
    iface = _interface(wire, port)
    raw = RAW[wire](_addr(port).sdk_client_kwargs(wire))
    adapter = _peer(wire, peer, port)
    kwargs = zerda_kwargs()
    native = adapter.prepare(MESSAGES)
    check(iface.generate(MESSAGES, **kwargs), "zerda generate")
    sides = {
        "zerda": _repeat(lambda: iface.generate(MESSAGES, **kwargs)),
        "raw": _repeat(raw.generate),
        "peer": _repeat(lambda: adapter.generate(native)),
    }
    try:
        return rotate(sides, plans(quick)["sync"], PAIRS, wall_ratios=True)
    finally:
        raw.close()


def bench_stream(wire: str, peer: str, port: int, quick: bool) -> dict[str, Any]:
    iface = _interface(wire, port)
    raw = RAW[wire](_addr(port).sdk_client_kwargs(wire))
    adapter = _peer(wire, peer, port)
    kwargs = zerda_kwargs()
    native = adapter.prepare(MESSAGES)

    def zerda() -> int:
        return sum(1 for _ in iface.stream(MESSAGES, **kwargs))

    sides = {
        "zerda": _repeat(zerda),
        "raw": _repeat(raw.stream),
        "peer": _repeat(lambda: adapter.stream(native)),
    }
    try:
        out = rotate(sides, plans(quick)["sync"], PAIRS, wall_ratios=True)
        out["chunks"] = {"zerda": zerda(), "raw": raw.stream(), "peer": adapter.stream(native)}
        return out
    finally:
        raw.close()


def bench_async(
    wire: str, peer: str, port: int, quick: bool, levels: tuple[int, ...] = CONCURRENCY
) -> dict[str, Any]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    iface = _interface(wire, port)
    raw = RAW[wire](_addr(port).sdk_client_kwargs(wire))
    adapter = _peer(wire, peer, port)
    kwargs = zerda_kwargs()
    native = adapter.prepare(MESSAGES)
    calls: dict[str, Callable[[], Any]] = {
        "zerda": lambda: iface.generate_async(MESSAGES, **kwargs),
        "raw": raw.generate_async,
        "peer": lambda: adapter.agenerate(native),
    }
    out: dict[str, Any] = {}
    try:
        for c in levels:
            sides: dict[str, Callable[[int], Any]] = {
                name: (lambda n, call=call, c=c: loop.run_until_complete(_rounds(call, c, n)))
                for name, call in calls.items()
            }
            result = rotate(sides, plans(quick)["async"], PAIRS, wall_ratios=True)
            for name in SIDES:  # one operation is a round of c calls
                result[name]["calls_per_s"] = c * 1e6 / result[name]["wall_us"]
                result[name]["cpu_us_per_call"] = result[name]["cpu_us"] / c
            out[str(c)] = result
    finally:
        raw.close()
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return out


def bench_history(wire: str, peer: str, port: int, quick: bool) -> dict[str, Any]:
    """bench_scaling's three sides (Zerda, the documented raw call given Zerda's native
    request, the floor) and the peer given the same history in its own form."""
    addr = _addr(port)
    llm = create_interface(wire, model=MODELS[wire], **addr.client_options(wire))
    send_raw, raw_client = raw_call(wire, addr.sdk_client_kwargs(wire))
    adapter = _peer(wire, peer, port)
    out: dict[str, Any] = {"sizes": {}}
    try:
        for size in SIZES:
            out["sizes"][str(size)] = _one_size(wire, size, llm, send_raw, adapter, addr, quick)
    finally:
        llm.close()
        close = getattr(raw_client, "close", None)
        if callable(close):
            close()
    return out


def _one_size(
    wire: str,
    size: int,
    llm: Any,
    send_raw: Callable[[Any], Any],
    adapter: Peer,
    addr: MockLLMServer,
    quick: bool,
) -> dict[str, Any]:
    kwargs = zerda_kwargs()
    messages = history(size)
    native = _documented_kwargs(wire, llm._native_request(messages, kwargs))
    peer_native = adapter.prepare(messages)
    if adapter.tool_names(adapter.generate(peer_native)) != EXPECTED:
        raise RuntimeError(f"{adapter.name} at {size} round trips: no tool call in the answer")

    def zerda_on(server: MockLLMServer) -> None:
        with create_interface(wire, model=MODELS[wire], **server.client_options(wire)) as private:
            private.generate(messages, raise_errors=True, **kwargs)

    path, headers, body = _wire(wire, zerda_on)
    floor = Floor(f"{addr.url}/{wire}{path}", headers, body)
    sides = {
        "zerda": _repeat(lambda: llm.generate(messages, **kwargs)),
        "raw": _repeat(lambda: send_raw(native)),
        "peer": _repeat(lambda: adapter.generate(peer_native)),
        "floor": _repeat(floor),
    }
    try:
        timed = rotate(sides, plans(quick)["scaling"], SCALING_PAIRS)
    finally:
        floor.close()
    timed["messages"] = len(messages)
    timed["body_bytes"] = len(json.dumps(body))
    return timed


# --- image: one 8 MiB PNG, as bench_image measures the raw SDK and Zerda -------------------------


def measure_image(wire: str, peer: str, port: int, quick: bool) -> dict[str, Any]:
    """bench_image.measure for a peer: CPU of one send (best of 9, untraced), then
    tracemalloc's peak of one send above what was allocated before; base64 encodings of
    1 MiB or more, the caller's and the library's together."""
    import tracemalloc

    from bench_image import ENCODINGS, QUESTION, _count_encodings, payload

    adapter = _peer(wire, peer, port)
    adapter.send_image(QUESTION, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)  # clients built, warm
    png = payload()
    cpu = []
    for _ in range(3 if quick else 9):
        start = time.process_time()
        adapter.send_image(QUESTION, png)
        cpu.append(time.process_time() - start)
    _count_encodings()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    adapter.send_image(QUESTION, png)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return {"peak": peak, "cpu_s": min(cpu), "encodings": sum(ENCODINGS.values())}


SECTIONS: dict[str, Callable[[str, str, int, bool], dict[str, Any]]] = {
    "overhead": bench_overhead,
    "stream": bench_stream,
    "async": bench_async,
    "scaling": bench_history,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("wire")
    parser.add_argument("peer")
    parser.add_argument("port", type=int)
    parser.add_argument("sections")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--x256", action="store_true", help="async at 256 concurrent calls too")
    args = parser.parse_args(argv)
    if args.x256:
        SECTIONS["async"] = partial(bench_async, levels=(*CONCURRENCY, 256))
    if args.sections == "image":  # its own process per side, against the lenient mock
        print(json.dumps(measure_image(args.wire, args.peer, args.port, args.quick)))
        return
    sections = args.sections.split(",")
    out: dict[str, Any] = {}
    try:
        out["check"] = check_peer(args.wire, args.peer)
    except Exception as exc:  # the peer cannot talk to the mock on this wire: n/a, untimed
        traceback.print_exc(file=sys.stderr)
        reason = f"n/a: {type(exc).__name__}: {exc}"[:300]
        print(json.dumps({s: {"n/a": reason} for s in ["check", *sections]}))
        return
    for section in sections:
        started = time.perf_counter()
        try:
            out[section] = SECTIONS[section](args.wire, args.peer, args.port, args.quick)
            out.setdefault("seconds", {})[section] = round(time.perf_counter() - started, 1)
        except Exception as exc:  # reported as the section's result, the others go on
            traceback.print_exc(file=sys.stderr)
            out[section] = {"failed": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
