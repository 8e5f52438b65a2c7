"""A registry row's type: :class:`ProviderSpec`, and how a row travels through pickle."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from zerda.llm import _gc
from zerda.llm._record import fields_of, record
from zerda.llm._traits import Media, Traits

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface


@record
class ProviderSpec:
    """One provider: how to build it, where it lives, and its traits."""

    name: str
    cls: str  # "module:Class"
    extra: str  # pip install "zerda-llm[extra]"
    sdk_module: str  # imported at construction, so a missing SDK fails early
    sdk_package: str
    env_keys: tuple[str, ...]  # where the API key comes from, in order; () for none
    default_base_url: str | None
    wire: str  # the wire protocol MockLLMServer speaks for it
    demo_model: str
    title: str  # for docs tables
    aliases: tuple[str, ...] = ()
    auth: str = ""  # how it authenticates when env_keys is empty, for docs
    region_option: str | None = None  # the constructor option naming its region (CLI --region)
    secret_options: tuple[str, ...] = ()  # options besides api_key that hold secrets: redacted
    traits: Traits = field(default_factory=Traits)
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # Where the row's models are described (docs/cost-and-limits.md): the genai-prices
    # provider id that prices them (None: no price, ``cost`` is None), and the models.dev
    # provider ids that hold their limits, in lookup order (``zerda.llm.profile``).
    price_provider: str | None = None
    profile_providers: tuple[str, ...] = ()

    def __reduce__(self) -> str | tuple[Any, ...]:
        # A registry row travels as its name (its mappings are read-only proxies, which
        # pickle cannot store); a row from outside the registry travels field by field.
        from zerda.llm import registry  # the package imports this module first

        if registry.REGISTRY.get(self.name) is self:
            return (registry.get, (self.name,))
        return (_spec_from_fields, (_thawed_fields(self),))

    def rows_with(self, trait: str) -> tuple[str, ...]:
        """The names of the registry's rows whose ``trait`` is set (a refusal names them)."""
        from zerda.llm import registry

        return tuple(p.name for p in registry.REGISTRY.values() if getattr(p.traits, trait))

    def rows_hosting(self, kind: str) -> tuple[str, ...]:
        """The names of the registry's rows that run the hosted tool ``kind`` (DESIGN §18)."""
        from zerda.llm import registry

        return tuple(p.name for p in registry.REGISTRY.values() if kind in p.traits.hosted)

    def interface_class(self) -> type[BaseLLMInterface]:
        module, _, cls = self.cls.partition(":")
        with _gc.paused():  # a wire's modules load as zerda.llm's do (see zerda.llm)
            loaded = importlib.import_module(module)
        result: type[BaseLLMInterface] = getattr(loaded, cls)
        return result


def _thaw(value: Any) -> Any:
    """``value`` with its read-only mappings as dicts, for pickling."""
    if isinstance(value, MappingProxyType):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (Media, Traits)):
        return (type(value), {name: _thaw(getattr(value, name)) for name in fields_of(value)})
    return value


def _thawed_fields(spec: ProviderSpec) -> dict[str, Any]:
    return {name: _thaw(getattr(spec, name)) for name in fields_of(spec)}


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, tuple) and len(value) == 2 and value[0] in (Media, Traits):
        return value[0](**{k: _freeze(v) for k, v in value[1].items()})
    return value


def _spec_from_fields(values: dict[str, Any]) -> ProviderSpec:
    return ProviderSpec(**{k: _freeze(v) for k, v in values.items()})
