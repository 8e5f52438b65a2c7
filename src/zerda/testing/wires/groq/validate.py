"""What Groq's ``POST /openai/v1/chat/completions`` refuses.

Groq's API is OpenAI-compatible and documents the same message and tool rules
(https://console.groq.com/docs/openai), so OpenAI's rules apply with Groq's error shape:
``{"error": {"message", "type", "code"}}`` without ``param`` (recording
groq/pydantic-ai__test_model_name_suggestions.test_model_name_suggestion_groq__i00 shows
that shape for a 404).
"""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, bearer_present
from zerda.testing.wires.openai import validate as openai


def api_key_present(req: RecordedRequest) -> Rejection | None:
    """401 ``invalid_api_key`` without ``Authorization`` (Groq's body, quoted in
    https://console.groq.com/docs/errors: "401 Unauthorized ... invalid API key")."""
    if bearer_present(req):
        return None
    return Rejection(401, "Invalid API Key", "invalid_request_error", {"code": "invalid_api_key"})


def _without_param(rule: Rule) -> Rule:
    """An OpenAI rule answering in Groq's shape (no ``param``)."""

    def groq_rule(req: RecordedRequest) -> Rejection | None:
        rejection = rule(req)
        if rejection is None:
            return None
        fields = {k: v for k, v in (rejection.fields or {}).items() if k != "param"}
        return Rejection(
            rejection.status, rejection.message, rejection.error_type, fields, rule.__name__
        )

    groq_rule.__name__ = rule.__name__
    groq_rule.__doc__ = rule.__doc__
    return groq_rule


CHAT_RULES: tuple[Rule, ...] = (
    api_key_present,
    *(_without_param(r) for r in openai.CHAT_RULES if r is not openai.api_key_present),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return CHAT_RULES if req.path == "/openai/v1/chat/completions" else ()
