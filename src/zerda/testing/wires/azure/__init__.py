"""Azure OpenAI's chat wire on MockLLMServer: a deployment's path under the resource endpoint,
with ``?api-version=``; it renders exactly as OpenAI's wire (only the routes differ)."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._wire import MockWire
from zerda.testing.wires import openai
from zerda.testing.wires.azure.contract import CONTRACT


def azure_options(base: str) -> dict[str, Any]:
    """The resource endpoint: the SDK appends /openai/... (base_url would replace it)."""
    return {"azure_endpoint": base, "api_key": "test-key"}


WIRE = MockWire(
    # https://learn.microsoft.com/azure/ai-services/openai/reference: a deployment's path,
    # under the resource endpoint's /openai, with ?api-version=.
    routes=(re.compile(r"/openai/deployments/[^/]+/chat/completions"),),
    renderer=openai.WIRE.renderer,  # OpenAI's bodies, streams and errors
    validator=f"{__name__}.validate",
    view=openai.WIRE.view,  # Chat Completions bodies, as OpenAI's
    contract=CONTRACT,
    client_options=azure_options,
    sdk_client_kwargs=azure_options,
    required_query="api-version",  # Azure answers 404 without it
)
