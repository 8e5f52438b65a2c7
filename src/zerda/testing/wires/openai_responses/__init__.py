"""OpenAI's Responses wire on MockLLMServer: ``/v1/responses`` and its token count,
``/v1/responses/input_tokens``."""

from __future__ import annotations

import re

from zerda.testing._wire import MockWire
from zerda.testing.wires.openai_responses.contract import CONTRACT

WIRE = MockWire(
    routes=(re.compile(r"/v1/responses"),),
    # https://platform.openai.com/docs/api-reference/responses/input-tokens
    count_paths=re.compile(r"/v1/responses/input_tokens"),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=f"{__name__}.view",  # how a model reads a request (answer_like_a_model)
    contract=CONTRACT,
    # The SDK appends /responses to a base URL that ends in /v1.
    base_path="/v1",
)
