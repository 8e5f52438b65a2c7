"""Azure OpenAI through ``openai.AzureOpenAI`` (docs/providers/azure.md): Chat Completions
(the ``azure`` row) and the Responses API (``azure-responses``).

Azure serves a model as a *deployment* of a resource
(https://learn.microsoft.com/azure/ai-services/openai/reference): the client takes the
resource's ``azure_endpoint``, an ``api_version``, and either a key or a Microsoft Entra ID
token (``azure_ad_token_provider=``, e.g. azure-identity's ``get_bearer_token_provider``).
The ``model`` is the deployment name: the SDK sends Chat Completions to
``/openai/deployments/{model}/chat/completions?api-version=…`` and Responses to
``/openai/responses?api-version=…``. Everything else is the OpenAI providers' own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from zerda.llm._fastpath import PrivateName
from zerda.llm.wires.azure import fastpath as _fastpath
from zerda.llm.wires.openai.interface import OpenAIInterface
from zerda.llm.wires.openai_responses.interface import OpenAIResponsesInterface

# Either one authenticates instead of a key.
_TOKEN_OPTIONS = ("azure_ad_token_provider", "azure_ad_token")


def _check_endpoint(kwargs: dict[str, Any]) -> None:
    """An Azure interface needs its resource's endpoint: without one the SDK refuses to build
    its client at the first call, which would come back as an ``unknown`` error then."""
    given = kwargs.get("client") or kwargs.get("azure_endpoint") or kwargs.get("base_url")
    if not (given or os.environ.get("AZURE_OPENAI_ENDPOINT")):
        raise ValueError(
            "Azure OpenAI needs the resource's endpoint: pass azure_endpoint="
            "'https://<resource>.openai.azure.com' or set AZURE_OPENAI_ENDPOINT"
        )


class _AzureClient:
    """The Azure client classes and credentials, shared by both rows' interfaces."""

    client_class: ClassVar[str] = "AzureOpenAI"
    async_client_class: ClassVar[str] = "AsyncAzureOpenAI"
    options: dict[str, Any]

    @staticmethod
    def _azure_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
        _check_endpoint(kwargs)
        # The SDK reads OPENAI_API_VERSION when api_version is not given; the row's default
        # version (applied by the base) must not hide it.
        version = os.environ.get("OPENAI_API_VERSION")
        if version and "api_version" not in kwargs:
            return {**kwargs, "api_version": version}
        return kwargs

    def _check_key(self) -> None:
        if not any(self.options.get(o) for o in _TOKEN_OPTIONS):
            super()._check_key()  # type: ignore[misc]


class AzureOpenAIInterface(_AzureClient, OpenAIInterface):
    """Chat Completions on Azure OpenAI; options as :class:`OpenAIInterface`, plus the
    ``AzureOpenAI`` ones (``azure_endpoint``, ``azure_deployment``, ``api_version``,
    ``azure_ad_token_provider``...)."""

    provider = "azure"
    fast_path_wire: ClassVar[str] = "azure"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fastpath.PRIVATE_NAMES

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(model, **self._azure_kwargs(kwargs))


class AzureResponsesInterface(_AzureClient, OpenAIResponsesInterface):
    """The Responses API on Azure OpenAI; options as :class:`AzureOpenAIInterface`."""

    provider = "azure-responses"
    fast_path_wire: ClassVar[str] = "azure-responses"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fastpath.RESPONSES_NAMES
    # Azure documents none of the built-in tools' ``include`` values (sources, results,
    # outputs: https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses): none
    # is sent, so a hosted item's readable output may be empty there.
    hosted_includes: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        super().__init__(model, **self._azure_kwargs(kwargs))
