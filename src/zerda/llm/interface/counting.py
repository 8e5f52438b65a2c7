"""``llm.count_tokens``: the input tokens a request would use, known before it is sent
(DESIGN.md §21; docs/cost-and-limits.md, "Counting tokens").

The request is checked and converted as ``generate`` would send it (the same history
conversion, tools and system prompt). Where the row has a counting endpoint
(``traits.count_tokens``) and its wire names a :class:`TokenCounter` (the interface's
``token_counter``, written in ``wires/<wire>/count.py``), that converted request goes to the
endpoint through the SDK and the answer is exact: ``{"input_tokens": n, "exact": True}``.
Elsewhere, and where the installed SDK lacks the counting call or the counter cannot carry
this request, the count is the estimate of :mod:`zerda.llm._estimate`, marked
``"exact": False``: a row without an endpoint never fails for that reason.

A counting call that fails is reported as ``generate`` reports a failure (logged; raised
with ``raise_errors``), as ``{"input_tokens": None, "exact": False, "error": {...}}``.
``count_tokens`` and ``count_tokens_async`` share one body (:mod:`zerda.llm._drive`): only
the counter's SDK call is awaited in the async twin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from zerda.llm._drive import NO_KWARGS, Body, drive, drive_async
from zerda.llm.errors import malformed_response
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    from zerda.llm._request import Request
    from zerda.llm.interface.api import BaseLLMInterface

__all__ = ["Counting", "TokenCounter", "count_of"]


class TokenCounter:
    """A wire's counting endpoint, for one call of ``llm`` (written in
    ``wires/<wire>/count.py``). The shared body asks it, in turn: whether the installed SDK
    has the call (:meth:`available`), the call's arguments from the request ``generate``
    would send (:meth:`arguments`), the call itself (:meth:`count` / :meth:`count_async`,
    retried as every call is) and the count in its answer (:meth:`tokens`)."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.llm = llm

    def available(self) -> bool:
        """Whether the installed SDK has the documented counting call (an older release
        that lacks it counts by the estimate)."""
        return True

    def arguments(self, native: dict[str, Any]) -> dict[str, Any] | None:
        """The counting call's keyword arguments from ``native`` (``_build_request``'s);
        None when the call cannot carry this request (then it is estimated)."""
        raise NotImplementedError

    def method(self, client: Any) -> Callable[..., Any]:
        """The SDK's counting method on ``client`` (a sync or an async client)."""
        raise NotImplementedError

    def tokens(self, raw: Any) -> int:
        """The input tokens of the endpoint's answer; a malformed answer raises."""
        raise NotImplementedError

    def count(self, arguments: dict[str, Any]) -> Any:
        call = self.method(self.llm.client)
        return self.llm._retrying(lambda: call(**arguments))

    async def count_async(self, arguments: dict[str, Any]) -> Any:
        call = self.method(self.llm.async_client)
        return await self.llm._retrying_async(lambda: call(**arguments))


def count_of(provider: str, value: Any, what: str) -> int:
    """``value`` as a count of tokens: a non-negative integer, else the endpoint's answer is
    malformed (never reported as a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise malformed_response(provider, f"the token count {what} is {value!r}, not a count")
    return value


class Counting(Host):
    """``count_tokens`` / ``count_tokens_async`` and the hook a wire sets."""

    # The wire's counter (wires/<wire>/count.py); None: the row's counts are estimated.
    token_counter: ClassVar[type[TokenCounter] | None] = None

    def count_tokens(
        self,
        messages: Any,
        *,
        tools: Any = None,
        system: Any = None,
        raise_errors: bool | None = None,
    ) -> dict[str, Any]:
        """The input tokens ``generate(messages, tools=, system=)`` would send:
        ``{"input_tokens": n, "exact": bool}`` (see the module docstring)."""
        self._check_open()
        return drive(self._counting(messages, tools, system, raise_errors))

    async def count_tokens_async(
        self,
        messages: Any,
        *,
        tools: Any = None,
        system: Any = None,
        raise_errors: bool | None = None,
    ) -> dict[str, Any]:
        self._check_open()
        return await drive_async(self._counting(messages, tools, system, raise_errors))

    def _counting(
        self, messages: Any, tools: Any, system: Any, raise_errors: bool | None
    ) -> Body[dict[str, Any]]:
        llm: BaseLLMInterface = self  # type: ignore[assignment]
        from zerda.llm.parts import with_urls

        try:
            req, native = llm._checked_request(messages, {"tools": tools, "system": system})
            counter = self._counter()
            # The endpoint's documented call takes JSON data: data URLs as strings.
            arguments = counter.arguments(with_urls(native)) if counter is not None else None
            if counter is None or arguments is None:
                return _estimated(req)
            raw = yield counter, "count", (arguments,), NO_KWARGS
            return {"input_tokens": counter.tokens(raw), "exact": True}
        except Exception as exc:
            error = llm._fail(exc, raise_errors)["error"]  # logged; raised per raise_errors
            return {"input_tokens": None, "exact": False, "error": error}

    def _counter(self) -> TokenCounter | None:
        """The wire's counter where the row has a counting endpoint and the installed SDK
        has its call; None: the count is estimated."""
        if self.token_counter is None or self.traits.count_tokens is None:
            return None
        counter = self.token_counter(self)  # type: ignore[arg-type]
        return counter if counter.available() else None


def _estimated(req: Request) -> dict[str, Any]:
    """The estimate of the checked request (media counted as the providers count them)."""
    from zerda.llm._estimate import estimate_input_tokens  # only where it is needed

    tokens = estimate_input_tokens(req.messages, tools=req.tools, system=req.system)
    return {"input_tokens": tokens, "exact": False}
