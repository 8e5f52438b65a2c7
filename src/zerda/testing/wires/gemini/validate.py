"""What the Gemini Developer API's ``generateContent`` / ``streamGenerateContent`` refuse.

Errors are Google's ``{"error": {"code", "message", "status"}}`` (recordings
gemini/pydantic-ai__test_model_name_suggestions.test_model_name_suggestion_google__i00 and
gemini/langchaingo__llms.googleai.TestGoogleAIErrorHandling__i00). The REST API reads both
JSON spellings of a field (``functionDeclarations`` and ``function_declarations``); error
messages name fields in snake_case, as Google's do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import (
    MAX_DEPTH,
    Rejection,
    Rule,
    base64_size,
    body_of,
    dicts,
    has_header,
    number,
    shown,
)
from zerda.testing.wires.gemini.validate_hosted import GEMINI_RULES as GEMINI_HOSTED_RULES

# google.ai.generativelanguage.v1beta.Schema's fields, in both JSON spellings.
SCHEMA_FIELDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
        "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
        "maximum", "max_items", "min_items", "min_properties", "max_properties", "min_length",
        "max_length", "any_of", "property_ordering",
    }
)  # fmt: skip
FUNCTION_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}")
REQUEST_MAX_BYTES = 20 * 1024 * 1024
# google.ai.generativelanguage.v1beta.Type's values (https://ai.google.dev/api/caching#Type);
# the JSON parser takes an enum's name in any case.
TYPES = frozenset({"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"})
TYPES |= {"NULL"}
TEMPERATURE_MAX = 2
# Each model's most output tokens (models page, "Output token limit",
# https://ai.google.dev/gemini-api/docs/models); models not listed are not checked.
MAX_OUTPUT = (
    (re.compile(r"gemini-(2\.5|3)"), 65536),
    (re.compile(r"gemini-(2\.0|1\.5)-"), 8192),
)


def invalid(message: str, details: list[dict[str, Any]] | None = None) -> Rejection:
    fields = {"details": details} if details else None
    return Rejection(400, message, "INVALID_ARGUMENT", fields)


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj.get(camel, obj.get(snake))


def api_key_present(req: RecordedRequest) -> Rejection | None:
    """403 ``PERMISSION_DENIED`` without ``x-goog-api-key``, a ``key`` query parameter or
    OAuth ``Authorization``. Seen: recording
    gemini/langchaingo__llms.googleai.TestGoogleAIErrorHandling__i00 (this exact body)."""
    if has_header(req, "x-goog-api-key", "authorization") or req.query.get("key"):
        return None
    return Rejection(
        403,
        "Method doesn't allow unregistered callers (callers without established identity). "
        "Please use API Key or other form of API consumer identity to call this API.",
        "PERMISSION_DENIED",
    )


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """400 ``INVALID_ARGUMENT`` "Invalid JSON payload received. Unexpected token." for a
    body that is not a JSON object, as Google's API front end answers (quoted in
    https://github.com/googlecodelabs/feedback/issues/299)."""
    if isinstance(req.body, dict):
        return None
    return invalid("Invalid JSON payload received. Unexpected token.")


def request_size(req: RecordedRequest) -> Rejection | None:
    """400 over 20 MB of request (inline data limit: "the total request size must be less
    than 20MB", https://ai.google.dev/gemini-api/docs/image-understanding)."""
    if len(req.raw_body) <= REQUEST_MAX_BYTES:
        return None
    return invalid(f"Request payload size exceeds the limit: {REQUEST_MAX_BYTES} bytes.")


def _contents(req: RecordedRequest) -> list[tuple[int, dict[str, Any]]]:
    return list(dicts(body_of(req).get("contents")))


def contents_present(req: RecordedRequest) -> Rejection | None:
    """400 "* GenerateContentRequest.contents: contents is not specified" (API reference:
    ``contents`` is required, https://ai.google.dev/api/generate-content)."""
    if _contents(req):
        return None
    return invalid("* GenerateContentRequest.contents: contents is not specified\n")


def roles_valid(req: RecordedRequest) -> Rejection | None:
    """400 "Please use a valid role: user, model." (API reference, ``Content.role``: "Must
    be either 'user' or 'model'", https://ai.google.dev/api/caching#Content)."""
    for _, content in _contents(req):
        if content.get("role") not in (None, "user", "model"):
            return invalid("Please use a valid role: user, model.")
    return None


def _parts(content: dict[str, Any], camel: str, snake: str) -> list[dict[str, Any]]:
    return [p for _, p in dicts(content.get("parts")) if isinstance(_get(p, camel, snake), dict)]


