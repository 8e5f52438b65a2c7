"""Fallbacks across interfaces (docs/providers.md, "Fallbacks").

``create_interface([llm_a, llm_b])`` or ``create_interface(["anthropic:m1", "openai:m2"],
options={"anthropic": {...}, "openai": {...}})`` returns a :class:`FallbackInterface`: each
call goes to the first interface, and moves to the next only when it failed in a way another
provider may not: rate_limit, server, timeout, connection (after that interface's own
retries), or a capability refusal before sending (the request is well formed but this row
cannot take it: an image URL where only bytes are taken, a tool_choice or a reasoning setting
it lacks; ``InvalidRequestError.capability``). Any other failure (a 400, a malformed history,
a bad schema) is the answer: another provider would refuse the same request. The next
interface gets the same arguments and the same history, which any provider can continue. A
stream moves on only before its first event: once text has been shown, starting again
elsewhere would show it twice.

An invalid structured answer (``response_format``) is an answer, not a failure: the
interface's own result comes back (``content``, ``parse_error``, ``usage``), or its
``OutputValidationError`` with ``raise_errors=True``, so ``run``'s ``output_retries`` work
over a fallback as over one interface.

Every result says which interface answered in ``result["provider"]`` (its provider name).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from zerda.llm._calls import TypedCalls
from zerda.llm._drive import Body
from zerda.llm._runs import ToolLoop
from zerda.llm.errors import RETRYABLE_TYPES, OutputValidationError, ZerdaError, error_result

__all__ = ["FallbackInterface", "fallback_interface"]

logger = logging.getLogger("zerda")

# The failures another interface may not have; the same as those retried (DESIGN.md §5).
FALLBACK_TYPES = RETRYABLE_TYPES


class FallbackInterface(TypedCalls, ToolLoop):
    """generate / generate_async / stream / stream_async / run / run_async over a list of
    interfaces, tried in order; see the module docstring."""

    # No single provider or model: the spans and results of each call name the one used.
    provider: str | None = None
    model: str | None = None

    def __init__(
        self, interfaces: Sequence[Any], *, raise_errors: bool = False, owned: Sequence[Any] = ()
    ) -> None:
        if isinstance(interfaces, (str, bytes)) or not interfaces:
            raise ValueError("a fallback needs a non-empty list of interfaces")
        self.interfaces = list(interfaces)
        self.raise_errors = raise_errors
        # The interfaces built here from names: closed with the fallback. Ready interfaces
        # passed in are the caller's to close, as a client= is.
        self._owned = list(owned)

    def __repr__(self) -> str:
        return f"FallbackInterface({self.interfaces!r})"

    # --- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the interfaces this fallback built from names (see BaseLLMInterface.close)."""
        for llm in self._owned:
            llm.close()

    async def aclose(self) -> None:
        for llm in self._owned:
            await llm.aclose()

    def __enter__(self) -> FallbackInterface:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> FallbackInterface:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- the decisions, shared by every method -------------------------------------------

    def _moves_on(self, index: int, err: ZerdaError) -> bool:
        """Whether a failure of interface ``index`` sends the call to the next one."""
        if index == len(self.interfaces) - 1 or not _another_may_not(err):
            return False
        nxt = self.interfaces[index + 1]
        logger.debug("%s failed (%s): falling back to %s", err.provider, err.type, nxt.provider)
        return True

    def _give_up(
        self, err: ZerdaError, llm: Any, raise_errors: bool | None, content: str | None = None
    ) -> dict[str, Any]:
        """The failure as the call's answer: raised, or its result. An invalid structured
        answer is the interface's own result (module docstring)."""
        answer = None
        if isinstance(err, OutputValidationError) and err.result is not None:
            err.result = answer = _answered(err.result, llm)
        if self.raise_errors if raise_errors is None else raise_errors:
            raise err
        return answer if answer is not None else _answered(error_result(err, content), llm)

    def _generation(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> Body[dict[str, Any]]:
        """generate's course, written once (see :mod:`zerda.llm._drive`)."""
        for index, llm in enumerate(self.interfaces):
            try:
                result = yield llm, "generate", (messages,), {"raise_errors": True, **kwargs}
                return _answered(result, llm)
            except ZerdaError as err:
                if not self._moves_on(index, err):
                    return self._give_up(err, llm, raise_errors)
        raise AssertionError("unreachable: the last interface never moves on")

    # --- public API -------------------------------------------------------------------------

    def count_tokens(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """The first interface's count (``tools=``, ``system=``): every call goes there first
        (docs/cost-and-limits.md, "Counting tokens")."""
        return self.interfaces[0].count_tokens(  # type: ignore[no-any-return]
            messages, raise_errors=self._raises(raise_errors), **kwargs
        )

    async def count_tokens_async(
        self, messages: Any, *, raise_errors: bool | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await self.interfaces[0].count_tokens_async(  # type: ignore[no-any-return]
            messages, raise_errors=self._raises(raise_errors), **kwargs
        )

    def _raises(self, raise_errors: bool | None) -> bool:
        return self.raise_errors if raise_errors is None else raise_errors

    def _events(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        course = _StreamCourse(self, raise_errors)
        for llm, texts in course:
            try:
                for event in llm.stream(messages, raise_errors=True, **kwargs):
                    yield _answered_event(event, llm, texts)
                return
            except ZerdaError as err:
                yield from course.failed(err)

    async def _events_async(
        self, messages: Any, raise_errors: bool | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        course = _StreamCourse(self, raise_errors)
        for llm, texts in course:
            try:
                async for event in llm.stream_async(messages, raise_errors=True, **kwargs):
                    yield _answered_event(event, llm, texts)
                return
            except ZerdaError as err:
                for done in course.failed(err):
                    yield done

    # run / run_async (the tool loop, DESIGN.md §8; each turn's generate falls back on its
    # own): ToolLoop, shared with BaseLLMInterface.


def fallback_interface(
    items: Sequence[Any],
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    raise_errors: bool = False,
    **common: Any,
) -> FallbackInterface:
    """What ``create_interface(list, ...)`` returns. Items are ready interfaces or
    ``"provider:model"`` names; a name's interface is built with ``common`` options updated
    by ``options[name]`` (``"openai:m2"``) or else ``options[provider]`` (``"openai"``)."""
    from zerda.llm.providers import create_interface

    options = options or {}

    def build(item: Any) -> Any:
        if not isinstance(item, str):
            return item
        own = options.get(item, options.get(item.split(":", 1)[0], {}))
        return create_interface(item, **{**common, "raise_errors": raise_errors, **own})

    built = [build(item) for item in items]
    owned = [llm for item, llm in zip(items, built, strict=True) if isinstance(item, str)]
    return FallbackInterface(built, raise_errors=raise_errors, owned=owned)


class _StreamCourse:
    """The interfaces a stream tries, in order (with the list its text is kept in), and
    what a failure does: before the stream's first event a failure another interface may
    not have moves on; any other ends the stream with its error (see the module docstring)."""

    def __init__(self, fallback: FallbackInterface, raise_errors: bool | None) -> None:
        self.fallback = fallback
        self.raise_errors = raise_errors
        self.over = False
        self.index = 0
        self.llm: Any = None
        self.texts: list[str] = []

    def __iter__(self) -> Iterator[tuple[Any, list[str]]]:
        for index, llm in enumerate(self.fallback.interfaces):
            self.index, self.llm, self.texts = index, llm, []
            yield llm, self.texts
            if self.over:
                return

    def failed(self, err: ZerdaError) -> list[dict[str, Any]]:
        """The done event that ends the stream here; none when it moves on."""
        fallback, texts = self.fallback, self.texts
        if not texts and fallback._moves_on(self.index, err):
            return []
        self.over = True
        result = fallback._give_up(err, self.llm, self.raise_errors, "".join(texts) or None)
        return [_done(result)]


def _another_may_not(err: ZerdaError) -> bool:
    """Whether another interface may not fail as ``err`` did: a retryable failure, or a
    refusal of what this row cannot take (never an invalid answer or bad input)."""
    return err.type in FALLBACK_TYPES or getattr(err, "capability", False) is True


def _answered(result: dict[str, Any], llm: Any) -> dict[str, Any]:
    return {**result, "provider": llm.provider}


def _answered_event(event: dict[str, Any], llm: Any, texts: list[str]) -> dict[str, Any]:
    """The event, its done result saying who answered; text is kept for a later failure.
    ``texts`` also marks the stream as started, so a failure no longer moves on."""
    if event["type"] == "done":
        return _done(_answered(event["result"], llm))
    texts.append(event["text"] if event["type"] == "text" else "")
    return event


def _done(result: dict[str, Any]) -> dict[str, Any]:
    return {"type": "done", "result": result}
