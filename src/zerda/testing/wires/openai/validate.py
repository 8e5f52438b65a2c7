"""What OpenAI's ``POST /v1/chat/completions`` refuses, one rule per function.

Groq, Mistral and Ollama's ``/v1`` endpoint reuse these rules (``wires/groq``,
``wires/mistral``, ``wires/ollama``). Error bodies are OpenAI's
``{"error": {"message", "type", "param", "code"}}``: a rule gives the message, ``param`` and
``code`` as the real API does.

The Responses API (``POST /v1/responses``, where the SDK's ``responses.create`` lands with
this row's base URL) gets the Responses rules (``wires/openai_responses/validate.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import (
    MAX_DEPTH,
    Rejection,
    Rule,
    bearer_present,
    body_of,
    dicts,
    list_of,
    number,
    schema_error,
    shown,
)

ROLES = ("system", "assistant", "user", "function", "tool", "developer")
USER_PART_TYPES = ("text", "image_url", "input_audio", "file")
IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_MAX = 64
TEMPERATURE_MAX = 2
TOOL_TYPES = ("function", "custom")
# The search models, which alone take web_search_options
# (https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat).
SEARCH_MODEL = re.compile(r"-search-(preview|api)")
CONTEXT_SIZES = ("low", "medium", "high")

# Each model's most completion tokens (the models pages' "Max output tokens",
# https://platform.openai.com/docs/models); the first pattern matching the start of the model
# id decides, and a model not listed is not checked.
MAX_OUTPUT = (
    (re.compile(r"gpt-4o-2024-05-13"), 4096),
    (re.compile(r"(chatgpt-)?gpt-4o(-mini)?(-\d{4}-\d{2}-\d{2})?$|chatgpt-4o-latest"), 16384),
    (re.compile(r"gpt-4\.1(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$"), 32768),
    (re.compile(r"gpt-3\.5-turbo"), 4096),
    (re.compile(r"gpt-4-(turbo|\d{4}-preview|1106|0125)"), 4096),
    (re.compile(r"gpt-4(-0613)?$"), 8192),
    (re.compile(r"gpt-5(\.\d)?(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$"), 128000),
    (re.compile(r"o1-mini"), 65536),
    (re.compile(r"o(1|3|4-mini|3-mini)(-\d{4}-\d{2}-\d{2})?$"), 100000),
)


def reject(
    status: int, message: str, param: str | None = None, code: str | None = None
) -> Rejection:
    return Rejection(status, message, "invalid_request_error", {"param": param, "code": code})


def api_key_present(req: RecordedRequest) -> Rejection | None:
    """401 without ``Authorization``. Seen: the body every OpenAI user meets without a key
    (https://platform.openai.com/docs/guides/error-codes, "401 - Invalid Authentication")."""
    if bearer_present(req):
        return None
    return reject(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password "
        "field (with blank username) if you're accessing the API from your browser and are "
        "prompted for a username and password. You can obtain an API key from "
        "https://platform.openai.com/account/api-keys.",
    )


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """400 when the body is not a JSON object (the API's "could not parse the JSON body"
    answer, https://platform.openai.com/docs/guides/error-codes)."""
    if isinstance(req.body, dict):
        return None
    return reject(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you "
        "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
        "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
        "this, please contact us through our help center at help.openai.com.)",
    )


def model_present(req: RecordedRequest) -> Rejection | None:
    """400 "you must provide a model parameter" (API reference: ``model`` is required,
    https://platform.openai.com/docs/api-reference/chat/create)."""
    model = body_of(req).get("model")
    if isinstance(model, str) and model:
        return None
    return reject(400, "you must provide a model parameter")


def messages_present(req: RecordedRequest) -> Rejection | None:
    """400 ``missing_required_parameter`` / ``empty_array`` for ``messages`` (API
    reference: ``messages`` is required, at least one,
    https://platform.openai.com/docs/api-reference/chat/create)."""
    body = body_of(req)
    if "messages" not in body:
        return reject(
            400, "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    if not list_of(body["messages"]):
        return reject(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got "
            "an empty array instead.",
            "messages",
            "empty_array",
        )
    return None


def roles_known(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_value`` for an unknown role (roles listed in the API reference;
    recording openai/pydantic-ai__test_openai.test_openai_o1_mini_system_role_system__i00
    shows the ``messages[0].role`` param form)."""
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
            return reject(
                400,
                f"Invalid value: '{role}'. Supported values are: {supported}.",
                f"messages[{index}].role",
                "invalid_value",
            )
    return None


def tool_messages_answer_calls(req: RecordedRequest) -> Rejection | None:
    """400 for a ``tool`` message that follows no assistant ``tool_calls``, as OpenAI
    answers (body quoted in https://github.com/simonw/llm/issues/937 and
    https://github.com/openai/openai-go/issues/43)."""
    pending: set[str] | None = None  # ids of the last assistant tool calls, None: no calls
    for index, message in dicts(body_of(req).get("messages")):
        role = message.get("role")
        if role == "tool":
            if pending is None:
                return reject(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{index}].role",
                )
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return reject(
                    400,
                    f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in "
                    "'tool_calls' of previous message.",
                    f"messages.[{index}].tool_call_id",
                )
        elif role == "assistant" and list_of(message.get("tool_calls")):
            pending = {str(c.get("id")) for _, c in dicts(message["tool_calls"])}
        else:
            pending = None
    return None


def tool_calls_answered(req: RecordedRequest) -> Rejection | None:
    """400 when an assistant ``tool_calls`` message is not followed by one ``tool`` message
    per call id (body quoted in https://github.com/microsoft/promptflow/pull/3130: "An
    assistant message with 'tool_calls' must be followed by tool messages responding to
    each 'tool_call_id'")."""
    messages = list(dicts(body_of(req).get("messages")))
    for position, (index, message) in enumerate(messages):
        if message.get("role") != "assistant" or not list_of(message.get("tool_calls")):
            continue
        wanted = [str(c.get("id")) for _, c in dicts(message["tool_calls"])]
        answered = set()
        for _, later in messages[position + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(str(later.get("tool_call_id")))
        missing = [i for i in wanted if i not in answered]
        if missing:
            return reject(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(missing)}",
                f"messages.[{index}].role",
            )
    return None


def tool_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a function name outside ``^[a-zA-Z0-9_-]+$`` or longer than 64 (API
    reference, ``tools[].function.name``: "a-z, A-Z, 0-9, or contain underscores and dashes,
    with a maximum length of 64", https://platform.openai.com/docs/api-reference/chat/create)."""
    for index, tool in dicts(body_of(req).get("tools")):
        if tool.get("type", "function") != "function":
            continue  # another type's own rule answers for it
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        rejection = tool_name_rejection(name, f"tools[{index}].function.name")
        if rejection:
            return rejection
    return None


def tool_types_known(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_value`` for a tool whose ``type`` is neither ``function`` nor
    ``custom``: Chat Completions runs no built-in tool in ``tools`` (API reference,
    ``tools``: "A list of tools the model may call. You can provide either custom tools or
    function tools", https://platform.openai.com/docs/api-reference/chat/create); its web
    search is ``web_search_options``. The answer is the API's invalid_value form (as
    ``roles_known``)."""
    for index, tool in dicts(body_of(req).get("tools")):
        kind = tool.get("type")
        if kind is not None and kind not in TOOL_TYPES:
            return reject(
                400,
                f"Invalid value: '{kind}'. Supported values are: 'function' and 'custom'.",
                f"tools[{index}].type",
                "invalid_value",
            )
    return None


def web_search_options_on_search_models(req: RecordedRequest) -> Rejection | None:
    """400 "Web search options not supported with this model." (param
    ``web_search_options``, code null) for ``web_search_options`` on a model that is not a
    search model (recording
    openai/pydantic-ai__test_openai.test_openai_web_search_tool_model_not_supported__i00,
    gpt-4o; the search models: https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat)."""
    body = body_of(req)
    if body.get("web_search_options") is None or SEARCH_MODEL.search(str(body.get("model"))):
        return None
    return reject(400, "Web search options not supported with this model.", "web_search_options")


def web_search_options_valid(req: RecordedRequest) -> Rejection | None:
    """400 for ``web_search_options`` fields the API refuses: ``search_context_size`` other
    than low, medium or high; a ``user_location`` whose ``type`` is not ``approximate`` or
    without its ``approximate`` object (API reference, ``web_search_options``,
    https://platform.openai.com/docs/api-reference/chat/create; the answers are the API's
    invalid_value and missing_required_parameter forms, as ``roles_known`` and
    ``messages_present``)."""
    options = body_of(req).get("web_search_options")
    if not isinstance(options, dict):
        return None
    size = options.get("search_context_size")
    if size is not None and size not in CONTEXT_SIZES:
        return reject(
            400,
            f"Invalid value: '{size}'. Supported values are: 'low', 'medium', and 'high'.",
            "web_search_options.search_context_size",
            "invalid_value",
        )
    return _location_rejection(options.get("user_location"))


def _location_rejection(location: Any) -> Rejection | None:
    where = "web_search_options.user_location"
    if location is None:
        return None
    if not isinstance(location, dict) or location.get("type") != "approximate":
        kind = location.get("type") if isinstance(location, dict) else location
        return reject(
            400,
            f"Invalid value: '{kind}'. Supported values are: 'approximate'.",
            f"{where}.type",
            "invalid_value",
        )
    if not isinstance(location.get("approximate"), dict):
        return reject(
            400,
            f"Missing required parameter: '{where}.approximate'.",
            f"{where}.approximate",
            "missing_required_parameter",
        )
    return None


def tool_name_rejection(name: object, param: str) -> Rejection | None:
    """The API's 400 for a name outside ``^[a-zA-Z0-9_-]+$`` or over 64 characters, at
    ``param`` (Chat Completions and Responses give the same answer)."""
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return reject(
            400,
            f"Invalid '{param}': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
            param,
            "invalid_value",
        )
    if len(name) > TOOL_NAME_MAX:
        return reject(
            400,
            f"Invalid '{param}': string too long. Expected a string with maximum length "
            f"{TOOL_NAME_MAX}, but got a string with length {len(name)} instead.",
            param,
            "string_above_max_length",
        )
    return None


def content_parts_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a content part type a message's role does not take: user messages take
    text, image_url, input_audio and file; the other roles text only. Seen: recording
    openai/pydantic-ai__test_multimodal_tool_returns.test_multimodal_tool_return_matrix_direct-binary-audio-openai_chat__i01
    ("Invalid 'messages[3]'. Content blocks are expected to be either text or image_url
    type.", ``invalid_value``)."""
    for index, message in dicts(body_of(req).get("messages")):
        allowed = USER_PART_TYPES if message.get("role") == "user" else ("text", "refusal")
        for part_index, part in dicts(message.get("content")):
            if part.get("type") not in allowed:
                return reject(
                    400,
                    f"Invalid value: '{part.get('type')}'. Supported values are: "
                    f"{', '.join(repr(a) for a in allowed)}.",
                    f"messages[{index}].content[{part_index}].type",
                    "invalid_value",
                )
    return None


def image_formats_supported(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_image_format`` for a data-URL image that is not png, jpeg, gif or
    webp (vision guide, "Image input requirements": PNG, JPEG, WEBP, non-animated GIF,
    https://platform.openai.com/docs/guides/images-vision)."""
    for _, message in dicts(body_of(req).get("messages")):
        for _, part in dicts(message.get("content")):
            url = _image_url(part)
            if url is None or not url.startswith("data:"):
                continue
            media_type = url[5:].split(";", 1)[0].split(",", 1)[0]
            if media_type.removeprefix("image/") not in IMAGE_FORMATS:
                return reject(
                    400,
                    "You uploaded an unsupported image. Please make sure your image has of one "
                    "the following formats: ['png', 'jpeg', 'gif', 'webp'].",
                    None,
                    "invalid_image_format",
                )
    return None


def _image_url(part: dict[str, Any]) -> str | None:
    if part.get("type") != "image_url":
        return None
    value = part.get("image_url")
    url = value.get("url") if isinstance(value, dict) else value
    return url if isinstance(url, str) else None


def max_tokens_within_model(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_value`` "max_tokens is too large: 20480. This model supports at most
    16384 completion tokens, whereas you provided 20480." (param ``max_tokens``; bodies
    quoted in https://github.com/tailcallhq/forgecode/issues/1185 for gpt-4o and
    https://github.com/opencode-ai/opencode/issues/140 for gpt-4.1, 32768), the same for
    ``max_completion_tokens``; the limits are the models pages' (``MAX_OUTPUT``)."""
    body = body_of(req)
    model = body.get("model")
    limit = next((n for p, n in MAX_OUTPUT if p.match(str(model))), None)
    for field in ("max_tokens", "max_completion_tokens"):
        wanted = number(body.get(field))
        if limit is not None and wanted is not None and wanted > limit:
            return reject(
                400,
                f"{field} is too large: {shown(wanted)}. This model supports at most {limit} "
                f"completion tokens, whereas you provided {shown(wanted)}.",
                field,
                "invalid_value",
            )
    return None


def range_rejection(field: str, value: float, low: float, high: float) -> Rejection | None:
    """OpenAI's answer to a number out of its range (recording
    openai-responses/pydantic-ai__test_openai_responses.test_openai_responses_model_http_error__i00:
    "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1
    instead.", ``decimal_below_min_value``)."""
    if low <= value <= high:
        return None
    if value < low:
        wording, code = (
            f"decimal below minimum value. Expected a value >= {shown(low)}",
            "below_min",
        )
    else:
        wording, code = (
            f"decimal above maximum value. Expected a value <= {shown(high)}",
            "above_max",
        )
    return reject(
        400,
        f"Invalid '{field}': {wording}, but got {shown(value)} instead.",
        field,
        f"decimal_{code}_value",
    )


def temperature_in_range(req: RecordedRequest) -> Rejection | None:
    """400 for a ``temperature`` outside 0 to 2 (API reference: "between 0 and 2",
    https://platform.openai.com/docs/api-reference/chat/create; the answer's shape is the
    recording cited on ``range_rejection``)."""
    value = number(body_of(req).get("temperature"))
    return None if value is None else range_rejection("temperature", value, 0, TEMPERATURE_MAX)


def tool_choice_needs_tools(req: RecordedRequest) -> Rejection | None:
    """400 "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are
    specified." (param ``tool_choice``) for a ``tool_choice`` without tools (API reference,
    ``tool_choice``: it controls "which (if any) tool is called",
    https://platform.openai.com/docs/api-reference/chat/create; the message is quoted in
    https://github.com/writer/writer-framework/pull/1013)."""
    body = body_of(req)
    if body.get("tool_choice") is None or list_of(body.get("tools")):
        return None
    return reject(
        400,
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
        "specified.",
        "tool_choice",
    )


def stream_options_need_stream(req: RecordedRequest) -> Rejection | None:
    """400 "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    (param ``stream_options``; API reference, ``stream_options``: "Only set this when you set
    stream: true", https://platform.openai.com/docs/api-reference/chat/create; body quoted in
    https://github.com/BerriAI/litellm/issues/5803 and
    https://github.com/lobehub/lobehub/issues/6735)."""
    body = body_of(req)
    if body.get("stream_options") is None or body.get("stream") is True:
        return None
    return reject(
        400,
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "stream_options",
    )


def schema_rejection(what: str, schema: Any, param: str, strict: bool) -> Rejection | None:
    """The API's 400 ``invalid_function_parameters`` for a tool's parameters (or a
    response format's schema) that is not an object schema, breaks the JSON Schema
    metaschema, or, with ``strict``, breaks Structured Outputs' rules (function-calling
    guide: parameters are "a JSON Schema object"; strict mode needs
    ``additionalProperties: false`` on every object and every property required,
    https://platform.openai.com/docs/guides/function-calling#strict-mode and
    https://platform.openai.com/docs/guides/structured-outputs#supported-schemas). Bodies
    quoted in https://github.com/camel-ai/camel/issues/2231 ("Invalid schema for function
    'search_documents': In context=('properties', 'body'), 'additionalProperties' is required
    to be supplied and to be false.", ``invalid_function_parameters``),
    https://github.com/lastmile-ai/openai-agents-mcp/issues/2 (Responses, param
    ``tools[22].parameters``) and https://github.com/dottxt-ai/outlines/issues/844
    (``response_format``, code null)."""
    if not isinstance(schema, dict):
        return None
    problem = None
    if schema.get("type", "object") != "object":
        problem = f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema.get('type')}\"'."
    elif (error := schema_error(schema)) is not None:
        problem = f"In context={_context(error[0])}, {error[1]}."
    elif strict:
        problem = _strict_problem(schema, (), 0)
    if problem is None:
        return None
    code = "invalid_function_parameters" if what.startswith("function") else None
    return reject(400, f"Invalid schema for {what}: {problem}", param, code)


def _context(pointer: str) -> str:
    """``/properties/a/type`` as the API's ``('properties', 'a')`` (the failing keyword is
    left out, as in its messages)."""
    parts = tuple(p for p in pointer.split("/")[1:-1])
    return repr(parts) if len(parts) != 1 else f"('{parts[0]}',)"


def _strict_problem(schema: dict[str, Any], where: tuple[str, ...], depth: int) -> str | None:
    """The first Structured Outputs rule an object schema (and those inside) breaks."""
    if depth > MAX_DEPTH:
        return None
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, dict):
        if schema.get("additionalProperties") is not False:
            return (
                f"In context={where!r}, 'additionalProperties' is required to be supplied and "
                "to be false."
            )
        keys = list(properties) if isinstance(properties, dict) else []
        missing = [k for k in keys if k not in list_of(schema.get("required"))]
        if missing:
            return (
                f"In context={where!r}, 'required' is required to be supplied and to be an "
                f"array including every key in properties. Missing '{missing[0]}'."
            )
    for key, child in _children(schema):
        problem = _strict_problem(child, (*where, *key), depth + 1)
        if problem:
            return problem
    return None


def _children(schema: dict[str, Any]) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    out: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    for group in ("properties", "$defs", "definitions"):
        members = schema.get(group)
        if isinstance(members, dict):
            out += [((group, k), v) for k, v in members.items() if isinstance(v, dict)]
    if isinstance(schema.get("items"), dict):
        out.append((("items",), schema["items"]))
    for group in ("anyOf", "allOf"):
        out += [((group, str(i)), v) for i, v in dicts(schema.get(group))]
    return out


def tool_schemas_valid(req: RecordedRequest) -> Rejection | None:
    """400 ``invalid_function_parameters`` for a function's ``parameters`` that the API
    refuses (``schema_rejection``), strict rules when ``function.strict`` is true (API
    reference, ``tools[].function.parameters`` and ``strict``,
    https://platform.openai.com/docs/api-reference/chat/create)."""
    for index, tool in dicts(body_of(req).get("tools")):
        function = tool.get("function")
        if not isinstance(function, dict):
            continue
        rejection = schema_rejection(
            f"function '{function.get('name')}'",
            function.get("parameters"),
            f"tools[{index}].function.parameters",
            function.get("strict") is True,
        )
        if rejection:
            return rejection
    return None


def response_format_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a ``response_format`` json_schema whose schema the API refuses, strict
    rules when ``strict`` is true (``schema_rejection``; structured-outputs guide,
    https://platform.openai.com/docs/guides/structured-outputs)."""
    fmt = body_of(req).get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    spec = fmt.get("json_schema")
    if not isinstance(spec, dict):
        return None
    return schema_rejection(
        f"response_format '{spec.get('name')}'",
        spec.get("schema"),
        "response_format",
        spec.get("strict") is True,
    )


CHAT_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    model_present,
    messages_present,
    max_tokens_within_model,
    temperature_in_range,
    stream_options_need_stream,
    roles_known,
    tool_messages_answer_calls,
    tool_calls_answered,
    tool_types_known,
    tool_names_valid,
    web_search_options_on_search_models,
    web_search_options_valid,
    tool_choice_needs_tools,
    tool_schemas_valid,
    response_format_valid,
    content_parts_valid,
    image_formats_supported,
)

# Endpoint -> rules.
_RULES_BY_PATH: dict[str, tuple[Rule, ...]] = {"/v1/chat/completions": CHAT_RULES}


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path == "/v1/responses":
        # Imported here: the Responses rules build on this module's.
        from zerda.testing.wires.openai_responses.validate import RULES as RESPONSES_RULES

        return RESPONSES_RULES
    return _RULES_BY_PATH.get(req.path, ())