def _merged(req: RecordedRequest) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """(first index, role, parts) with consecutive contents of one role as one turn, as the
    API reads them (recordings
    gemini/pydantic-ai__test_tool_search.test_cross_provider_capability_replay_google-gemini-3-flash-preview-openai-responses-gpt-5.4__i01
    and __i02: two model contents in a row, their calls answered by the next user content);
    a content without a role is the user's (``Content.role``,
    https://ai.google.dev/api/caching#Content)."""
    turns: list[tuple[int, str, list[dict[str, Any]]]] = []
    for index, content in _contents(req):
        role = "model" if content.get("role") == "model" else "user"
        parts = [p for _, p in dicts(content.get("parts"))]
        if turns and turns[-1][1] == role:
            turns[-1][2].extend(parts)
        else:
            turns.append((index, role, parts))
    return turns


def _with(parts: list[dict[str, Any]], camel: str, snake: str) -> list[dict[str, Any]]:
    return [p for p in parts if isinstance(_get(p, camel, snake), dict)]


def function_calls_follow_user(req: RecordedRequest) -> Rejection | None:
    """400 "Please ensure that function call turn comes immediately after a user turn or
    after a function response turn." (function-calling guide,
    https://ai.google.dev/gemini-api/docs/function-calling)."""
    turns = _merged(req)
    for position, (_, role, parts) in enumerate(turns):
        if role == "model" and _with(parts, "functionCall", "function_call") and position == 0:
            return invalid(
                "Please ensure that function call turn comes immediately after a user turn "
                "or after a function response turn."
            )
    return None


