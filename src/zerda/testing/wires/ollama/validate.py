"""What Ollama's ``POST /api/chat`` and its OpenAI-compatible ``POST /v1/chat/completions``
refuse. Ollama needs no key: a local server has no auth.

``/api/chat`` answers ``{"error": "<message>"}``; ``/v1`` answers in OpenAI's shape,
``{"error": {"message", "type", "param": null, "code": null}}`` with ``type``
``invalid_request_error`` for a 400 (its middleware's ``NewError``,
https://github.com/ollama/ollama/blob/main/openai/openai.go), whatever refused the request:
the middleware's own conversion (``FromChatRequest``) or the chat handler behind it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, Rule, body_of, dicts, list_of

# FromChatRequest's image prefixes ("data:;base64," is bare base64, as /api/chat takes).
IMAGE_PREFIXES = tuple(f"data:image/{t};base64," for t in ("jpeg", "jpg", "png", "webp"))
IMAGE_PREFIXES += ("data:;base64,",)
EFFORTS = ("high", "medium", "low", "none")


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


def images_base64(req: RecordedRequest) -> Rejection | None:
    """400 "illegal base64 data at input byte N" for a message image that is not plain
    base64 (a data URL, a file path): ``images`` are base64-encoded bytes (API docs,
    "images (optional): a list of images to include in the message", base64-encoded,
    https://github.com/ollama/ollama/blob/main/docs/api.md#chat-request-with-images), decoded
    by Go's encoding/base64 while the body is bound, which answers so
    (https://pkg.go.dev/encoding/base64#CorruptInputError)."""
    for _, message in dicts(body_of(req).get("messages")):
        for image in list_of(message.get("images")):
            if not isinstance(image, str):
                continue
            try:
                base64.b64decode(image, validate=True)
            except (binascii.Error, ValueError):
                at = next((i for i, c in enumerate(image) if not _b64_char(c)), len(image))
                return Rejection(400, f"illegal base64 data at input byte {at}")
    return None


def _b64_char(char: str) -> bool:
    return char.isalnum() or char in "+/="


# --- /v1/chat/completions ---------------------------------------------------------------


def _openai_shape(message: str) -> Rejection:
    """Ollama's OpenAI-compatible error (``NewError(400, …)`` in openai/openai.go)."""
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return Rejection(400, message, "invalid_request_error", body={"error": error})


def _as_openai(rule: Rule) -> Rule:
    """A native rule answering in the /v1 endpoint's OpenAI shape."""

    def openai_rule(req: RecordedRequest) -> Rejection | None:
        rejection = rule(req)
        if rejection is None:
            return None
        return replace(_openai_shape(rejection.message), rule=rule.__name__)

    openai_rule.__name__ = rule.__name__
    openai_rule.__doc__ = rule.__doc__
    return openai_rule


def message_content_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a message ``/v1`` cannot convert (``FromChatRequest`` in
    https://github.com/ollama/ollama/blob/main/openai/openai.go): "invalid message content
    type: <nil>" for a message without content or tool calls, "invalid message format" for
    a content part that is not text or image_url, "invalid image input" for an image that
    is not a base64 data URL of jpeg, png or webp (a remote URL included), "invalid tool call
    arguments" for arguments that are not JSON."""
    for _, message in dicts(body_of(req).get("messages")):
        content = message.get("content")
        if content is None and not message.get("tool_calls"):
            return _openai_shape("invalid message content type: <nil>")
        problem = _parts_problem(content) if isinstance(content, list) else None
        problem = problem or _arguments_problem(message)
        if problem:
            return _openai_shape(problem)
    return None


def _parts_problem(parts: list[Any]) -> str | None:
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind != "image_url":
            return "invalid message format"
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str):
            return "invalid message format"
        if not url.startswith(IMAGE_PREFIXES):
            return "invalid image input"
    return None


def _arguments_problem(message: dict[str, Any]) -> str | None:
    for _, call in dicts(message.get("tool_calls")):
        function = call.get("function")
        arguments = function.get("arguments") if isinstance(function, dict) else None
        try:
            json.loads(arguments if isinstance(arguments, str) else "")
        except ValueError:
            return "invalid tool call arguments"
    return None


def reasoning_effort_valid(req: RecordedRequest) -> Rejection | None:
    """400 "invalid reasoning value: 'max' (must be \\"high\\", \\"medium\\", \\"low\\", or
    \\"none\\")" for another ``reasoning_effort`` (or ``reasoning.effort``): ``FromChatRequest``
    in https://github.com/ollama/ollama/blob/main/openai/openai.go."""
    body = body_of(req)
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    effort = effort if effort is not None else body.get("reasoning_effort")
    if effort in (None, "", *EFFORTS):
        return None
    return _openai_shape(
        f'invalid reasoning value: \'{effort}\' (must be "high", "medium", "low", or "none")'
    )


NATIVE_RULES: tuple[Rule, ...] = (body_present, model_present, images_base64)
OPENAI_RULES: tuple[Rule, ...] = (
    _as_openai(body_present),
    message_content_valid,
    reasoning_effort_valid,
    _as_openai(model_present),
)


def rules_for(req: RecordedRequest) -> Sequence[Rule]:
    if req.path == "/api/chat":
        return NATIVE_RULES
    return OPENAI_RULES if req.path == "/v1/chat/completions" else ()
