"""Gemini on Vertex AI: the Gemini API's generateContent rules on Vertex AI's paths
(``/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent``), which
take a Google OAuth bearer token, not an API key."""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, bearer_present, body_of, has_header
from zerda.testing.wires.gemini.validate import api_key_present, invalid
from zerda.testing.wires.gemini.validate import rules_for as gemini_rules_for
from zerda.testing.wires.gemini.validate_hosted import GEMINI_RULES as GEMINI_HOSTED_RULES
from zerda.testing.wires.gemini.validate_hosted import VERTEX_RULES as VERTEX_HOSTED_RULES


def oauth_present(req: RecordedRequest) -> Rejection | None:
    """401 ``UNAUTHENTICATED`` without an ``Authorization`` bearer: an API key alone gets
    "API keys are not supported by this API. Expected OAuth2 access token or other
    authentication credentials that assert a principal." (Vertex AI's project endpoints take
    OAuth credentials: https://cloud.google.com/vertex-ai/docs/authentication), no
    credentials at all the "missing required authentication credential" answer
    (https://cloud.google.com/docs/authentication/troubleshoot-adc#missing-credentials)."""
    if bearer_present(req):
        return None
    if has_header(req, "x-goog-api-key") or req.query.get("key"):
        message = (
            "API keys are not supported by this API. Expected OAuth2 access token or other "
            "authentication credentials that assert a principal. See "
            "https://cloud.google.com/docs/authentication"
        )
    else:
        message = (
            "Request is missing required authentication credential. Expected OAuth 2 access "
            "token, login cookie or other valid authentication credential. See "
            "https://developers.google.com/identity/sign-in/web/devconsole-project."
        )
    return Rejection(401, message, "UNAUTHENTICATED")


# Vertex AI's CountTokensRequest: no generateContentRequest, no toolConfig
# (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models/countTokens).
COUNT_FIELDS = frozenset({"model", "instances", "contents", "systemInstruction", "tools"})
COUNT_FIELDS |= {"generationConfig", "system_instruction", "generation_config"}


def count_fields_known(req: RecordedRequest) -> Rejection | None:
    """400 "Invalid JSON payload received. Unknown name "toolConfig": Cannot find field."
    for a field Vertex AI's countTokens body does not have (the reference above; Google's
    answer to an unknown field, as quoted in gemini/validate.py's schema_fields_known)."""
    unknown = [key for key in body_of(req) if key not in COUNT_FIELDS]
    if not unknown:
        return None
    return invalid(
        f'Invalid JSON payload received. Unknown name "{unknown[0]}": Cannot find field.'
    )


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    rules = gemini_rules_for(req)
    if not rules:
        return ()
    if req.path.endswith(":countTokens"):
        rules = (*rules[:2], count_fields_known, *rules[2:])
    else:  # Vertex AI's own built-in tools and parts (validate_hosted.py)
        rules = (*(r for r in rules if r not in GEMINI_HOSTED_RULES), *VERTEX_HOSTED_RULES)
    return (oauth_present, *(r for r in rules if r is not api_key_present))
