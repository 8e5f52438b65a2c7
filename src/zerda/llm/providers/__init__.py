"""Provider interfaces: ``create_interface`` and the documented import paths.

Which providers exist is :mod:`zerda.llm.registry`'s to say; each class lives in its wire's
folder (:mod:`zerda.llm.wires`), and the modules here are those very modules under their
documented names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

from zerda.llm.base import BaseLLMInterface
from zerda.llm.registry import REGISTRY, canonical_name

if TYPE_CHECKING:
    from zerda.llm.fallback import FallbackInterface

# Kept for callers of the first round: the registry's names.
PROVIDERS = tuple(REGISTRY)


def interface_class(provider: str) -> type[BaseLLMInterface]:
    return REGISTRY[canonical_name(provider)].interface_class()


@overload
def create_interface(
    provider: str, model: str | None = None, **options: Any
) -> BaseLLMInterface: ...


@overload
def create_interface(provider: Sequence[Any], **options: Any) -> FallbackInterface: ...


def create_interface(provider: Any, model: str | None = None, **options: Any) -> Any:
    """``create_interface("anthropic", model="...")`` or ``create_interface("anthropic:model")``.

    Options: api_key, base_url, timeout, max_retries, client, raise_errors, plus each
    provider's own (docs/providers.md). A list of interfaces or names gives a fallback
    (:mod:`zerda.llm.fallback`).
    """
    if isinstance(provider, (list, tuple)) and model is None:
        from zerda.llm.fallback import fallback_interface

        return fallback_interface(provider, **options)
    if not isinstance(provider, str):
        raise TypeError(f"provider must be a string such as 'openai:gpt-4o-mini', not {provider!r}")
    if ":" in provider:
        provider, named = provider.split(":", 1)
        if model is not None and model != named:
            raise ValueError(
                f"the model is given twice: {named!r} in {provider + ':' + named!r} and "
                f"model={model!r}; give one"
            )
        model = named
    name = canonical_name(provider)
    return REGISTRY[name].interface_class()(model, provider=name, **options)
