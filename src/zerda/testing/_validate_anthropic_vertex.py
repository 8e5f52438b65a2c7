"""Claude on Vertex AI (``rawPredict`` / ``streamRawPredict``): the Messages API's rules,
except that the model is named by the path, not the body
(https://docs.anthropic.com/en/api/claude-on-vertex-ai)."""

from __future__ import annotations

from collections.abc import Sequence

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rule
from zerda.testing._validate_anthropic import MESSAGES_RULES, model_present

RULES: tuple[Rule, ...] = tuple(r for r in MESSAGES_RULES if r is not model_present)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return RULES if "Predict" in req.path or "/invoke" in req.path else ()
