"""Constructor arguments and options, checked at construction, not at the first call.

Programming errors in the common arguments (a model that is not a string, a negative
``max_retries``...) and options nothing takes fail when the interface is built, naming what
is valid. The API key is kept in a :class:`Secret`, so that no repr, str or log shows it.
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any

from zerda.llm import registry
from zerda.llm._fastpath import fast_path_on
from zerda.llm._timeout import timeout_problem
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    from collections.abc import Mapping

    from zerda.llm.registry import ProviderSpec


class Secret:
    """Holds an API key so that no repr, str or log of the interface can show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


def row_of(cls: type, provider: str | None) -> ProviderSpec:
    """The registry row an interface of ``cls`` serves: its own ``spec`` (a class outside
    the registry sets one) unless ``provider=`` names a row, else its ``provider``'s."""
    own = getattr(cls, "spec", None)
    if own is not None and provider is None:
        return own  # type: ignore[no-any-return]
    return registry.get(provider or cls.provider)  # type: ignore[attr-defined]


def with_defaults(spec: ProviderSpec, base_url: str | None, options: dict[str, Any]) -> Any:
    """The row's defaults under what the caller gave: ``options`` is filled in place; the
    base_url to use is returned."""
    for option, value in spec.defaults.items():
        if option == "base_url":
            base_url = base_url if base_url is not None else value
        else:
            options.setdefault(option, value)
    return base_url


def _type_name(value: Any) -> str:
    return type(value).__name__


def check_strings(owner: str, values: Mapping[str, Any]) -> None:
    """Arguments that must be strings when given (a key, a credential, a URL): a
    ``TypeError`` at construction naming the argument and the type it got, never its value
    (a bytes key would otherwise fail every call, and reach the log scrubbing as bytes)."""
    for name, value in values.items():
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{owner}: {name} must be a string, not {_type_name(value)}")


def _check_arguments(
    owner: str,
    model: Any,
    api_key: Any,
    base_url: Any,
    timeout: Any,
    max_retries: Any,
    raise_errors: Any,
) -> None:
    """Programming errors in the common arguments fail at construction, not at the first
    call. An api_key's value is never shown, only its type."""
    check_strings(owner, {"model": model, "api_key": api_key, "base_url": base_url})
    problem = timeout_problem(timeout)
    if problem:
        wrong_type = isinstance(timeout, bool) or not isinstance(timeout, (int, float))
        raise (TypeError if wrong_type else ValueError)(f"{owner}: timeout {problem}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(
            f"{owner}: max_retries must be an int, not {_type_name(max_retries)} ({max_retries!r})"
        )
    if max_retries < 0:
        raise ValueError(f"{owner}: max_retries must be 0 or more, not {max_retries}")
    if not isinstance(raise_errors, bool):
        raise TypeError(f"{owner}: raise_errors must be True or False, not {raise_errors!r}")


def fast_path_taken(llm: Any) -> bool:
    """Whether ``llm`` takes its wire's fast path (DESIGN §22): it asked for it and the
    installed SDK has every name of the class's ``fast_path_names`` table. Decided on an
    interface's first use and again where a pickle of it is loaded (that SDK may differ)."""
    return fast_path_on(llm.fast_path_wire, llm.fast_path_names, llm.fast_path)


def _fast_path_setting(owner: str, fast_path: Any) -> bool:
    if fast_path is None:
        return os.environ.get("ZERDA_FAST_PATH", "1").strip().lower() not in ("0", "false", "off")
    if not isinstance(fast_path, bool):
        raise TypeError(f"{owner}: fast_path must be True, False or None, not {fast_path!r}")
    return fast_path


def _own_parameters(cls: type) -> list[str]:
    """The named keyword parameters of ``cls``'s constructors, base first (for messages)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for p in inspect.signature(init).parameters.values():
            named = p.kind is inspect.Parameter.KEYWORD_ONLY or (
                p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.name != "self"
            )
            if named and p.name not in names:
                names.append(p.name)
    return names


class Options(Host):
    """Where ``**options`` go, and the check that something takes each of them."""

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """Where ``**options`` go and the names that place takes (from the SDK's signature,
        see :func:`zerda.llm._signatures.signature_options`); None: any name (the SDK takes
        ``**kwargs``). The default: nowhere, so any option is refused."""
        return "", frozenset()

    def _check_options(self) -> None:
        """An option nothing takes fails here, naming the valid ones, not at the first call."""
        where, accepted = self._option_names()
        if accepted is None:
            return
        unknown = sorted(set(self.options) - accepted)
        if not unknown:
            return
        own = _own_parameters(type(self))
        onward = sorted(accepted - set(own))
        sdk = f"; options for {where}: {', '.join(onward)}" if where and onward else ""
        s = "s" if len(unknown) > 1 else ""
        raise TypeError(
            f"{type(self).__name__} got unknown option{s} {', '.join(map(repr, unknown))} "
            f"(valid: {', '.join(own)}{sdk})"
        )

    def _key_from_env(self) -> str | None:
        return next((os.environ[k] for k in self.env_keys if os.environ.get(k)), None)
