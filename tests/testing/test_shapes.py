"""The mock's responses have today's shape: their JSON key paths, per wire, diffed against
the key paths of the real exchanges recorded under ../shared/fixtures/recorded.

Two checks per wire and kind (JSON body, stream events): every key path the mock renders
appears in some recording (nothing invented, nothing of an older shape), and the fields
issue 16 lists as missing are rendered. Paths inside tool arguments are left out (they
are the script's own data).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from zerda.testing._script import RecordedRequest, Reply
from zerda.testing._server import load_renderer, make_script
from zerda.testing.wires.openai.render import sse

# ../shared/fixtures next to the repository; ZERDA_FIXTURES points elsewhere (a worktree).
FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures"
RECORDED = Path(os.environ.get("ZERDA_FIXTURES") or FIXTURES) / "recorded"
pytestmark = pytest.mark.skipif(not RECORDED.is_dir(), reason=f"{RECORDED} is absent")

# Paths below these keys are tool arguments: the script's data, not the wire's shape.
_ARGUMENT_KEYS = ("args", "arguments", "input")

SCRIPTS = [
    {"text": "hi"},
    {"text": "a", "tool_calls": [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]},
    {"tool_calls": [{"name": "f", "arguments": {"a": 1}}], "usage": {"input_tokens": 9, "output_tokens": 7, "reasoning_tokens": 2}},
    {"tool_calls": [{"name": "f", "arguments": {}}]},  # the default ids and thought signature
]  # fmt: skip

PATHS = {
    "openai": "/v1/chat/completions",
    "groq": "/openai/v1/chat/completions",
    "mistral": "/v1/chat/completions",
    "ollama": "/api/chat",
    "anthropic": "/v1/messages",
    "bedrock": "/model/m/converse",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
}

# The fields issue 16 found missing or of an older shape, per wire and kind.
REQUIRED: dict[tuple[str, str], set[str]] = {
    ("anthropic", "json"): {
        ".usage.cache_creation_input_tokens",
        ".usage.cache_read_input_tokens",
        ".usage.cache_creation.ephemeral_5m_input_tokens",
        ".usage.service_tier",
    },
    ("anthropic", "stream"): {
        "<message_delta>.usage.input_tokens",
        "<message_start>.message.usage.service_tier",
    },
    ("gemini", "json"): {
        ".usageMetadata.promptTokensDetails[].modality",
        ".usageMetadata.thoughtsTokenCount",
        ".candidates[].content.parts[].thoughtSignature",
    },
    ("gemini", "stream"): {
        "<data>.usageMetadata.promptTokensDetails[].tokenCount",
        "<data>.usageMetadata.thoughtsTokenCount",
        "<data>.candidates[].content.parts[].thoughtSignature",
    },
    ("bedrock", "json"): {".usage.serverToolUsage"},
    ("bedrock", "stream"): {"<messageStart>.p", "<contentBlockDelta>.p", "<metadata>.p"},
    ("ollama", "json"): {".message.tool_calls[].id", ".message.tool_calls[].function.index"},
    ("ollama", "stream"): {".message.tool_calls[].id", ".message.tool_calls[].function.index"},
    ("mistral", "stream"): {"<chat.completion.chunk>.choices[].delta.tool_calls[].id"},
}

# Paths the mock must not render: older shapes the recordings show gone.
FORBIDDEN: dict[tuple[str, str], set[str]] = {
    ("mistral", "stream"): {"<chat.completion.chunk>.choices[].delta.tool_calls[].index"},
}


def key_paths(obj: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value: ``.a.b``, list items as ``[]``."""
    out: set[str] = set()
    if isinstance(obj, dict):
        for key, value in obj.items():
            path = f"{prefix}.{key}"
            out.add(path)
            if key not in _ARGUMENT_KEYS:
                out |= key_paths(value, path)
    elif isinstance(obj, list):
        for item in obj:
            out |= key_paths(item, prefix + "[]")
    return out


