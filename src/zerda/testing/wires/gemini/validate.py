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
)

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


def function_calls_follow_user(req: RecordedRequest) -> Rejection | None:
    """400 "Please ensure that function call turn comes immediately after a user turn or
    after a function response turn." (function-calling guide,
    https://ai.google.dev/gemini-api/docs/function-calling)."""
    previous: dict[str, Any] | None = None
    for _, content in _contents(req):
        calls = _parts(content, "functionCall", "function_call")
        if calls and (previous is None or previous.get("role") == "model"):
            return invalid(
                "Please ensure that function call turn comes immediately after a user turn "
                "or after a function response turn."
            )
        previous = content
    return None


def function_responses_match_calls(req: RecordedRequest) -> Rejection | None:
    """400 "Please ensure that the number of function response parts is equal to the number
    of function call parts of the function call turn." (quoted in
    https://github.com/google-gemini/gemini-cli/issues/16984)."""
    contents = _contents(req)
    for position, (_, content) in enumerate(contents[:-1]):
        calls = _parts(content, "functionCall", "function_call")
        if not calls:
            continue
        responses = _parts(contents[position + 1][1], "functionResponse", "function_response")
        if len(responses) != len(calls):
            return invalid(
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
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


GENERATE_RULES: tuple[Rule, ...] = (
    api_key_present,
    json_object_body,
    request_size,
    contents_present,
    roles_valid,
    function_calls_follow_user,
    function_responses_match_calls,
    function_calls_signed,
    function_names_valid,
    schema_fields_known,
    inline_data_valid,
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return GENERATE_RULES if "generateContent" in req.path or "GenerateContent" in req.path else ()
