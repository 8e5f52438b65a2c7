"""The registry rows a test runs on, read from the registry (never a hand-written list of
providers), so that a row added there is covered the moment it exists.

- :func:`client_rows`: the rows with distinct clients, for tests of what an interface does
  with its SDK clients (closing, event loops, pickling, per-call timeouts). An
  OpenAI-compatible row (``registry.is_compatible``) is the ``openai`` row's interface class
  and SDK client at another default ``base_url``: for those tests it adds nothing over
  ``openai``, so only the first one is kept (a compatible row stays covered).
- :func:`wire_rows`: the first row of each wire protocol (``registry.wires()``), for tests
  whose behaviour depends on the protocol a request is written in, not on the row.

Tests whose behaviour depends on the row itself (request shapes, options, hosted tools,
capabilities) keep ``registry.NAMES``.
"""

from __future__ import annotations

from zerda.llm import registry


def client_rows() -> list[str]:
    """Every row that is not OpenAI-compatible, then the first compatible row, in row order."""
    compatible = registry.compatible()
    return [n for n in registry.NAMES if n not in compatible[1:]]


def wire_rows() -> list[str]:
    """The first row of each wire protocol, in row order."""
    return [next(n for n in registry.NAMES if registry.get(n).wire == w) for w in registry.wires()]