def function_responses_match_calls(req: RecordedRequest) -> Rejection | None:
    """400 "Please ensure that the number of function response parts is equal to the number
    of function call parts of the function call turn." (quoted in
    https://github.com/google-gemini/gemini-cli/issues/16984)."""
    turns = _merged(req)
    for position, (_, _, parts) in enumerate(turns[:-1]):
        calls = _with(parts, "functionCall", "function_call")
        if not calls:
            continue
        responses = _with(turns[position + 1][2], "functionResponse", "function_response")
        if len(responses) != len(calls):
            return invalid(
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
    return None


def function_responses_follow_calls(req: RecordedRequest) -> Rejection | None:
    """400 "Please ensure that function response turn comes immediately after a function
    call turn." for function responses whose previous turn made no function call
    (function-calling guide, https://ai.google.dev/gemini-api/docs/function-calling; body
    quoted in https://github.com/GoogleCloudPlatform/generative-ai/pull/368 and
    https://github.com/langchain-ai/langchain/issues/27799)."""
    turns = _merged(req)
    for position, (_, _, parts) in enumerate(turns):
        if not _with(parts, "functionResponse", "function_response"):
            continue
        previous = turns[position - 1][2] if position else []
        if not _with(previous, "functionCall", "function_call"):
            return invalid(
                "Please ensure that function response turn comes immediately after a function "
                "call turn."
            )
    return None


def parts_not_empty(req: RecordedRequest) -> Rejection | None:
    """400 "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty."
    for a content without parts (``Content.parts`` holds "Ordered Parts that constitute a
    single message", https://ai.google.dev/api/caching#Content; body quoted in
    https://github.com/egoist/chatwise-releases/issues/250)."""
    for index, content in _contents(req):
        if not content.get("parts"):
            return invalid(
                f"* GenerateContentRequest.contents[{index}].parts: contents.parts must not be "
                "empty.\n"
            )
    return None


def _declarations(req: RecordedRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    for tool_index, tool in dicts(body_of(req).get("tools")):
        declared = _get(tool, "functionDeclarations", "function_declarations")
        for index, declaration in dicts(declared):
            yield f"tools[{tool_index}].function_declarations[{index}]", declaration


def function_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a function name that does not start with a letter or underscore, or holds
    other characters than letters, digits, ``_ . : -``, or is over 128 characters (API
    reference, ``FunctionDeclaration.name``: "a-z, A-Z, 0-9, or contain underscores,
    colons, dots, and dashes, with a maximum length of 128",
    https://ai.google.dev/api/caching#FunctionDeclaration)."""
    for path, declaration in _declarations(req):
        name = declaration.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.fullmatch(name):
            return invalid(
                f"* GenerateContentRequest.{path}.name: Invalid function name. Must start with "
                "a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores "
                "(_), dots (.), colons (:) or dashes (-), with a maximum length of 128.\n"
            )
    return None


def schema_fields_known(req: RecordedRequest) -> Rejection | None:
    """400 "Invalid JSON payload received. Unknown name "additionalProperties" at
    'tools[0].function_declarations[0].parameters': Cannot find field." for a key
    ``Schema`` does not have, in ``parameters`` and ``responseSchema`` (``Schema``
    reference, https://ai.google.dev/api/caching#Schema; body quoted in
    https://github.com/BerriAI/litellm/issues/14330). ``parametersJsonSchema`` and
    ``responseJsonSchema`` take any JSON Schema and are not checked."""
    violations: list[tuple[str, str]] = []
    for path, declaration in _declarations(req):
        schema = declaration.get("parameters")
        if isinstance(schema, dict):
            violations.extend(_unknown_fields(schema, f"{path}.parameters", 0))
    config = _get(body_of(req), "generationConfig", "generation_config")
    if isinstance(config, dict):
        schema = _get(config, "responseSchema", "response_schema")
        if isinstance(schema, dict):
            violations.extend(_unknown_fields(schema, "generation_config.response_schema", 0))
    if not violations:
        return None
    lines = [
        f"Invalid JSON payload received. Unknown name \"{name}\" at '{where}': Cannot find field."
        for name, where in violations
    ]
    details = [
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [
                {"field": where, "description": line}
                for (_, where), line in zip(violations, lines, strict=True)
            ],
        }
    ]
    return invalid("\n".join(lines), details)


def _unknown_fields(schema: dict[str, Any], where: str, depth: int) -> list[tuple[str, str]]:
    """(name, path) of every unknown key, depth first, paths in Google's form
    (``properties[0].value``, ``items``, ``any_of[1]``)."""
    if depth > MAX_DEPTH:
        return []
    out = [(key, where) for key in schema if key not in SCHEMA_FIELDS]
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for index, value in enumerate(properties.values()):
            if isinstance(value, dict):
                out.extend(_unknown_fields(value, f"{where}.properties[{index}].value", depth + 1))
    items = schema.get("items")
    if isinstance(items, dict):
        out.extend(_unknown_fields(items, f"{where}.items", depth + 1))
    for index, branch in dicts(_get(schema, "anyOf", "any_of")):
        out.extend(_unknown_fields(branch, f"{where}.any_of[{index}]", depth + 1))
    return out


def inline_data_valid(req: RecordedRequest) -> Rejection | None:
    """400 for an ``inlineData`` part without a ``mimeType`` or with empty data (API
    reference, ``Blob``: ``mimeType`` and ``data`` are required,
    https://ai.google.dev/api/caching#Blob)."""
    for _, content in _contents(req):
        for part in _parts(content, "inlineData", "inline_data"):
            blob = _get(part, "inlineData", "inline_data")
            mime = _get(blob, "mimeType", "mime_type")
            data = blob.get("data")
            if not isinstance(mime, str) or not mime or not isinstance(data, str):
                return invalid("* GenerateContentRequest.contents.parts.inline_data: Required.\n")
            if base64_size(data) == 0:
                return invalid("Unable to submit request because it has an empty inlineData.")
    return None


def _model(req: RecordedRequest) -> str:
    """``gemini-3-flash-preview`` from ``/v1beta/models/gemini-3-flash-preview:generateContent``."""
    return req.path.rsplit("/models/", 1)[-1].split(":", 1)[0]


def _current_turn(contents: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The contents after the last user message that is not only function responses: the
    "current turn" whose steps Gemini 3 validates."""
    start = 0
    for position, (_, content) in enumerate(contents):
        parts = [p for _, p in dicts(content.get("parts"))]
        answers = _parts(content, "functionResponse", "function_response")
        if content.get("role") != "model" and len(answers) < len(parts):
            start = position + 1
    return contents[start:]


def function_calls_signed(req: RecordedRequest) -> Rejection | None:
    """400 on Gemini 3 models when the first function call of a step of the current turn
    has no ``thoughtSignature`` ("Strict validation is enforced on all function calling
    steps in the current turn ... only the first function call of a step needs the
    signature", https://ai.google.dev/gemini-api/docs/thought-signatures). Body quoted in
    https://github.com/nearai/ironclaw/issues/1510 and
    https://github.com/nanbingxyz/5ire/issues/405 (``position`` counts contents from 1)."""
    if not _model(req).startswith("gemini-3"):
        return None
    for index, content in _current_turn(_contents(req)):
        calls = _parts(content, "functionCall", "function_call")
        if content.get("role") != "model" or not calls:
            continue
        if _get(calls[0], "thoughtSignature", "thought_signature"):
            continue
        name = _get(calls[0], "functionCall", "function_call").get("name")
        return invalid(
            "Function call is missing a thought_signature in functionCall parts. This is "
            "required for tools to work correctly, and missing thought_signature may lead to "
            f"degraded model performance. Additional data, function call `default_api:{name}` "
            f", position {index + 1}. Please refer to "
            "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
        )
    return None


def schema_values_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a ``Schema`` the API refuses: a ``type`` that is not a ``Type`` name
    ('Invalid value at '...parameters.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "objet"',
    https://ai.google.dev/api/caching#Type), an ``enum`` on a non-string schema ("only
    allowed for STRING type"), a ``required`` that is not a list of declared properties
    ("property is not defined"); a function's ``parameters`` of another type than OBJECT
    (``FunctionDeclaration.parameters``: "Describes the parameters to this function ... the
    OBJECT's properties", https://ai.google.dev/api/caching#FunctionDeclaration). ``Schema`` reference,
    https://ai.google.dev/api/caching#Schema (``required``: "Required properties of
    Type.OBJECT"); the type answer is quoted in
    https://github.com/google-gemini/deprecated-generative-ai-js/issues/320, the enum one in
    https://github.com/decolua/9router/issues/359."""
    for where, schema in _schemas(req):
        kind = str(schema.get("type", "OBJECT")).upper()
        # A function's parameters are an object's properties.
        if where.endswith(".parameters") and kind in TYPES and kind != "OBJECT":
            return invalid(f"* GenerateContentRequest.{where}.type: must be OBJECT\n")
        problem = _schema_problem(schema, where, 0)
        if problem is not None:
            return problem
    return None


def _schemas(req: RecordedRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, declaration in _declarations(req):
        if isinstance(declaration.get("parameters"), dict):
            yield f"{path}.parameters", declaration["parameters"]
    config = _get(body_of(req), "generationConfig", "generation_config")
    schema = _get(config, "responseSchema", "response_schema") if isinstance(config, dict) else None
    if isinstance(schema, dict):
        yield "generation_config.response_schema", schema


def _schema_problem(schema: dict[str, Any], where: str, depth: int) -> Rejection | None:
    if depth > MAX_DEPTH:
        return None
    kind = schema.get("type")
    if isinstance(kind, str) and kind.upper() not in TYPES:
        message = (
            f"Invalid value at '{where}.type' "
            f'(type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "{kind}"'
        )
        return invalid(message, _violation(f"{where}.type", message))
    if "enum" in schema and isinstance(kind, str) and kind.upper() != "STRING":
        return invalid(f"* GenerateContentRequest.{where}.enum: only allowed for STRING type\n")
    problem = _required_problem(schema, where)
    if problem is not None:
        return problem
    for child_where, child in _sub_schemas(schema, where):
        problem = _schema_problem(child, child_where, depth + 1)
        if problem is not None:
            return problem
    return None


def _required_problem(schema: dict[str, Any], where: str) -> Rejection | None:
    required = schema.get("required")
    if required is None:
        return None
    if not isinstance(required, list):
        message = f"Invalid value at '{where}.required' (TYPE_STRING), {required!r}"
        return invalid(message, _violation(f"{where}.required", message))
    properties = schema.get("properties")
    declared = properties if isinstance(properties, dict) else {}
    for index, name in enumerate(required):
        if name not in declared:
            return invalid(
                f"* GenerateContentRequest.{where}.required[{index}]: property is not defined\n"
            )
    return None


def _sub_schemas(schema: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out += [
            (f"{where}.properties[{k}]", v) for k, v in properties.items() if isinstance(v, dict)
        ]
    if isinstance(schema.get("items"), dict):
        out.append((f"{where}.items", schema["items"]))
    out += [(f"{where}.any_of[{i}]", v) for i, v in dicts(_get(schema, "anyOf", "any_of"))]
    return out


def _violation(field: str, description: str) -> list[dict[str, Any]]:
    return [
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": field, "description": description}],
        }
    ]


def _config(req: RecordedRequest) -> dict[str, Any]:
    config = _get(body_of(req), "generationConfig", "generation_config")
    return config if isinstance(config, dict) else {}


def _out_of_range(name: str, value: float, low: str, high: str) -> Rejection:
    """Google's range answer ("Unable to submit request because it has a maxOutputTokens
    value of 65536 but the supported range is from 1 (inclusive) to 65536 (exclusive). Update
    the value and try again.", quoted in https://github.com/BerriAI/litellm/pull/10548; the
    same for topK in https://github.com/Blarc/ai-commits-intellij-plugin/pull/279)."""
    return invalid(
        f"Unable to submit request because it has a {name} value of {shown(value)} but the "
        f"supported range is from {low} (inclusive) to {high} (exclusive). Update the value "
        "and try again."
    )


def temperature_in_range(req: RecordedRequest) -> Rejection | None:
    """400 for a ``temperature`` outside 0 to 2 (``GenerationConfig.temperature``: "Values
    can range from [0.0, 2.0]", https://ai.google.dev/api/generate-content#GenerationConfig;
    the answer is ``_out_of_range``'s)."""
    value = number(_config(req).get("temperature"))
    if value is None or 0 <= value <= TEMPERATURE_MAX:
        return None
    return _out_of_range("temperature", value, "0", "2.0001")


def max_output_tokens_within_model(req: RecordedRequest) -> Rejection | None:
    """400 for a ``maxOutputTokens`` over the model's output limit (models page, "Output
    token limit", https://ai.google.dev/gemini-api/docs/models; the answer is
    ``_out_of_range``'s, quoted for an 8192-token model in
    https://github.com/stackblitz-labs/bolt.diy/issues/955)."""
    value = number(_get(_config(req), "maxOutputTokens", "max_output_tokens"))
    limit = next((n for pattern, n in MAX_OUTPUT if pattern.search(_model(req))), None)
    if value is None or limit is None or value <= limit:
        return None
    return _out_of_range("maxOutputTokens", value, "1", str(limit + 1))


GENERATE_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    request_size,
    contents_present,
    roles_valid,
    parts_not_empty,
    temperature_in_range,
    max_output_tokens_within_model,
    function_calls_follow_user,
    function_responses_follow_calls,
    function_responses_match_calls,
    function_calls_signed,
    function_names_valid,
    schema_fields_known,
    schema_values_valid,
    inline_data_valid,
    *GEMINI_HOSTED_RULES,  # built-in tools (validate_hosted.py); Vertex AI has its own
)


# --- countTokens (https://ai.google.dev/api/tokens#method:-models.counttokens) ---------------


def _generate_request(body: dict[str, Any]) -> Any:
    return _get(body, "generateContentRequest", "generate_content_request")


def count_input_given(req: RecordedRequest) -> Rejection | None:
    """400 unless a countTokens body has exactly one of ``contents`` and a
    ``generateContentRequest`` object (API reference, request body: "Models/Contents and
    generateContentRequests are mutually exclusive. You can either send Model + Contents or
    a generateContentRequest, but never both.", https://ai.google.dev/api/tokens#request-body)."""
    body = body_of(req)
    inner = _generate_request(body)
    if (inner is None) == ("contents" not in body) or (
        inner is not None and not isinstance(inner, dict)
    ):
        return invalid(
            "* CountTokensRequest: exactly one of contents and generate_content_request must "
            "be set\n"
        )
    return None


def count_model_given(req: RecordedRequest) -> Rejection | None:
    """400 for a ``generateContentRequest`` without its ``model`` (API reference,
    ``GenerateContentRequest.model``: "Required. The name of the Model to use",
    https://ai.google.dev/api/generate-content#request-body); the answer as for a missing
    ``contents``."""
    inner = _generate_request(body_of(req))
    if not isinstance(inner, dict):
        return None
    model = inner.get("model")
    if isinstance(model, str) and model:
        return None
    return invalid("* GenerateContentRequest.model: model is not specified\n")


def _counted(rule: Rule) -> Rule:
    """``rule`` of generateContent, checked on what a countTokens call counts: its
    ``generateContentRequest``, else the body itself (contents, and on Vertex AI its
    system instruction and tools)."""

    def counted(req: RecordedRequest) -> Rejection | None:
        inner = _generate_request(body_of(req))
        return rule(replace(req, body=inner) if isinstance(inner, dict) else req)

    counted.__name__ = rule.__name__
    counted.__doc__ = rule.__doc__
    return counted


COUNT_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    request_size,
    count_input_given,
    count_model_given,
    *(
        _counted(rule)
        for rule in (
            contents_present,
            roles_valid,
            parts_not_empty,
            function_calls_follow_user,
            function_responses_follow_calls,
            function_responses_match_calls,
            function_names_valid,
            schema_fields_known,
            schema_values_valid,
            inline_data_valid,
        )
    ),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path.endswith(":countTokens"):
        return COUNT_RULES
    return GENERATE_RULES if "generateContent" in req.path or "GenerateContent" in req.path else ()
