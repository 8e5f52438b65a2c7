"""Paired timing: Zerda and the raw SDK run in alternating blocks, medians over blocks.

Each block runs one side ``n`` times and records client CPU time (``time.process_time``:
every thread of this process, none of the server's, which runs in another process) and wall
time (``time.perf_counter``). Blocks alternate A B B A A B ... so that slow drift (other
processes, CPU frequency, a warming cache) falls on both sides alike. Each ratio is the
median over block pairs of Zerda's time divided by the raw SDK's time in the same pair.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Block = Callable[[int], Any]  # runs the measured operation n times


@dataclass(frozen=True)
class Plan:
    warmup_s: float  # each side runs at least this long before timing (and at least once)
    blocks: int  # timed blocks per side
    block_s: float  # target duration of one block: sets how many operations it runs


def _timed(block: Block, n: int) -> tuple[float, float]:
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    block(n)
    return time.process_time() - cpu, time.perf_counter() - wall


def _warm_up(block: Block, seconds: float) -> float:
    """Runs single operations for ``seconds``; returns the wall time of one (a median of
    the second half, once caches and connection pools are warm)."""
    times: list[float] = []
    end = time.perf_counter() + seconds
    while not times or time.perf_counter() < end:
        times.append(_timed(block, 1)[1])
    return statistics.median(times[len(times) // 2 :])


def compare(
    zerda: Block, raw: Block, plan: Plan, before: Callable[[str], Any] | None = None
) -> dict[str, Any]:
    """Per-operation CPU and wall time of each side (medians, microseconds) and the paired
    Zerda / raw ratios (medians of per-pair ratios). Both sides run the same number of
    operations per block, sized from the warm-up so that a block lasts about
    ``plan.block_s``. ``before("zerda")`` / ``before("raw")``, when given, runs before each
    timed block of that side, outside the timing."""
    slowest = max(_warm_up(zerda, plan.warmup_s), _warm_up(raw, plan.warmup_s))
    n = max(1, round(plan.block_s / slowest)) if slowest > 0 else 1
    z_cpu: list[float] = []
    z_wall: list[float] = []
    r_cpu: list[float] = []
    r_wall: list[float] = []
    for i in range(plan.blocks):
        sides = (("zerda", zerda, z_cpu, z_wall), ("raw", raw, r_cpu, r_wall))
        for name, block, cpus, walls in sides if i % 2 == 0 else reversed(sides):
            if before is not None:
                before(name)
            cpu, wall = _timed(block, n)
            cpus.append(cpu / n)
            walls.append(wall / n)
    return {
        "zerda": _side(z_cpu, z_wall),
        "raw": _side(r_cpu, r_wall),
        "ratio_cpu": _paired_ratio(z_cpu, r_cpu),
        "ratio_wall": _paired_ratio(z_wall, r_wall),
        "blocks": plan.blocks,
        "n_per_block": n,
    }


def _side(cpus: list[float], walls: list[float]) -> dict[str, float]:
    return {
        "cpu_us": statistics.median(cpus) * 1e6,
        "wall_us": statistics.median(walls) * 1e6,
        "cpu_us_spread": _spread(cpus) * 1e6,
    }


def _spread(values: list[float]) -> float:
    """Half the interquartile range: a robust +/- to print beside a median."""
    if len(values) < 4:
        return (max(values) - min(values)) / 2
    q = statistics.quantiles(values, n=4)
    return (q[2] - q[0]) / 2


def _paired_ratio(zerda: list[float], raw: list[float]) -> float:
    return statistics.median(z / r for z, r in zip(zerda, raw, strict=True) if r > 0)


def throughput(fn: Block, n: int, repeats: int) -> dict[str, float]:
    """Operations per second (median of ``repeats`` timed runs of ``n`` operations) of a
    pure-CPU function: for conversions, which have no raw counterpart to pair with."""
    fn(max(1, n // 10))
    times = []
    for _ in range(repeats):
        cpu, _ = _timed(fn, n)
        times.append(cpu / n)
    per_op = statistics.median(times)
    return {"us_per_op": per_op * 1e6, "ops_per_s": 1 / per_op if per_op else float("inf")}
