"""OpenAI's Responses wire on MockLLMServer: ``/v1/responses`` alone."""

from __future__ import annotations

import re

from zerda.testing._wire import MockWire
from zerda.testing.wires.openai_responses.contract import CONTRACT

WIRE = MockWire(
    routes=(re.compile(r"/v1/responses"),),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    contract=CONTRACT,
    # The SDK appends /responses to a base URL that ends in /v1.
    base_path="/v1",
)
