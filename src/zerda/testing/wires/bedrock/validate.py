"""What Bedrock's ``Converse`` / ``ConverseStream`` refuse, one rule per function.

Errors are ``{"message"}`` with the code in ``x-amzn-ErrorType`` (recording
bedrock/pydantic-ai__test_bedrock.test_bedrock_error__i00): ``ValidationException`` (400)
for every rule here except authentication.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import (
    Rejection,
    Rule,
    base64_size,
    bearer_present,
    body_of,
    dicts,
)

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_MAX = 64
IMAGE_FORMATS = ("gif", "jpeg", "png", "webp")
IMAGE_MAX_BYTES = 3_750_000  # 3.75 MB


def invalid(message: str) -> Rejection:
    return Rejection(400, message, "ValidationException")


def signed(req: RecordedRequest) -> Rejection | None:
    """403 ``MissingAuthenticationTokenException`` "Missing Authentication Token" for a
    request with no ``Authorization`` (SigV4 or a Bedrock API key), as every AWS API answers
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html)."""
    if bearer_present(req):
        return None
    return Rejection(403, "Missing Authentication Token", "MissingAuthenticationTokenException")


def json_object_body(req: RecordedRequest) -> Rejection | None:
    """400 ``SerializationException``-style refusal of a body that is not a JSON object
    (CommonErrors: the request body could not be parsed,
    https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html)."""
    if isinstance(req.body, dict):
        return None
    return Rejection(
        400, "Start of structure or map found where not expected.", "SerializationException"
    )


def _messages(req: RecordedRequest) -> list[tuple[int, dict[str, Any]]]:
    return list(dicts(body_of(req).get("messages")))


def starts_with_user(req: RecordedRequest) -> Rejection | None:
    """400 "A conversation must start with a user message. Try again with a conversation
    that starts with a user message." (quoted in
    https://github.com/langgenius/dify/issues/12340 and
    https://github.com/elastic/kibana/pull/246393)."""
    messages = _messages(req)
    if messages and messages[0][1].get("role") == "user":
        return None
    return invalid(
        "A conversation must start with a user message. Try again with a conversation that "
        "starts with a user message."
    )


def roles_alternate(req: RecordedRequest) -> Rejection | None:
    """400 "A conversation must alternate between user and assistant roles..." (quoted in
    https://github.com/langchain-ai/langchainjs/issues/6724)."""
    roles = [m.get("role") for _, m in _messages(req)]
    if all(a != b for a, b in zip(roles, roles[1:], strict=False)) and set(roles) <= {
        "user",
        "assistant",
    }:
        return None
    return invalid(
        "A conversation must alternate between user and assistant roles. Make sure the "
        "conversation alternates between user and assistant roles and try again."
    )


def _blocks(message: dict[str, Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, b[kind]) for i, b in dicts(message.get("content")) if isinstance(b.get(kind), dict)]


def tool_config_with_tool_history(req: RecordedRequest) -> Rejection | None:
    """400 "The toolConfig field must be defined when using toolUse and toolResult content
    blocks." (quoted in https://github.com/langgenius/dify/issues/17545 and
    https://github.com/vercel/ai/pull/7537)."""
    if body_of(req).get("toolConfig"):
        return None
    for _, message in _messages(req):
        if _blocks(message, "toolUse") or _blocks(message, "toolResult"):
            return invalid(
                "The toolConfig field must be defined when using toolUse and toolResult "
                "content blocks."
            )
    return None


def tool_results_match_uses(req: RecordedRequest) -> Rejection | None:
    """400 when the toolResult blocks of a user turn do not answer the previous turn's
    toolUse blocks: more results than uses ("The number of toolResult blocks at
    messages.2.content exceeds the number of toolUse blocks of previous turn.") or a use
    left unanswered ("Expected toolResult blocks at messages.2.content for the following
    Ids: ..."), as Converse answers (tool-use guide,
    https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html)."""
    messages = _messages(req)
    for position, (index, message) in enumerate(messages):
        previous = messages[position - 1][1] if position else {}
        uses = [str(u.get("toolUseId")) for _, u in _blocks(previous, "toolUse")]
        results = [str(r.get("toolUseId")) for _, r in _blocks(message, "toolResult")]
        where = f"messages.{index}.content"
        if len(results) > len(uses) or any(r not in uses for r in results):
            return invalid(
                f"The number of toolResult blocks at {where} exceeds the number of toolUse "
                "blocks of previous turn."
            )
        missing = [u for u in uses if u not in results]
        if missing:
            return invalid(
                f"Expected toolResult blocks at {where} for the following Ids: "
                + ", ".join(missing)
            )
    return _last_uses_unanswered(messages)


