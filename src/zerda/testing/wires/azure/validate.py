"""Azure OpenAI Chat Completions: the OpenAI rules, on a deployment's path, with Azure's
authentication (an ``api-key`` header or an Entra ID ``Authorization`` bearer)."""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of, has_header
from zerda.testing.wires.openai.validate import (
    CHAT_RULES,
    api_key_present,
    web_search_options_on_search_models,
    web_search_options_valid,
)


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


def no_web_search_options(req: RecordedRequest) -> Rejection | None:
    """400 "Unrecognized request argument supplied: web_search_options" (param and code
    null): Azure's Chat Completions reference has no ``web_search_options`` (nor search
    models; its web search is the Responses API's tool,
    https://learn.microsoft.com/azure/ai-foundry/openai/how-to/web-search), and Azure
    answers a body field it does not know so (body quoted in
    https://github.com/quarkiverse/quarkus-langchain4j/issues/285)."""
    if "web_search_options" not in body_of(req):
        return None
    return Rejection(
        400,
        "Unrecognized request argument supplied: web_search_options",
        "invalid_request_error",
        {"param": None, "code": None},
    )


_NOT_AZURE = (api_key_present, web_search_options_on_search_models, web_search_options_valid)
RULES: tuple[Rule, ...] = (
    credentials_present,
    no_web_search_options,
    *(r for r in CHAT_RULES if r not in _NOT_AZURE),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return RULES if req.path.endswith("/chat/completions") else ()
