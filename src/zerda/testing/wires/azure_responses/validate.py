"""The Responses API on Azure OpenAI (``POST /openai/responses?api-version=…``): the
Responses rules (``wires/openai_responses/validate.py``) with Azure's authentication (an
``api-key`` header or an Entra ID ``Authorization`` bearer), and the deployment named by
``model`` (https://learn.microsoft.com/azure/ai-services/openai/how-to/responses)."""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rule
from zerda.testing.wires.azure.validate import credentials_present
from zerda.testing.wires.openai.validate import api_key_present
from zerda.testing.wires.openai_responses.validate import RULES as RESPONSES_RULES

RULES: tuple[Rule, ...] = (
    credentials_present,
    *(r for r in RESPONSES_RULES if r is not api_key_present),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return RULES if req.path.endswith("/responses") else ()
