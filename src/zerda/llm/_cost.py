"""The price of a result (DESIGN §21, docs/cost-and-limits.md): its usage priced with the
data of ``genai-prices``, the maintained price data pydantic-ai uses (the ``prices`` extra).

:func:`cost_of` gives ``{"input", "output", "total", "currency": "USD"}`` or None where the
price is unknown: a row with no price provider, a model genai-prices does not know,
genai-prices not installed, a malformed price entry, a usage with neither an input nor an
output count. It never raises and logs at DEBUG only: a price is never worth a failed call.

**The usage, as genai-prices reads it** (its units, ``genai_prices/data_units.py``):
``input_tokens`` is all input and ``cache_read_tokens`` / ``cache_write_tokens`` are parts of
it; ``output_tokens`` is all output and ``output_reasoning_tokens`` a part of it. That is the
meaning of Zerda's five counts (DESIGN §12), so they go over as they are, and genai-prices'
rule prices each part: the uncached input is input - cache reads - cache writes, the text
output is output - reasoning, and a part the entry gives no price of its own is priced as the
whole it belongs to (cache writes at the input price where no cache-write price is listed).

**Speed.** ``import zerda.llm`` imports neither genai-prices nor its data: the first price
does (once per process, a few tenths of a second). genai-prices' own ``calc_price`` resolves,
validates and decomposes the entry on every call (about 0.35 ms), which a call would feel; so
each (provider, model) is looked up once and its entry checked once by genai-prices itself
(``ModelPrice.calc_price`` on a sample usage: an entry it refuses is malformed), and later
calls are a dict lookup and a few integer products: the entry's prices kept exactly as
integers of a small fraction of a dollar, so each figure is the same float as genai-prices'
exact Decimal (tests/llm/test_cost.py checks both agree on every model of the bundled data).

**Updates.** The data is genai-prices': a new release of it (``pip install -U
genai-prices``), or its ``UpdatePrices`` background refresh, which swaps its data snapshot.
The lookups here belong to the snapshot they were made in and are dropped when it changes.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from datetime import datetime, timezone
from decimal import Decimal
from types import SimpleNamespace
from typing import Any, NamedTuple

logger = logging.getLogger("zerda")

CURRENCY = "USD"
# genai-prices prices tokens per million (``*_mtok``) and requests per thousand
# (``requests_kcount``): the ``per`` of those units in genai_prices/data_units.py.
_PER_TOKEN = 1_000_000
_PER_REQUEST = 1_000
# The price keys Zerda's counts meet, in _Rates' order. Every other key of an entry prices a
# count Zerda never reports (audio or image tokens, web searches, pages...), so it adds 0 and
# takes nothing from the counts above, as in genai-prices' own decomposition.
_KEYS = (
    "input_mtok",
    "cache_read_mtok",
    "cache_write_mtok",
    "output_mtok",
    "output_reasoning_mtok",
    "requests_kcount",
)
# A usage every well-formed entry prices: genai-prices checks an entry once on it.
_SAMPLE = SimpleNamespace(
    input_tokens=1000,
    cache_read_tokens=100,
    cache_write_tokens=100,
    output_tokens=100,
    output_reasoning_tokens=10,
)
_MAX_MODELS = 1024  # lookups kept per data snapshot (a process names few models)


class _Tiers(NamedTuple):
    """genai-prices' ``TieredPrices`` on the entry's scale: the base rate, and (start,
    rate) from the highest tier down."""

    base: Any  # a Decimal per token, then an int on the entry's scale
    tiers: tuple[tuple[int, Any], ...]


class _Rates(NamedTuple):
    """One entry's prices for Zerda's counts, per token, as integers of ``1 / scale``
    dollars: exact (prices are short decimals), so a cost is integer products and one
    correctly rounded division, the same float as genai-prices' exact Decimal gives.
    A rate is an int, :class:`_Tiers` (by total input; ``tiered`` says one is), or None
    where the entry lists none."""

    input: Any
    cache_read: Any
    cache_write: Any
    output: Any
    reasoning: Any
    request: int | None  # per request
    scale: int
    tiered: bool


class _Entry:
    """A model genai-prices knows: its prices, compiled once where they do not depend on
    the time of the call (most entries), else per price period."""

    __slots__ = ("fixed", "info", "own", "periods")

    def __init__(self, info: Any, provider: Any) -> None:
        self.info = info
        # genai-prices applies price variants (batch) only to a provider's own models, not
        # to those it falls back to (ModelInfo.calc_price).
        self.own = any(info is m for m in provider.models)
        self.periods: dict[int, tuple[Any, _Rates]] = {}
        settled = _settled(info.prices)
        self.fixed = None if settled is None else _compile(settled)

    def rates(self, batch: bool) -> _Rates:
        """The rates of a call made now (as a batch job's result: ``batch``)."""
        if self.fixed is not None and not batch:
            return self.fixed
        # Prices that change at a date or an hour (ConditionalPrice), or a batch variant:
        # genai-prices resolves them for the time of the call.
        context = {"processing": "batch"} if batch and self.own else None
        price = self.info.get_prices(datetime.now(tz=timezone.utc), context)
        if context is not None:
            return _compile(price)  # a fresh resolved copy: not kept
        kept = self.periods.get(id(price))
        if kept is None or kept[0] is not price:
            kept = self.periods[id(price)] = (price, _compile(price))
        return kept[1]


class _State:
    """genai-prices' snapshot module once imported (False: not installed), the snapshot the
    lookups belong to, and the lookups."""

    snapshots: Any = None
    model_price: Any = object
    start_date: Any = object
    snapshot: Any = None
    entries: dict[tuple[str, str], _Entry | None] = {}


def cost_of(
    price_provider: str | None, model: str, usage: Mapping[str, Any] | None, *, batch: bool = False
) -> dict[str, Any] | None:
    """The price of ``usage`` on ``model`` at genai-prices' provider ``price_provider``
    (``batch``: as a batch job's result, where the data has a batch price), or None."""
    if not usage or price_provider is None:
        return None
    try:
        entry = _entry(price_provider, model)
        return None if entry is None else _priced(entry.rates(batch), usage)
    except Exception as exc:  # a malformed entry or unexpected data: no price, never a failure
        logger.debug(
            "no cost for %s model %r: %s: %s", price_provider, model, type(exc).__name__, exc
        )
        return None


def model_info(price_provider: str | None, model: str) -> Any:
    """genai-prices' ``ModelInfo`` for ``model`` at ``price_provider``, or None."""
    if price_provider is None:
        return None
    try:
        entry = _entry(price_provider, model)
    except Exception as exc:
        logger.debug("no price data for %s model %r: %s", price_provider, model, exc)
        return None
    return None if entry is None else entry.info


def _entry(price_provider: str, model: str) -> _Entry | None:
    """The lookup of (provider, model) in genai-prices' current snapshot, made once."""
    snapshots = _snapshots()
    if snapshots is None:
        return None
    snapshot = snapshots.get_snapshot()
    entries = _State.entries
    if snapshot is not _State.snapshot:  # new data (UpdatePrices, a custom snapshot)
        entries.clear()
        _State.snapshot = snapshot
    key = (price_provider, model)
    try:
        return entries[key]
    except KeyError:
        pass
    entry = _look_up(snapshot, price_provider, model)
    if len(entries) >= _MAX_MODELS:
        entries.clear()
    entries[key] = entry
    return entry


def _look_up(snapshot: Any, price_provider: str, model: str) -> _Entry | None:
    try:
        provider, info = snapshot.find_provider_model(model, None, price_provider, None)
    except LookupError:
        logger.debug("genai-prices has no price for %s model %r", price_provider, model)
        return None
    try:
        return _Entry(info, provider)
    except Exception as exc:  # genai-prices refused the entry: malformed
        logger.debug("malformed price entry for %s model %r: %s", price_provider, model, exc)
        return None


def _settled(prices: Any) -> Any:
    """The entry's price from now on, or None where it depends on the time of the call.
    genai-prices takes the last of a list of ConditionalPrice whose constraint holds: when
    that is the last one and it has no constraint, or a start date now past, it holds for
    good (a time-of-day price, DeepSeek's off-peak one, does not)."""
    if isinstance(prices, _State.model_price):
        return prices
    last = prices[-1]
    constraint = last.constraint
    if constraint is None or (
        isinstance(constraint, _State.start_date) and constraint.active(datetime.now(timezone.utc))
    ):
        return last.prices
    return None


def _snapshots() -> Any:
    """genai-prices' ``data_snapshot`` module, imported on the first price; None when
    genai-prices is not installed (or does not import)."""
    if _State.snapshots is None:
        try:
            from genai_prices import data_snapshot, types
        except Exception as exc:  # ImportError, or a broken install
            logger.debug("no prices: genai-prices does not import (%s)", exc)
            _State.snapshots = False
        else:
            _State.model_price = types.ModelPrice
            _State.start_date = types.StartDateConstraint
            _State.snapshots = data_snapshot
    return _State.snapshots or None


def _compile(price: Any) -> _Rates:
    """``price``'s rates for Zerda's counts, after genai-prices itself has priced a sample
    usage with it (it raises on a malformed entry: a bad value, a missing ancestor price)."""
    with warnings.catch_warnings():
        # A price key this genai-prices does not know (data newer than the library) warns
        # and is ignored, by genai-prices and here alike.
        warnings.simplefilter("ignore")
        price.calc_price(_SAMPLE)
    *tokens, request = (getattr(price, key, None) for key in _KEYS)
    per_token = [_per(r, _PER_TOKEN) for r in tokens]
    per_request = _per(request, _PER_REQUEST)
    decimals = _decimals([*per_token, per_request])
    scale = 10 ** max([0, *(-int(d.as_tuple().exponent) for d in decimals)])
    scaled = [_scaled(r, scale) for r in per_token]
    tiered = any(isinstance(r, _Tiers) for r in scaled)
    return _Rates._make([*scaled, _scaled(per_request, scale), scale, tiered])


def _per(rate: Any, per: int) -> Any:
    """A price per ``per`` units as a price per unit (dividing by a power of ten is exact)."""
    if rate is None or isinstance(rate, Decimal):
        return None if rate is None else rate / per
    return _Tiers(rate.base / per, tuple((t.start, t.price / per) for t in reversed(rate.tiers)))


def _decimals(rates: list[Any]) -> list[Decimal]:
    out: list[Decimal] = []
    for r in rates:
        if isinstance(r, Decimal):
            out.append(r)
        elif isinstance(r, _Tiers):
            out += [r.base, *(p for _, p in r.tiers)]
    return out


def _scaled(rate: Any, scale: int) -> Any:
    """A per-unit Decimal rate as an integer of ``1 / scale`` dollars (exact)."""
    if rate is None:
        return None
    if isinstance(rate, _Tiers):
        return _Tiers(int(rate.base * scale), tuple((s, int(p * scale)) for s, p in rate.tiers))
    exact = rate * scale
    if exact != int(exact):  # cannot be: the scale covers every digit
        raise ValueError(f"price {rate} is not a multiple of 1/{scale}")
    return int(exact)


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None  # not a bool


def _priced(rates: _Rates, usage: Mapping[str, Any]) -> dict[str, Any] | None:
    """genai-prices' arithmetic (``ModelPrice.calc_price``) for Zerda's counts: each part
    with a price of its own is taken out of its whole and priced on its own."""
    counted_in, counted_out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if counted_in is None and counted_out is None:
        return None  # nothing counted: nothing to price
    # A count the provider did not give is 0, as genai-prices reads a missing count (Gemini
    # gives no output count for a prompt it blocked: there was no output).
    total_in, total_out = counted_in or 0, counted_out or 0
    r_in, r_read, r_write, r_out, r_reason = _per_token(rates, total_in)
    read = (_count(usage.get("cache_read_tokens")) or 0) if r_read is not None else 0
    write = (_count(usage.get("cache_write_tokens")) or 0) if r_write is not None else 0
    reason = (_count(usage.get("reasoning_tokens")) or 0) if r_reason is not None else 0
    uncached, text_out = total_in - read - write, total_out - reason
    if uncached < 0 or text_out < 0:
        return None  # parts larger than their whole: genai-prices refuses such a usage
    price_in = (r_in or 0) * uncached + (r_read or 0) * read + (r_write or 0) * write
    price_out = (r_out or 0) * text_out + (r_reason or 0) * reason
    total = price_in + price_out + (rates.request or 0)  # a request's price: in the total only
    scale = rates.scale
    return {
        "input": price_in / scale,
        "output": price_out / scale,
        "total": total / scale,
        "currency": CURRENCY,
    }


def _per_token(rates: _Rates, total_in: int) -> tuple[Any, ...]:
    """The five token rates, a tiered one resolved: the last tier whose start the total
    input passes (genai-prices' ``calc_unit_price``)."""
    if not rates.tiered:
        return rates[:5]
    return tuple([r if type(r) is not _Tiers else _tier(r, total_in) for r in rates[:5]])


def _tier(rate: _Tiers, total_in: int) -> int:
    for start, price in rate.tiers:
        if total_in > start:
            return price
    return rate.base
