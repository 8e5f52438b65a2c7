"""Batch jobs over a wire's batch API (docs/scale.md, "Batch APIs"; the job handles and
the shared mapping: :mod:`zerda.llm.batch`).

A wire whose rows have ``traits.batch`` gives one :class:`BatchProtocol` object
(``_batch_protocol()``): the native calls of a job, each with its async twin. Mapping
requests and results lives in the wire's ``batch`` module.

Every protocol call (``batch()``'s submission, a job's status, results and cancel) goes
through :meth:`Batches._batch_call`: retried as generate's SDK calls are (``_retrying``:
``max_retries``, the same backoff and Retry-After), then raised as its ZerdaError, chained
to the SDK's exception with every link scrubbed of secrets (docs/errors.md, Secrets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from zerda.llm import registry
from zerda.llm._drive import NO_KWARGS, Body
from zerda.llm.errors import InvalidRequestError
from zerda.llm.interface._host import Host
from zerda.llm.interface.retrying import _RETRY_BUDGET

if TYPE_CHECKING:
    from collections.abc import Sequence

    from zerda.llm.batch import BatchStatus, ItemOutcome
    from zerda.llm.interface.api import BaseLLMInterface

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
        batch_id = yield self, "_batch_call", ("submit", items, options), NO_KWARGS
        return batch_id, [i for i, _ in items]

    def _batch_call(self, name: str, *args: Any, budget: float | None = None) -> Any:
        """``protocol.<name>(*args)`` (submit, poll, fetch or cancel), retried per
        ``max_retries`` as every SDK call is; a failure raises its ZerdaError (see the
        module docstring). ``budget``: seconds the waits between retries may add up to
        (``job.wait``'s time left), else the interface's ``timeout``."""
        llm: BaseLLMInterface = self  # type: ignore[assignment]
        protocol = self._batch_protocol()
        token = None if budget is None else _RETRY_BUDGET.set(budget)
        try:
            return llm._retrying(lambda: getattr(protocol, name)(*args))
        except Exception as exc:
            self._batch_failed(exc)
        finally:
            if token is not None:
                _RETRY_BUDGET.reset(token)

    async def _batch_call_async(self, name: str, *args: Any, budget: float | None = None) -> Any:
        """As :meth:`_batch_call`; the protocol's ``_async`` twin is awaited."""
        llm: BaseLLMInterface = self  # type: ignore[assignment]
        protocol = self._batch_protocol()
        token = None if budget is None else _RETRY_BUDGET.set(budget)
        try:
            return await llm._retrying_async(lambda: getattr(protocol, f"{name}_async")(*args))
        except Exception as exc:
            self._batch_failed(exc)
        finally:
            if token is not None:
                _RETRY_BUDGET.reset(token)

    def _batch_failed(self, exc: Exception) -> NoReturn:
        """Raises ``exc`` as its ZerdaError (the one generate's result would carry), chained
        from it, with no secret left in any exception of the chain: a provider may echo the
        key in an error, and a traceback prints the whole chain."""
        llm: BaseLLMInterface = self  # type: ignore[assignment]
        err = llm._to_error(exc)
        llm._scrub_chain(exc)
        if err is exc:
            raise err
        raise err from exc
