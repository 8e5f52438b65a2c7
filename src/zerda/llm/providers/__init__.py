"""The provider registry: names and aliases to interface classes, imported lazily."""

from __future__ import annotations

import importlib
from typing import Any

from zerda.llm.base import BaseLLMInterface

# name -> (module, class); the module imports its SDK only when an interface is built.
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("zerda.llm.providers.openai", "OpenAIInterface"),
    "groq": ("zerda.llm.providers.groq", "GroqInterface"),
    "mistral": ("zerda.llm.providers.mistral", "MistralInterface"),
    "ollama": ("zerda.llm.providers.ollama", "OllamaInterface"),
    "anthropic": ("zerda.llm.providers.anthropic", "AnthropicInterface"),
    "bedrock": ("zerda.llm.providers.aws", "AWSInterface"),
    "gemini": ("zerda.llm.providers.gemini", "GeminiInterface"),
}
ALIASES = {"aws": "bedrock", "google": "gemini"}


def canonical_name(provider: str) -> str:
    name = ALIASES.get(provider.lower(), provider.lower())
    if name not in PROVIDERS:
        known = ", ".join(sorted([*PROVIDERS, *ALIASES]))
        raise ValueError(f"unknown provider {provider!r} (known: {known})")
    return name


def interface_class(provider: str) -> type[BaseLLMInterface]:
    module, cls = PROVIDERS[canonical_name(provider)]
    result: type[BaseLLMInterface] = getattr(importlib.import_module(module), cls)
    return result


def create_interface(provider: str, model: str | None = None, **options: Any) -> BaseLLMInterface:
    """``create_interface("anthropic", model="...")`` or ``create_interface("anthropic:model")``.

    Options: DESIGN.md §2 (api_key, base_url, timeout, max_retries, client, raise_errors)
    plus each provider's own (docs/providers.md).
    """
    if ":" in provider and model is None:
        provider, model = provider.split(":", 1)
    return interface_class(provider)(model, **options)
