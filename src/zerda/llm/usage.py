"""Token usage in one shape for every provider (DESIGN.md §12, docs/usage.md).

``input_tokens`` is all input (cache reads and writes included), ``output_tokens`` all
output (reasoning included); ``cache_read_tokens``, ``cache_write_tokens`` and
``reasoning_tokens`` are parts of those totals. Each is an int, or None where the provider
did not say. Provider modules do their own arithmetic (which fields already include which)
and build the dict with :func:`make_usage`; ``run()`` adds turns with :func:`add_usage`.
"""

from __future__ import annotations

from typing import Any

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def make_usage(
    input_tokens: Any,
    output_tokens: Any,
    *,
    cache_read: Any = None,
    cache_write: Any = None,
    reasoning: Any = None,
) -> dict[str, int | None]:
    """The five-key usage dict; anything that is not an int (absent, null) is None."""
    values = (input_tokens, output_tokens, cache_read, cache_write, reasoning)
    return {k: _count(v) for k, v in zip(USAGE_KEYS, values, strict=True)}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def plus(*values: Any) -> int | None:
    """The sum of the counts that are ints; None when none is (nothing was reported)."""
    counts = [v for v in map(_count, values) if v is not None]
    return sum(counts) if counts else None


def add_usage(
    total: dict[str, int | None] | None, usage: dict[str, Any] | None
) -> dict[str, int | None] | None:
    """``total`` + ``usage``, key by key: None + None stays None, None + n is n."""
    if not usage:
        return total
    base = total or dict.fromkeys(USAGE_KEYS)
    return {k: plus(base.get(k), usage.get(k)) for k in USAGE_KEYS}
