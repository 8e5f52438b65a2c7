"""The cost a result must carry (DESIGN §21), computed by genai-prices' own ``calc_price``,
independently of Zerda's arithmetic (zerda/llm/_cost.py), for tests that compare whole
results of models genai-prices prices."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

from zerda.llm import registry


def genai_usage(usage: dict[str, Any]) -> SimpleNamespace:
    """A Zerda usage (DESIGN §12) in genai-prices' units: input and output are totals there
    too, with cache reads and writes parts of the input and reasoning a part of the output."""
    return SimpleNamespace(
        input_tokens=usage["input_tokens"],
        cache_read_tokens=usage.get("cache_read_tokens"),
        cache_write_tokens=usage.get("cache_write_tokens"),
        output_tokens=usage["output_tokens"],
        output_reasoning_tokens=usage.get("reasoning_tokens"),
    )


def genai_cost(
    provider: str, model: str, usage: dict[str, Any] | None, *, batch: bool = False
) -> dict[str, Any] | None:
    """``calc_price`` of ``usage`` on the row ``provider``'s ``model`` (its price provider),
    as a result carries it; None where genai-prices has no price for it."""
    import genai_prices

    price_provider = registry.get(provider).price_provider
    if usage is None or price_provider is None:
        return None
    context = {"processing": "batch"} if batch else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            price = genai_prices.calc_price(
                genai_usage(usage), model, provider_id=price_provider, price_context=context
            )
    except (LookupError, ValueError):
        return None
    return {
        "input": float(price.input_price),
        "output": float(price.output_price),
        "total": float(price.total_price),
        "currency": "USD",
    }
