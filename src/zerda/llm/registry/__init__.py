"""The provider registry: one row per provider, its traits as data.

Everything that needs to know which providers exist reads this package: ``create_interface``,
the shared base's checks (tool names, ids, tool_choice, parallel_tool_calls), the CLI,
MockLLMServer, the docs tables and the tests' parametrisation. The rows are in
:mod:`.rows`, the model families they host in :mod:`.profiles`, the generated docs tables in
:mod:`.docs`. Importing it imports no SDK and no wire (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

# The vocabulary is the core's; kept importable from here.
from zerda.llm._traits import (  # noqa: F401 - re-exported
    NAME_64,
    PART_TYPES,
    TOOL_CHOICES,
    Media,
    Traits,
    frozen_map,
)
from zerda.llm.registry.rows import ROWS, compatible_row  # noqa: F401 - re-exported
from zerda.llm.registry.spec import ProviderSpec, _spec_from_fields  # noqa: F401

if TYPE_CHECKING:
    from zerda.llm.registry.docs import (  # noqa: F401 - loaded on first access (below)
        BATCH_DOCS,
        DOCS_TABLES,
        ID_RULE_DOCS,
        MEDIA_PART_TYPES,
        batch_table,
        media_table,
        media_types_table,
        providers_table,
        traits_table,
    )

# The read-only views every reader uses; the dicts behind them change only in extra_row, so
# a reader holding REGISTRY or ALIASES sees its row too.
_ROWS: dict[str, ProviderSpec] = {p.name: p for p in ROWS}
_ALIASES: dict[str, str] = {alias: p.name for p in ROWS for alias in p.aliases}
REGISTRY: Mapping[str, ProviderSpec] = MappingProxyType(_ROWS)
ALIASES: Mapping[str, str] = MappingProxyType(_ALIASES)
NAMES: tuple[str, ...] = tuple(REGISTRY)


def canonical_name(provider: str) -> str:
    """The registry name of ``provider`` (aliases resolved, case-insensitive)."""
    if not isinstance(provider, str):
        raise TypeError(f"a provider name must be a string, not {type(provider).__name__}")
    key = provider.lower()
    name = ALIASES.get(key, key)
    if name not in REGISTRY:
        known = ", ".join(sorted([*REGISTRY, *ALIASES]))
        raise ValueError(f"unknown provider {provider!r}{_suggestion(provider)} (known: {known})")
    return name


def _suggestion(provider: str) -> str:
    """``; did you mean ...?`` for a misspelt name (``antropic``) or LiteLLM's
    ``provider/model`` form (``openai/gpt-4o-mini``); empty when nothing is close."""
    head, slash, model = provider.partition("/")
    if slash and head.lower() in (*REGISTRY, *ALIASES):
        return f"; did you mean {head + ':' + model!r}? Zerda writes provider:model"
    import difflib  # only on this error path: not at import time

    close = difflib.get_close_matches(provider.lower(), [*REGISTRY, *ALIASES], n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def get(provider: str) -> ProviderSpec:
    """The row of ``provider`` (a name or an alias)."""
    return REGISTRY[canonical_name(provider)]


def wires() -> tuple[str, ...]:
    """The distinct wire protocols of the registry's rows, in row order."""
    return tuple(dict.fromkeys(p.wire for p in REGISTRY.values()))


def is_compatible(spec: ProviderSpec) -> bool:
    """Whether ``spec`` is a service reached through another row's interface at its own
    base URL (an OpenAI-compatible row, built with :func:`compatible_row`)."""
    return "base_url" in spec.defaults


def compatible() -> tuple[str, ...]:
    """The names of the OpenAI-compatible rows, in row order."""
    return tuple(p.name for p in REGISTRY.values() if is_compatible(p))


@contextmanager
def extra_row(spec: ProviderSpec) -> Iterator[ProviderSpec]:
    """For tests only: ``spec`` is a registry row (after the others) until the block ends.
    ``REGISTRY`` and ``ALIASES`` show it wherever they were imported; ``NAMES`` is a new
    tuple, so a copy taken before the block does not list it."""
    global NAMES
    if spec.name in _ROWS or spec.name in _ALIASES:
        raise ValueError(f"provider {spec.name!r} is a row already")
    names = NAMES
    _ROWS[spec.name] = spec
    _ALIASES.update(dict.fromkeys(spec.aliases, spec.name))
    NAMES = (*names, spec.name)
    try:
        yield spec
    finally:
        del _ROWS[spec.name]
        for alias in spec.aliases:
            del _ALIASES[alias]
        NAMES = names


# The docs tables (registry/docs.py) are for ``python -m zerda.llm.registry`` and the docs
# pages; building an interface never reads them, so they load on first access here rather
# than with every ``import zerda.llm`` (import + client, benchmarks/bench_imports.py).
_DOCS_NAMES = frozenset(
    (
        "BATCH_DOCS",
        "DOCS_TABLES",
        "ID_RULE_DOCS",
        "MEDIA_PART_TYPES",
        "batch_table",
        "media_table",
        "media_types_table",
        "providers_table",
        "traits_table",
    )
)


def __getattr__(name: str) -> Any:
    if name in _DOCS_NAMES:
        from zerda.llm.registry import docs

        return getattr(docs, name)
    raise AttributeError(f"module 'zerda.llm.registry' has no attribute {name!r}")