def sse_events(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event name, else the payload's type or object, else "data"; payload) per event."""
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if not data or data == ["[DONE]"]:
            continue
        try:
            payload = json.loads("\n".join(data))
        except ValueError:
            continue
        if isinstance(payload, dict):
            yield str(name or payload.get("type") or payload.get("object") or "data"), payload


def eventstream_events(raw: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(raw)
    for message in buffer:
        name = message.headers.get(":event-type") or message.headers.get(":exception-type")
        yield str(name), json.loads(message.payload)


def stream_paths(events: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    return {f"<{name}>{p}" for name, payload in events for p in key_paths(payload)}


def ndjson_paths(text: str) -> set[str]:
    return {p for line in text.splitlines() if line.strip() for p in key_paths(json.loads(line))}


@cache
def recorded_paths(wire: str, kind: str) -> frozenset[str]:
    """The union of key paths over the successful recorded exchanges of a wire."""
    out: set[str] = set()
    for file in sorted((RECORDED / wire).glob("*.json")):
        fixture = json.loads(file.read_text())
        response = fixture["response"]
        if (
            response["status"] != 200
            or fixture["request"]["path"].find("/v1/chat") >= 0
            and wire == "ollama"
        ):
            continue
        streamed = bool(fixture.get("streaming"))
        fmt = fixture.get("stream_format")
        if kind == "json" and not streamed and isinstance(response["body"], dict):
            out |= key_paths(response["body"])
        elif kind == "stream" and streamed and fmt == "sse":
            out |= stream_paths(sse_events(response["body"]))
        elif kind == "stream" and fmt == "aws-eventstream":
            out |= stream_paths(eventstream_events(base64.b64decode(response["body"])))
        elif wire == "ollama" and fmt == "ndjson":
            out |= ndjson_paths(response["body"])  # Ollama's lines are its JSON bodies
    return frozenset(out)


def _request(wire: str, kind: str) -> RecordedRequest:
    path = PATHS[wire]
    body: dict[str, Any] = {"model": "m", "messages": []}
    query: dict[str, str] = {}
    if kind == "stream":
        body.update(stream=True, stream_options={"include_usage": True})
        path = path.replace(":generateContent", ":streamGenerateContent")
        path += "-stream" if wire == "bedrock" else ""
        query = {"alt": "sse"}
    elif wire == "ollama":
        body["stream"] = False
    return RecordedRequest(wire, "POST", path, query, {}, body)


def rendered_paths(wire: str, kind: str) -> set[str]:
    renderer = load_renderer(wire)
    out: set[str] = set()
    for fields in SCRIPTS:
        reply: Reply = renderer.render(make_script(fields), _request(wire, kind))
        raw = reply.body if reply.chunks is None else b"".join(reply.chunks)
        if kind == "json":
            out |= key_paths(json.loads(raw or b""))
        elif wire == "bedrock":
            out |= stream_paths(eventstream_events(raw or b""))
        elif wire == "ollama":
            out |= ndjson_paths((raw or b"").decode())
        else:
            out |= stream_paths(sse_events((raw or b"").decode()))
    return out


CASES = [
    (wire, kind)
    for wire in ("openai", "groq", "mistral", "anthropic", "bedrock", "gemini")
    for kind in ("json", "stream")
] + [("ollama", "json"), ("ollama", "stream")]


@pytest.mark.parametrize(("wire", "kind"), CASES, ids=[f"{w}-{k}" for w, k in CASES])
def test_rendered_key_paths_are_all_recorded(wire: str, kind: str) -> None:
    recorded = recorded_paths(wire, "json" if wire == "ollama" else kind)
    assert recorded, f"no recorded {kind} exchange for {wire}"
    assert sorted(rendered_paths(wire, kind) - recorded) == []


@pytest.mark.parametrize(
    ("wire", "kind"), sorted(REQUIRED), ids=[f"{w}-{k}" for w, k in sorted(REQUIRED)]
)
def test_todays_fields_are_rendered(wire: str, kind: str) -> None:
    required = REQUIRED[(wire, kind)]
    recorded = recorded_paths(wire, "json" if wire == "ollama" else kind)
    assert required <= recorded  # the list itself is grounded in recordings
    assert sorted(required - rendered_paths(wire, kind)) == []


@pytest.mark.parametrize(
    ("wire", "kind"), sorted(FORBIDDEN), ids=[f"{w}-{k}" for w, k in sorted(FORBIDDEN)]
)
def test_older_fields_are_not_rendered(wire: str, kind: str) -> None:
    forbidden = FORBIDDEN[(wire, kind)]
    assert not forbidden & recorded_paths(wire, kind)
    assert not forbidden & rendered_paths(wire, kind)


def test_gemini_stream_without_alt_sse_is_a_json_array() -> None:
    request = _request("gemini", "stream")
    request.query = {}
    reply = load_renderer("gemini").render(make_script({"text": "hi"}), request)
    body = json.loads(b"".join(reply.chunks or []))
    assert isinstance(body, list) and body[-1]["candidates"][0]["finishReason"] == "STOP"
    assert reply.headers["content-type"].startswith("application/json")


def test_groq_in_stream_tool_use_failed_in_groqs_shape() -> None:
    from zerda.testing import ErrorReply

    fields = {"code": "tool_use_failed", "failed_generation": "<function=f>{}</function>"}
    event = load_renderer("groq").render_stream_error(
        ErrorReply(400, "Failed to call a function.", "invalid_request_error", fields=fields)
    )
    assert event.startswith(b"event: error\n")
    assert list(sse_events(event.decode())) == [
        (
            "error",
            {
                "error": {
                    "message": "Failed to call a function.",
                    "type": "invalid_request_error",
                    "code": "tool_use_failed",
                    "failed_generation": "<function=f>{}</function>",
                    "status_code": 400,
                }
            },
        )
    ]


def test_sse_helper_round_trips() -> None:
    assert list(sse_events(sse({"type": "ping"}).decode())) == [("ping", {"type": "ping"})]
