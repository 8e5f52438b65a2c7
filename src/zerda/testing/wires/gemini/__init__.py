"""Gemini's wire on MockLLMServer: generateContent / streamGenerateContent and Batch Mode
(with the Files API's upload and download)."""

from __future__ import annotations

import re
from typing import Any

from zerda.testing._wire import MockWire
from zerda.testing.wires.gemini.contract import CONTRACT


def _sdk_client_kwargs(base: str) -> dict[str, Any]:
    return {"api_key": "test-key", "http_options": {"base_url": base}}


WIRE = MockWire(
    routes=(re.compile(r"/v1(beta|alpha)?/models/[^/:]+:(generateContent|streamGenerateContent)"),),
    renderer=f"{__name__}.render",
    validator=f"{__name__}.validate",
    view=f"{__name__}.view",  # how a model reads a request (answer_like_a_model)
    contract=CONTRACT,
    sdk_client_kwargs=_sdk_client_kwargs,
    # https://ai.google.dev/api/tokens#method:-models.counttokens
    count_paths=re.compile(r"/v1(beta|alpha)?/models/[^/:]+:countTokens"),
    batch_paths=re.compile(
        r"/v1(beta|alpha)?/(models/[^/:]+:batchGenerateContent|batches(/[^/:]+(:cancel)?)?"
        r"|files/[^/:]+(:download)?)|/(upload|download)/v1(beta|alpha)?/files(/[^/:]+:download)?"
    ),
    batches=f"{__name__}.batches",
)
