"""The strict mock accepts every request the real APIs accepted (issue 33, DESIGN §17).

Every recorded exchange under ../shared/fixtures/recorded whose real answer was 2xx is sent
again to a strict MockLLMServer, as raw HTTP with the recorded body and the headers its
SDK sends, on the wire its path belongs to: none may be refused. The Responses recordings go
to both places the SDK sends them, ``/openai-responses/v1/responses`` and
``/openai/v1/responses`` (the openai row's base URL). The recordings that the real API
refused with a 4xx are sent too, and the mock must refuse those that its rules cover with
the same status (``REFUSED_TOO``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from zerda.testing import MockLLMServer

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures"
RECORDED = Path(os.environ.get("ZERDA_FIXTURES") or FIXTURES) / "recorded"
FOLDERS = ("openai", "openai-responses", "groq", "mistral", "ollama", "anthropic", "bedrock")
FOLDERS += ("gemini",)

# What each SDK sends: the key (values are never checked), Anthropic's version header.
BEARER = {"authorization": "Bearer k"}
HEADERS: dict[str, dict[str, str]] = {
    "openai": BEARER,
    "openai-responses": BEARER,
    "groq": BEARER,
    "mistral": BEARER,
    "ollama": {},
    "anthropic": {"x-api-key": "k", "anthropic-version": "2023-06-01"},
    "bedrock": {"authorization": "AWS4-HMAC-SHA256 Credential=k"},
    "gemini": {"x-goog-api-key": "k"},
    "vertex": BEARER,
}

# Recordings the real API refused whose refusal a rule of the mock reproduces.
REFUSED_TOO = {
    "openai-responses/pydantic-ai__test_openai_responses.test_openai_responses_thinking_with_"
    "modified_history__i01": "reasoning_followed",
    "openai-responses/pydantic-ai__test_openai_responses.test_openai_responses_model_http_"
    "error__i00": "temperature_in_range",
}


def _recordings(folder: str) -> list[dict[str, Any]]:
    return [
        {**json.loads(f.read_text(encoding="utf-8")), "name": f"{folder}/{f.stem}"}
        for f in sorted((RECORDED / folder).glob("*.json"))
    ]


def _targets(folder: str, request: dict[str, Any]) -> list[tuple[str, str]]:
    """(mock provider, path under its prefix) the recorded request is sent to."""
    path = request["path"]
    if folder == "gemini" and path.startswith("/v1beta1/projects/"):
        return [("vertex", path)]
    if folder == "openai-responses":
        return [("openai-responses", path), ("openai", path)]
    return [(folder, path)]


def _raw(body: Any) -> bytes:
    # A recorder that kept the body as text (its JSON) sent exactly that text.
    return body.encode() if isinstance(body, str) else json.dumps(body).encode()


def _whole(request: dict[str, Any]) -> bool:
    """Whether the recording holds the whole request body: one recorder cut a text body
    short (bedrock/pydantic-ai__test_bedrock.test_bedrock_model_other_parameters__i00 ends
    inside its JSON), which is not what the API received."""
    try:
        json.loads(_raw(request["body"]))
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


def _send(
    server: MockLLMServer, client: httpx.Client, provider: str, path: str, fixture: dict[str, Any]
) -> Any:
    """Send the recorded request; the mock's log entry for it and the answer's status."""
    server.reset()
    server.enqueue(provider, text="ok")
    request = fixture["request"]
    headers = {"content-type": "application/json", **HEADERS[provider]}
    with client.stream(
        "POST",
        f"{server.url}/{provider}{path}",
        params=request.get("query") or {},
        content=_raw(request["body"]),
        headers=headers,
    ) as resp:
        resp.read()
    return server.last_request(provider), resp.status_code


def _params() -> list[Any]:
    if not RECORDED.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]
    return list(FOLDERS)


@pytest.mark.parametrize("folder", _params())
def test_every_accepted_request_is_accepted(
    server: MockLLMServer, client: httpx.Client, folder: str
) -> None:
    refused = []
    for fixture in _recordings(folder):
        if fixture["response"]["status"] >= 300 or not _whole(fixture["request"]):
            continue
        for provider, path in _targets(folder, fixture["request"]):
            logged, status = _send(server, client, provider, path, fixture)
            if logged.rejected_by is not None or status >= 400:
                refused.append((fixture["name"], provider, logged.rejected_by, status))
    assert refused == []


@pytest.mark.skipif(not RECORDED.is_dir(), reason=f"{RECORDED} is absent")
@pytest.mark.parametrize(("name", "rule"), sorted(REFUSED_TOO.items()))
def test_refused_recordings_are_refused(
    server: MockLLMServer, client: httpx.Client, name: str, rule: str
) -> None:
    folder, stem = name.split("/")
    fixture = json.loads((RECORDED / folder / f"{stem}.json").read_text(encoding="utf-8"))
    for provider, path in _targets(folder, fixture["request"]):
        logged, status = _send(server, client, provider, path, fixture)
        assert (logged.rejected_by, status) == (rule, fixture["response"]["status"])


# -- each kind of request the strict mock refused although the real APIs answer it 2xx ------

USER = {"role": "user", "content": "hi"}
A_USE = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
A_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
G_CALL = {"functionCall": {"name": "f", "args": {}}}
G_ANSWER = {"functionResponse": {"name": "f", "response": {}}}
B_USER = {"role": "user", "content": [{"text": "hi"}]}
B_SPEC = {"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}
M_CALL = {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": "{}"}}
CLAUDE = "/bedrock/model/us.anthropic.claude-sonnet-4-20250514-v1:0/converse"
NOVA = "/bedrock/model/us.amazon.nova-2-lite-v1:0/converse"
ANTHROPIC_KEYS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
ACCEPTED = [
    ("anthropic system message mid-conversation", "/anthropic/v1/messages",
     {"model": "claude-opus-4-8", "max_tokens": 10, "messages": [
         USER, {"role": "assistant", "content": "ok"}, USER,
         {"role": "system", "content": "Answer briefly."}]}, ANTHROPIC_KEYS),
    ("anthropic tool uses over two assistant messages", "/anthropic/v1/messages",
     {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [
         USER, {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}]},
         {"role": "assistant", "content": [A_USE]}, {"role": "user", "content": [A_RESULT]}]},
     ANTHROPIC_KEYS),
    ("responses reasoning without id, stateless", "/openai-responses/v1/responses",
     {"model": "gpt-5", "store": False, "input": [
         USER, {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
         {"role": "assistant", "content": "ok"}, USER]}, BEARER),
    ("responses output for a call held by previous_response_id", "/openai/v1/responses",
     {"model": "gpt-5", "previous_response_id": "resp_1", "input": [
         {"type": "function_call_output", "call_id": "call_1", "output": "ok"}]}, BEARER),
    ("responses output answering a call type of its own", "/openai-responses/v1/responses",
     {"model": "gpt-5", "input": [
         USER, {"type": "tool_search_call", "call_id": "search_1", "execution": "client",
                "arguments": {}, "status": "completed"},
         {"type": "function_call_output", "call_id": "search_1", "output": "found"}]}, BEARER),
    ("gemini calls over two model contents", "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
     {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [G_CALL]},
                   {"role": "model", "parts": [G_CALL]},
                   {"role": "user", "parts": [G_ANSWER, G_ANSWER]}]}, {"x-goog-api-key": "k"}),
    ("bedrock claude history starting with an assistant turn", CLAUDE,
     {"messages": [{"role": "assistant", "content": [{"text": "Hello"}]}, B_USER]}, HEADERS["bedrock"]),
    ("bedrock newline-only text", CLAUDE,
     {"messages": [B_USER, {"role": "assistant", "content": [{"text": "\n"}]}, B_USER]},
     HEADERS["bedrock"]),
    ("bedrock hosted tool result inside the assistant turn", NOVA,
     {"messages": [B_USER, {"role": "assistant", "content": [
         {"toolUse": {"toolUseId": "s1", "name": "nova_code_interpreter", "input": {},
                      "type": "server_tool_use"}},
         {"toolResult": {"toolUseId": "s1", "content": [{"json": {}}], "type": "x_result"}},
         {"text": "done"}]}, B_USER],
      "toolConfig": {"tools": [B_SPEC, {"systemTool": {"name": "nova_code_interpreter"}}]}},
     HEADERS["bedrock"]),
    ("mistral user right after a tool message", "/mistral/v1/chat/completions",
     {"model": "mistral-large-latest", "messages": [
         USER, {"role": "assistant", "tool_calls": [M_CALL]},
         {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"}, USER]}, BEARER),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body", "headers"), [c[1:] for c in ACCEPTED],
                         ids=[c[0] for c in ACCEPTED])  # fmt: skip
def test_what_the_real_apis_accept_is_accepted(
    server: MockLLMServer, client: httpx.Client, path: str, body: Any, headers: dict[str, str]
) -> None:
    provider = path.split("/")[1]
    server.reset()
    server.enqueue(provider, text="ok")
    resp = client.post(server.url + path, json=body, headers=headers)
    assert (resp.status_code, server.last_request(provider).rejected_by) == (200, None)
