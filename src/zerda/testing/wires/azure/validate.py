"""Azure OpenAI Chat Completions: the OpenAI rules, on a deployment's path, with Azure's
authentication (an ``api-key`` header or an Entra ID ``Authorization`` bearer)."""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, has_header
from zerda.testing.wires.openai.validate import CHAT_RULES, api_key_present


def credentials_present(req: RecordedRequest) -> Rejection | None:
    """401 without ``api-key`` or ``Authorization``: "Access denied due to missing
    subscription key" (https://learn.microsoft.com/azure/ai-services/openai/reference#authentication)."""
    if has_header(req, "api-key", "authorization"):
        return None
    return Rejection(
        401,
        "Access denied due to missing subscription key. Make sure to include subscription key "
        "when making requests to an API.",
        fields={"code": "401"},
    )


RULES: tuple[Rule, ...] = (
    credentials_present,
    *(r for r in CHAT_RULES if r is not api_key_present),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return RULES if req.path.endswith("/chat/completions") else ()
