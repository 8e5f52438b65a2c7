"""What Ollama's ``POST /api/chat`` refuses (its ``/v1/chat/completions`` endpoint is
OpenAI-compatible and checks its JSON only). Ollama needs no key: a local server has no
auth. Errors are ``{"error": "<message>"}``."""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of


def body_present(req: RecordedRequest) -> Rejection | None:
    """400 "missing request body" for an empty body, any other non-JSON body 400 too
    (Ollama's ChatHandler binds the JSON body first,
    https://github.com/ollama/ollama/blob/main/server/routes.go)."""
    if isinstance(req.body, dict):
        return None
    return Rejection(400, "missing request body" if not req.raw_body else "invalid JSON body")


def model_present(req: RecordedRequest) -> Rejection | None:
    """400 "model is required" (server/routes.go ChatHandler; API docs: ``model``
    required, https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion)."""
    model = body_of(req).get("model")
    return None if isinstance(model, str) and model else Rejection(400, "model is required")


NATIVE_RULES: tuple[Rule, ...] = (body_present, model_present)
OPENAI_RULES: tuple[Rule, ...] = (body_present,)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path == "/api/chat":
        return NATIVE_RULES
    return OPENAI_RULES if req.path == "/v1/chat/completions" else ()
