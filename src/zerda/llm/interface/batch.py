"""Batch jobs over a wire's batch API (docs/scale.md, "Batch APIs"; the job handles and
the shared mapping: :mod:`zerda.llm.batch`).

A wire whose rows have ``traits.batch`` gives one :class:`BatchProtocol` object
(``_batch_protocol()``): the native calls of a job, each with its async twin. Mapping
requests and results lives in the wire's ``batch`` module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from zerda.llm import registry
from zerda.llm._drive import NO_KWARGS, Body
from zerda.llm.errors import InvalidRequestError
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    from collections.abc import Sequence

    from zerda.llm.batch import BatchStatus, ItemOutcome

Items = list[tuple[str, dict[str, Any]]]


class BatchProtocol(Protocol):
    """A wire's batch API: submit a job (its id back), poll it, fetch its item outcomes
    (keyed by caller id; a job not ended raises), cancel it. Each has an ``_async`` twin."""

    def submit(self, items: Items, options: dict[str, Any]) -> str: ...

    async def submit_async(self, items: Items, options: dict[str, Any]) -> str: ...

    def poll(self, batch_id: str) -> BatchStatus: ...

    async def poll_async(self, batch_id: str) -> BatchStatus: ...

    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]: ...

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]: ...

    def cancel(self, batch_id: str) -> BatchStatus: ...

    async def cancel_async(self, batch_id: str) -> BatchStatus: ...


class Batches(Host):
    """The body of ``batch`` / ``batch_async`` and the hook a batch wire writes."""

    def _batch_protocol(self) -> BatchProtocol:
        """The wire's batch API (wires whose rows have ``traits.batch`` override this)."""
        raise NotImplementedError

    def _check_batch(self) -> None:
        if self.traits.batch is None:
            able = [p.name for p in registry.REGISTRY.values() if p.traits.batch]
            raise InvalidRequestError(
                f"batch: Zerda maps no batch API for {self.provider} (providers with one: "
                f"{', '.join(able)}); nothing was sent",
                provider=self.provider,
            )

    def _batching(
        self, requests: Sequence[dict[str, Any]], options: dict[str, Any]
    ) -> Body[tuple[str, list[str]]]:
        """Checks and converts every request, then submits them: (job id, caller ids)."""
        from zerda.llm.batch import prepare_items

        self._check_batch()
        items = prepare_items(self, requests)  # type: ignore[arg-type]
        try:
            batch_id = yield self._batch_protocol(), "submit", (items, options), NO_KWARGS
        except Exception as exc:
            raise self._to_error(exc) from exc
        return batch_id, [i for i, _ in items]
