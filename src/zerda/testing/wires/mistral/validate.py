"""What Mistral's ``POST /v1/chat/completions`` refuses.

Mistral checks message order and tool-call ids more strictly than OpenAI (its open-source
validator, ``mistral_common.protocol.instruct.validator``). Errors are
``{"object": "error", "message", "type", "param", "code"}`` with Mistral's numeric codes as
strings; a request the schema refuses is a 422 with FastAPI's ``{"detail": [...]}`` body
(today's form, quoted in https://github.com/Gitlawb/openclaude/issues/739, 2026; in 2024 the
detail was wrapped in the error object, https://github.com/mistralai/client-python/issues/91).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, bearer_present, body_of, dicts, list_of
from zerda.testing.wires.openai import validate as openai

CALL_ID = re.compile(r"[a-zA-Z0-9]{9}")

# mistral_common's message-order table: the roles allowed after each role.
_NEXT_ROLES = {
    "system": ("user", "assistant", "system"),
    "user": ("assistant", "system", "user"),
    "assistant": ("assistant", "user", "tool"),
    "tool": ("assistant", "tool", "user"),
}


def _order_error(message: str) -> Rejection:
    return Rejection(400, message, "invalid_request_message_order", {"code": "3230"})


def _missing(field: str, body: Any) -> Rejection:
    detail = [{"type": "missing", "loc": ["body", field], "msg": "Field required", "input": body}]
    return Rejection(422, "Field required", body={"detail": detail})


def api_key_present(req: RecordedRequest) -> Rejection | None:
    """401 ``{"detail": "Unauthorized"}`` without ``Authorization`` (the gateway's body,
    quoted in https://github.com/agent0ai/agent-zero/issues/539 and
    https://github.com/nextcloud/integration_openai/issues/332)."""
    if bearer_present(req):
        return None
    return Rejection(401, "Unauthorized", body={"detail": "Unauthorized"})


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """422 FastAPI ``json_invalid`` when the body is not JSON, ``model_attributes_type``
    when it is JSON but not an object (FastAPI's request validation,
    https://fastapi.tiangolo.com/tutorial/handling-errors/; Mistral's 422s are FastAPI's,
    see the module docstring)."""
    if isinstance(req.body, dict):
        return None
    if req.body is None:
        message = "JSON decode error"
        error: dict[str, Any] = {"type": "json_invalid", "loc": ["body", 0], "msg": message,
                                 "input": {}, "ctx": {"error": "Expecting value"}}  # fmt: skip
    else:
        message = "Input should be a valid dictionary or object to extract fields from"
        error = {"type": "model_attributes_type", "loc": ["body"], "msg": message,
                 "input": req.body}  # fmt: skip
    return Rejection(422, message, body={"detail": [error]})


def model_present(req: RecordedRequest) -> Rejection | None:
    """422 ``Field required`` for ``body.model`` (API reference: ``model`` is required,
    https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post)."""
    body = body_of(req)
    return None if isinstance(body.get("model"), str) else _missing("model", body)


def messages_present(req: RecordedRequest) -> Rejection | None:
    """422 ``Field required`` for ``body.messages`` (API reference: required,
    https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post)."""
    body = body_of(req)
    return None if list_of(body.get("messages")) else _missing("messages", body)


def role_order(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_request_message_order`` (code 3230) for a role that may not follow the
    previous one, e.g. a tool message after a user message (body quoted in
    https://github.com/charmbracelet/crush/issues/279, "Unexpected role 'tool' after role
    'user'"). A user message right after a tool message, refused by older models
    (https://github.com/BerriAI/litellm/issues/17761), is taken by current ones (issue 33 of
    this project measured real 2xx answers to it)."""
    previous: str | None = None
    for _, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if previous in _NEXT_ROLES and role not in _NEXT_ROLES[previous]:
            return _order_error(f"Unexpected role '{role}' after role '{previous}'")
        previous = role if isinstance(role, str) else None
    return None


def last_role(req: RecordedRequest) -> Rejection | None:
    """400 (code 3230) when the last message is an assistant message without ``prefix:
    true``: "Expected last role User or Tool (or Assistant with prefix True) for serving but
    got assistant" (quoted in https://github.com/0xPlaygrounds/rig/pull/1130)."""
    messages = list_of(body_of(req).get("messages"))
    last = messages[-1] if messages else None
    if not isinstance(last, dict) or last.get("role") != "assistant" or last.get("prefix"):
        return None
    return _order_error(
        "Expected last role User or Tool (or Assistant with prefix True) for serving but got "
        "assistant"
    )


def call_ids_valid(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_function_call`` (code 3280) for a tool-call id that is not 9
    characters ``[a-zA-Z0-9]``, in an assistant's ``tool_calls`` or a tool message's
    ``tool_call_id``. Body quoted in https://github.com/editor-code-assistant/eca/issues/233
    ("Tool call id was 2968-LWy3uasib but must be a-z, A-Z, 0-9, with a length of 9.")."""
    for _, message in dicts(body_of(req).get("messages")):
        ids = [c.get("id") for _, c in dicts(message.get("tool_calls"))]
        if message.get("role") == "tool":
            ids.append(message.get("tool_call_id"))
        for call_id in ids:
            if not isinstance(call_id, str) or not CALL_ID.fullmatch(call_id):
                return Rejection(
                    400,
                    f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9.",
                    "invalid_function_call",
                    {"code": "3280"},
                )
    return None


def calls_answered(req: RecordedRequest) -> Rejection | None:
    """400 (code 3230) "Not the same number of function calls and responses" when the tool
    messages after an assistant's ``tool_calls`` are fewer than its calls (Mistral's
    open-source message validator, mistral_common,
    https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/protocol/instruct/validator.py).
    A final assistant turn with calls waits for its answers and is last_role's."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (_, message) in enumerate(messages[:-1]):
        calls = list_of(message.get("tool_calls"))
        if message.get("role") != "assistant" or not calls:
            continue
        answers = 0
        for _, later in messages[position + 1 :]:
            if later.get("role") != "tool":
                break
            answers += 1
        if answers < len(calls):
            return _order_error("Not the same number of function calls and responses")
    return None


CHAT_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    messages_present,
    role_order,
    last_role,
    calls_answered,
    call_ids_valid,
    openai.tool_names_valid,
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return CHAT_RULES if req.path == "/v1/chat/completions" else ()
