"""The OpenAI Responses API (``POST /v1/responses``): what it refuses in ``input``.

Authentication, the JSON body and the model are checked as on Chat Completions
(``wires/openai/validate.py``); the history rules are the Responses API's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of, dicts
from zerda.testing.wires.openai.validate import (
    api_key_present,
    json_object_body,
    model_present,
    reject,
    schema_rejection,
    temperature_in_range,
    tool_name_rejection,
)
from zerda.testing.wires.openai_responses.hosted_rules import (
    hosted_items_complete,
    hosted_tools_valid,
)

# Content part types per place (API reference, "input" item list:
# https://platform.openai.com/docs/api-reference/responses/create#responses-create-input).
INPUT_PARTS = ("input_text", "input_image", "input_file")
ASSISTANT_PARTS = ("output_text", "refusal")
TEXT_FORMATS = ("text", "json_object", "json_schema")


def _items(req: RecordedRequest) -> list[Any]:
    items = body_of(req).get("input")
    return items if isinstance(items, list) else []


def _stateful(req: RecordedRequest) -> bool:
    """Whether earlier items live on the server: ``previous_response_id`` or
    ``conversation`` (conversation-state guide,
    https://platform.openai.com/docs/guides/conversation-state)."""
    body = body_of(req)
    return bool(body.get("previous_response_id") or body.get("conversation"))


def outputs_answer_calls(req: RecordedRequest) -> Rejection | None:
    """400 "No tool call found for function call output with call_id …" (param ``input``)
    for a ``function_call_output`` no earlier call item announced. The body is quoted in
    https://github.com/vercel/ai/issues/8216. Any item carrying a ``call_id`` that is not an
    output is a call (``tool_search_call`` answered by a function_call_output: recording
    openai-responses/pydantic-ai__test_tool_availability_portability.test_tool_availability_portability_matrix_R5-T3-native-search__i00),
    and with ``previous_response_id`` / ``conversation`` the call may be held by the server
    (recording openai-responses/pydantic-ai__test_openai_responses.test_openai_conversation_id_tool_call_continuation__i02)."""
    if _stateful(req):
        return None
    called: set[Any] = set()
    for item in _items(req):
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(kind, str) and "call_id" in item and not kind.endswith("_output"):
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
    test_openai_responses.test_openai_responses_thinking_with_modified_history__i01. A
    reasoning item without an id, or any in a stateless request (``store: false``, its
    ``encrypted_content`` carried back: reasoning guide,
    https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items), names no
    stored item to pair with and is taken."""
    items = _items(req)
    if body_of(req).get("store") is False:
        return None
    for i, item in enumerate(items):
        if not (isinstance(item, dict) and item.get("type") == "reasoning" and item.get("id")):
            continue
        following = items[i + 1] if i + 1 < len(items) else None
        if not (isinstance(following, dict) and following.get("id")):
            message = (
                f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                "required following item."
            )
            return reject(400, message, "input")
    return None


def _supported(kind: Any, allowed: Sequence[str], param: str) -> Rejection | None:
    if kind in allowed:
        return None
    names = [repr(a) for a in allowed]
    listed = f"{', '.join(names[:-1])}, and {names[-1]}" if len(names) > 2 else " and ".join(names)
    return reject(
        400, f"Invalid value: '{kind}'. Supported values are: {listed}.", param, "invalid_value"
    )


def content_parts_valid(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_value`` for a content part a place does not take: user, system and
    developer messages take input_text / input_image / input_file, assistant messages
    output_text / refusal ("Invalid value: 'input_text'. Supported values are:
    'output_text' and 'refusal'." at ``input[2].content[0]``, quoted in
    https://github.com/jeremychone/rust-genai/pull/119), a function_call_output's list the
    input parts (https://github.com/querymt/querymt/issues/953 quotes the same answer for
    'output_text' there)."""
    for index, item in dicts(body_of(req).get("input")):
        kind = item.get("type", "message")
        if kind == "message":
            allowed = ASSISTANT_PARTS if item.get("role") == "assistant" else INPUT_PARTS
            parts, where = item.get("content"), f"input[{index}].content"
        elif kind == "function_call_output":
            allowed, parts, where = INPUT_PARTS, item.get("output"), f"input[{index}].output"
        else:
            continue
        for part_index, part in dicts(parts):
            rejection = _supported(part.get("type"), allowed, f"{where}[{part_index}]")
            if rejection is not None:
                return rejection
    return None


def function_tools_valid(req: RecordedRequest) -> Rejection | None:
    """400 ``missing_required_parameter`` "Missing required parameter: 'tools[4].name'."
    for a function tool without a top-level ``name`` (a Chat Completions tool, its name
    under ``function``; the body is quoted in
    https://github.com/icebear0828/codex-proxy/issues/399), and the Chat Completions name
    rule (``^[a-zA-Z0-9_-]+$``, at most 64) on ``tools[].name``."""
    for index, tool in dicts(body_of(req).get("tools")):
        if tool.get("type") != "function":
            continue
        name, param = tool.get("name"), f"tools[{index}].name"
        if name is None:
            return reject(
                400, f"Missing required parameter: '{param}'.", param, "missing_required_parameter"
            )
        rejection = tool_name_rejection(name, param)
        if rejection:
            return rejection
    return None


def text_format_valid(req: RecordedRequest) -> Rejection | None:
    """``text.format`` is text, json_object or a json_schema format with its ``name`` and
    ``schema`` beside ``type`` (not under ``json_schema`` as in Chat Completions'
    response_format): https://platform.openai.com/docs/api-reference/responses/create#responses-create-text
    and https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses; the
    missing-parameter answer is the API's usual one (see function_tools_valid)."""
    text = body_of(req).get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict):
        return None
    rejection = _supported(fmt.get("type"), TEXT_FORMATS, "text.format.type")
    if rejection is not None or fmt.get("type") != "json_schema":
        return rejection
    for field in ("name", "schema"):
        if field not in fmt:
            param = f"text.format.{field}"
            return reject(
                400, f"Missing required parameter: '{param}'.", param, "missing_required_parameter"
            )
    return None


