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
    contract=CONTRACT,
    sdk_client_kwargs=_sdk_client_kwargs,
    batch_paths=re.compile(
        r"/v1(beta|alpha)?/(models/[^/:]+:batchGenerateContent|batches(/[^/:]+(:cancel)?)?"
        r"|files/[^/:]+(:download)?)|/(upload|download)/v1(beta|alpha)?/files(/[^/:]+:download)?"
    ),
    batches=f"{__name__}.batches",
)
