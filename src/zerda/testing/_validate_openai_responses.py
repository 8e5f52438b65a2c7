"""The OpenAI Responses API (``POST /v1/responses``): what it refuses in ``input``.

Authentication, the JSON body and the model are checked as on Chat Completions
(``_validate_openai``); the history rules are the Responses API's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of
from zerda.testing._validate_openai import (
    api_key_present,
    json_object_body,
    model_present,
    reject,
)


def _items(req: RecordedRequest) -> list[Any]:
    items = body_of(req).get("input")
    return items if isinstance(items, list) else []


def outputs_answer_calls(req: RecordedRequest) -> Rejection | None:
    """400 "No tool call found for function call output with call_id …" (param ``input``)
    for a ``function_call_output`` no earlier ``function_call`` item announced. The body is
    quoted in https://github.com/vercel/ai/issues/8216."""
    called: set[Any] = set()
    for item in _items(req):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "function_call":
            called.add(item.get("call_id"))
        elif kind == "function_call_output" and item.get("call_id") not in called:
            message = (
                f"No tool call found for function call output with call_id {item.get('call_id')}."
            )
            return reject(400, message, "input")
    return None


def calls_answered(req: RecordedRequest) -> Rejection | None:
    """400 "No tool output found for function call …" for a ``function_call`` with no
    ``function_call_output`` after it (reported with that text, e.g.
    https://github.com/openai/codex/issues/46193)."""
    answered: set[Any] = set()
    for item in reversed(_items(req)):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "function_call_output":
            answered.add(item.get("call_id"))
        elif kind == "function_call" and item.get("call_id") not in answered:
            return reject(
                400, f"No tool output found for function call {item.get('call_id')}.", "input"
            )
    return None


def reasoning_followed(req: RecordedRequest) -> Rejection | None:
    """400 "Item 'rs_…' of type 'reasoning' was provided without its required following
    item." for a reasoning item that is last or followed by an item without its id (an
    ``{"role", "content"}`` message). Seen: recording openai-responses/pydantic-ai__
    test_openai_responses.test_openai_responses_thinking_with_modified_history__i01."""
    items = _items(req)
    for i, item in enumerate(items):
        if not (isinstance(item, dict) and item.get("type") == "reasoning"):
            continue
        following = items[i + 1] if i + 1 < len(items) else None
        if not (isinstance(following, dict) and following.get("id")):
            message = (
                f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                "required following item."
            )
            return reject(400, message, "input")
    return None


RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    outputs_answer_calls,
    calls_answered,
    reasoning_followed,
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return RULES if req.path.endswith("/responses") else ()
