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
from zerda.testing._validate import Rejection, Rule, bearer_present, body_of, dicts, number
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


# The properties a message takes, per role (API reference, ``messages``:
# https://console.groq.com/docs/api-reference#chat-create); ``reasoning`` is the text an
# assistant turn came back with (https://console.groq.com/docs/reasoning).
MESSAGE_FIELDS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "function_call", "reasoning"},
    "tool": {"role", "content", "name", "tool_call_id"},
    "function": {"role", "content", "name"},
}


def _groq_error(message: str) -> Rejection:
    """Groq's schema answer: ``invalid_request_error`` without code or param."""
    return Rejection(400, message, "invalid_request_error")


def n_is_one(req: RecordedRequest) -> Rejection | None:
    """400 "'n' : number must be at most 1" (API reference, ``n``: "Only n=1 is supported",
    https://console.groq.com/docs/api-reference#chat-create; OpenAI compatibility page,
    https://console.groq.com/docs/openai: "n ... only 1 is supported")."""
    value = number(body_of(req).get("n"))
    if value is None or value <= 1:
        return None
    return _groq_error("'n' : number must be at most 1")


def message_fields_known(req: RecordedRequest) -> Rejection | None:
    """400 "'messages.1' : for 'role:user' the following must be satisfied[('messages.1' :
    property 'timestamp' is unsupported)]" for a property a message of that role does not
    have (the per-role properties of the API reference above; Groq's schema validator
    answers so, as the compatibility page warns: "unsupported fields ... will result in a
    400 error", https://console.groq.com/docs/openai)."""
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        known = MESSAGE_FIELDS.get(role) if isinstance(role, str) else None
        extra = sorted(k for k in message if known is not None and k not in known)
        if extra:
            where = f"messages.{index}"
            return _groq_error(
                f"'{where}' : for 'role:{role}' the following must be satisfied[('{where}' : "
                f"property '{extra[0]}' is unsupported)]"
            )
    return None


# Groq's tool types (its SDK's ChatCompletionToolParam: "`function`, `browser_search`, and
# `code_interpreter` are supported") and the Compound tool identifiers
# (https://console.groq.com/docs/compound/built-in-tools, "Identifier").
TOOL_TYPES = ("function", "browser_search", "code_interpreter")
COMPOUND_TOOLS = (
    "web_search",
    "visit_website",
    "browser_automation",
    "code_interpreter",
    "wolfram_alpha",
)


def _not_one_of(where: str, value: object, allowed: tuple[str, ...]) -> Rejection:
    """Groq's schema answer for a value outside an enumeration, in the form its validator
    gives for the other schema rules (``message_fields_known``)."""
    listed = ", ".join(f"'{a}'" for a in allowed)
    return _groq_error(f"'{where}' : value must be one of [{listed}], got '{value}'")


def tool_types_known(req: RecordedRequest) -> Rejection | None:
    """400 for a tool whose ``type`` is not one Groq runs: ``function``, or the built-in
    ``browser_search`` (https://console.groq.com/docs/browser-search) and
    ``code_interpreter`` (https://console.groq.com/docs/code-execution)."""
    for index, tool in dicts(body_of(req).get("tools")):
        kind = tool.get("type")
        if kind is not None and kind not in TOOL_TYPES:
            return _not_one_of(f"tools.{index}.type", kind, TOOL_TYPES)
    return None


def compound_tools_known(req: RecordedRequest) -> Rejection | None:
    """400 for a ``compound_custom.tools.enabled_tools`` entry that is no Compound tool's
    identifier (https://console.groq.com/docs/compound/built-in-tools)."""
    custom = body_of(req).get("compound_custom")
    tools = custom.get("tools") if isinstance(custom, dict) else None
    enabled = tools.get("enabled_tools") if isinstance(tools, dict) else None
    for index, name in enumerate(enabled if isinstance(enabled, list) else []):
        if name not in COMPOUND_TOOLS:
            where = f"compound_custom.tools.enabled_tools.{index}"
            return _not_one_of(where, name, COMPOUND_TOOLS)
    return None


# OpenAI's model limits name OpenAI's models; Groq's are its own, and so are its tool types
# and its search (no web_search_options: Compound and browser_search search instead).
_NOT_GROQ = (
    openai.api_key_present,
    openai.max_tokens_within_model,
    openai.tool_types_known,
    openai.web_search_options_on_search_models,
    openai.web_search_options_valid,
)
CHAT_RULES: tuple[Rule, ...] = (
    api_key_present,
    n_is_one,
    message_fields_known,
    tool_types_known,
    compound_tools_known,
    *(_without_param(r) for r in openai.CHAT_RULES if r not in _NOT_GROQ),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return CHAT_RULES if req.path == "/openai/v1/chat/completions" else ()