def chat_items_refused(req: RecordedRequest) -> Rejection | None:
    """400 ``unknown_parameter`` "Unknown parameter: 'input[1].tool_calls'." for a Chat
    Completions message in ``input``: an assistant's ``tool_calls`` or a tool message's
    ``tool_call_id`` (Responses takes ``function_call`` / ``function_call_output`` items:
    https://platform.openai.com/docs/guides/function-calling?api-mode=responses; OpenAI's
    answer to a field an item does not take, as quoted for ``input[3].status`` in
    https://github.com/1jehuang/jcode/issues/1028)."""
    for index, item in dicts(body_of(req).get("input")):
        if item.get("type", "message") != "message":
            continue
        for field in ("tool_calls", "tool_call_id", "function_call"):
            if field in item:
                param = f"input[{index}].{field}"
                return reject(400, f"Unknown parameter: '{param}'.", param, "unknown_parameter")
    return None


def tool_choice_needs_tools(req: RecordedRequest) -> Rejection | None:
    """400 "Tool choice 'required' must be specified with 'tools' parameter." (param
    ``tool_choice``) for a ``tool_choice`` that forces a call with no tools (API reference,
    ``tool_choice``, https://platform.openai.com/docs/api-reference/responses/create);
    ``"auto"`` without tools is taken (recording
    openai-responses/pydantic-ai__test_tool_availability_portability.test_tool_availability_portability_matrix_R5-T3-native-search__i00
    sends it with tools; the 200s show ``auto`` alone is fine)."""
    body = body_of(req)
    choice = body.get("tool_choice")
    if choice in (None, "auto", "none") or body.get("tools"):
        return None
    kind = choice if isinstance(choice, str) else "required"
    return reject(400, f"Tool choice '{kind}' must be specified with 'tools' parameter.",
                  "tool_choice")  # fmt: skip


def tool_schemas_valid(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_function_parameters`` for a function tool's ``parameters`` that the API
    refuses: not an object schema, not a JSON Schema, or with ``strict: true`` breaking
    Structured Outputs' rules (``schema_rejection`` in wires/openai/validate.py; the
    Responses form, param ``tools[22].parameters``, is quoted in
    https://github.com/lastmile-ai/openai-agents-mcp/issues/2)."""
    for index, tool in dicts(body_of(req).get("tools")):
        if tool.get("type") != "function":
            continue
        rejection = schema_rejection(
            f"function '{tool.get('name')}'",
            tool.get("parameters"),
            f"tools[{index}].parameters",
            tool.get("strict") is True,
        )
        if rejection:
            return rejection
    return None


def text_format_schema_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a ``text.format`` json_schema whose schema the API refuses (strict rules
    with ``strict: true``; structured-outputs guide,
    https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses)."""
    text = body_of(req).get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    return schema_rejection(
        f"response_format '{fmt.get('name')}'",
        fmt.get("schema"),
        "text.format.schema",
        fmt.get("strict") is True,
    )


RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    temperature_in_range,
    chat_items_refused,
    outputs_answer_calls,
    calls_answered,
    reasoning_followed,
    content_parts_valid,
    function_tools_valid,
    tool_choice_needs_tools,
    tool_schemas_valid,
    text_format_valid,
    text_format_schema_valid,
    hosted_tools_valid,
    hosted_items_complete,
)


# --- POST /v1/responses/input_tokens ----------------------------------------------------

# What responses.create takes and the counting endpoint has no field for (its body: model,
# input, instructions, tools, tool_choice, parallel_tool_calls, reasoning, text, truncation,
# conversation, previous_response_id:
# https://platform.openai.com/docs/api-reference/responses/input-tokens).
NOT_COUNTED = (
    "store",
    "include",
    "max_output_tokens",
    "stream",
    "temperature",
    "top_p",
    "background",
    "metadata",
    "service_tier",
)


def count_fields_known(req: RecordedRequest) -> Rejection | None:
    """400 ``unknown_parameter`` "Unknown parameter: 'store'." (param ``store``) for a
    generation setting sent to the counting endpoint: OpenAI's answer to a field an
    endpoint does not take (quoted in https://github.com/pydantic/pydantic-ai/issues/3653
    and https://github.com/teabranch/open-responses-server/issues/41)."""
    body = body_of(req)
    for field in NOT_COUNTED:
        if field in body:
            return reject(400, f"Unknown parameter: '{field}'.", field, "unknown_parameter")
    return None


# Every field is optional there (the reference above): the model too.
COUNT_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    count_fields_known,
    outputs_answer_calls,
    content_parts_valid,
    function_tools_valid,
    hosted_tools_valid,
    text_format_valid,
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path.endswith("/responses/input_tokens"):
        return COUNT_RULES
    return RULES if req.path.endswith("/responses") else ()
