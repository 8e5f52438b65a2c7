"""The keyword names a callable takes: how every wire lists the options its SDK client
accepts (``_option_names``) and checks ``**native`` against the SDK call."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["signature_options"]


def signature_options(
    fn: Callable[..., Any],
    exclude: Iterable[str] = (),
    var_keyword_to: Callable[..., Any] | None = None,
) -> frozenset[str] | None:
    """The keyword names ``fn`` takes, minus ``exclude``: the ONE way every provider lists
    the options its SDK client accepts. When ``fn`` also takes ``**kwargs`` it passes them
    on to ``var_keyword_to`` (ollama's Client to httpx.Client), whose names are added;
    with no such target any name may be valid, and None says none can be refused.

    Cached: per-call checks of ``**native`` read it on every request, and
    ``inspect.signature`` costs more than a small request's whole conversion."""
    return _signature_options(fn, frozenset(exclude), var_keyword_to)


@functools.lru_cache(maxsize=256)
def _signature_options(
    fn: Callable[..., Any], exclude: frozenset[str], var_keyword_to: Callable[..., Any] | None
) -> frozenset[str] | None:
    params = inspect.signature(fn).parameters.values()
    named = {
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        onward = signature_options(var_keyword_to) if var_keyword_to is not None else None
        if onward is None:
            return None
        named |= onward
    return frozenset(named - {"self", *exclude})
