"""Azure OpenAI's Responses wire on MockLLMServer: ``/openai/responses`` with
``?api-version=``; it renders exactly as OpenAI's Responses wire."""

from __future__ import annotations

import re

from zerda.testing._wire import MockWire
from zerda.testing.wires import openai_responses
from zerda.testing.wires.azure import azure_options
from zerda.testing.wires.azure_responses.contract import CONTRACT

WIRE = MockWire(
    routes=(re.compile(r"/openai/responses"),),
    renderer=openai_responses.WIRE.renderer,  # the Responses API's bodies, streams and errors
    validator=f"{__name__}.validate",
    view=openai_responses.WIRE.view,  # the Responses API's bodies
    contract=CONTRACT,
    client_options=azure_options,
    sdk_client_kwargs=azure_options,
    required_query="api-version",  # Azure answers 404 without it
)