def _last_uses_unanswered(messages: list[tuple[int, dict[str, Any]]]) -> Rejection | None:
    """A conversation may not end on toolUse blocks either: Converse needs the user turn."""
    if messages and messages[-1][1].get("role") == "assistant":
        uses = [str(u.get("toolUseId")) for _, u in _blocks(messages[-1][1], "toolUse")]
        if uses:
            return invalid(
                f"Expected toolResult blocks at messages.{messages[-1][0] + 1}.content for the "
                "following Ids: " + ", ".join(uses)
            )
    return None


def text_not_blank(req: RecordedRequest) -> Rejection | None:
    """400 "The text field in the ContentBlock object at messages.15.content.0 is blank."
    (quoted in https://github.com/aws-samples/bedrock-engineer/issues/8)."""
    for index, message in _messages(req):
        for block_index, block in dicts(message.get("content")):
            text = block.get("text")
            if isinstance(text, str) and not text.strip():
                return invalid(
                    f"The text field in the ContentBlock object at messages.{index}.content."
                    f"{block_index} is blank. Add text to the text field, and try again."
                )
    return None


def tool_names_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a toolSpec name outside ``[a-zA-Z0-9_-]+`` or over 64 characters (API
    reference, ToolSpecification.name: "Length Constraints: Minimum length of 1. Maximum
    length of 64. Pattern: ^[a-zA-Z0-9_-]+$",
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html)."""
    tool_config = body_of(req).get("toolConfig")
    tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
    for index, tool in dicts(tools):
        spec = tool.get("toolSpec")
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(spec, dict):
            continue
        where = f"Value at 'toolConfig.tools.{index + 1}.member.toolSpec.name'"
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            return invalid(
                f"1 validation error detected: {where} failed to satisfy constraint: Member "
                "must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
            )
        if len(name) > TOOL_NAME_MAX:
            return invalid(
                f"1 validation error detected: {where} failed to satisfy constraint: Member "
                "must have length less than or equal to 64"
            )
    return None


def images_valid(req: RecordedRequest) -> Rejection | None:
    """400 for an image whose format is not gif, jpeg, png or webp, or over 3.75 MB (API
    reference, ImageBlock: "format: gif | jpeg | png | webp"; "The maximum size of an image
    is 3.75 MB",
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html)."""
    for index, message in _messages(req):
        for block_index, image in _images(message):
            where = f"messages.{index + 1}.member.content.{block_index + 1}.member.image"
            if image.get("format") not in IMAGE_FORMATS:
                return invalid(
                    f"1 validation error detected: Value '{image.get('format')}' at '{where}."
                    "format' failed to satisfy constraint: Member must satisfy enum value set: "
                    "[gif, jpeg, png, webp]"
                )
            source = image.get("source")
            data = source.get("bytes") if isinstance(source, dict) else None
            if isinstance(data, str) and base64_size(data) > IMAGE_MAX_BYTES:
                return invalid("The image size exceeds the maximum of 3.75 MB.")
    return None


def _images(message: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    out = list(_blocks(message, "image"))
    for block_index, result in _blocks(message, "toolResult"):
        out.extend((block_index, image) for _, image in _blocks(result, "image"))
    return out


CONVERSE_RULES: tuple[Rule, ...] = (
    signed,
    json_object_body,
    starts_with_user,
    roles_alternate,
    tool_config_with_tool_history,
    tool_results_match_uses,
    text_not_blank,
    tool_names_valid,
    images_valid,
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    return CONVERSE_RULES if "/converse" in req.path else ()
