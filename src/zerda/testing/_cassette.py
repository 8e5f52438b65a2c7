"""Record and replay (DESIGN.md §16): a cassette is one JSON file of HTTP exchanges.

``Recorder`` forwards a request to the provider's upstream base URL, hands the answer back
as it arrives (streams chunk by chunk) and appends the exchange to the cassette, rewritten
whole after each exchange so an interrupted run keeps what it recorded. ``Player`` answers
from a cassette: the first unused exchange with the same provider, method, path, query and
body (JSON bodies compared as values, so key order does not matter), in any order; once all
of those are used, the last one again.

Format (``"zerda_cassette": 1``)::

    {"zerda_cassette": 1, "interactions": [{
        "provider": "openai",
        "request": {"method", "path", "query", "headers", "body" | "body_base64"},
        "response": {"status", "headers", "body_base64" | "chunks_base64": [...]}}]}

Credentials never reach the file: the request headers that carry them are redacted and a
``key`` query parameter (Gemini) is replaced by ``<redacted>``; response cookies are dropped.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from zerda.llm import registry
from zerda.testing import wires
from zerda.testing._script import RecordedRequest

VERSION = 1
REDACTED = "<redacted>"
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token", "cookie"}
)
SECRET_QUERY = frozenset({"key", "api_key"})
# Hop-by-hop and framing headers: the mock's own HTTP layer sets them.
_FRAMING = frozenset(
    {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding", "host"}
)
_DROPPED_RESPONSE = frozenset({"set-cookie"})
_READ_SIZE = 65536
_TIMEOUT = 600.0


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes | None = None  # a plain response
    chunks: list[bytes] | None = None  # a chunked (streamed) response, piece by piece


@dataclass
class Exchange:
    provider: str
    method: str
    path: str
    query: dict[str, str]
    body_key: str
    response: Response


def _body_key(raw: bytes) -> str:
    """The body as matching compares it: canonical JSON when it parses, else base64."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):
        return "base64:" + base64.b64encode(raw).decode("ascii")


def _public_query(query: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if k in SECRET_QUERY else v) for k, v in query.items()}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Player:
    """Answers requests from a cassette file."""

    def __init__(self, path: Path, exchanges: list[Exchange]) -> None:
        self.path = path
        self._exchanges = exchanges
        self._used: set[int] = set()
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Player:
        file = Path(path)
        data = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("zerda_cassette") != VERSION:
            raise ValueError(f"{file}: not a Zerda cassette (version {VERSION})")
        return cls(file, [_exchange(item) for item in data.get("interactions", [])])

    def match(self, req: RecordedRequest) -> Exchange | None:
        key = (
            req.provider,
            req.method,
            req.path,
            _public_query(req.query),
            _body_key(req.raw_body),
        )
        with self._lock:
            found = [
                i
                for i, e in enumerate(self._exchanges)
                if (e.provider, e.method, e.path, e.query, e.body_key) == key
            ]
            unused = [i for i in found if i not in self._used]
            if not found:
                return None
            index = unused[0] if unused else found[-1]
            self._used.add(index)
            return self._exchanges[index]


def _exchange(item: dict[str, Any]) -> Exchange:
    request, response = item["request"], item["response"]
    if "body_base64" in request:
        raw = base64.b64decode(request["body_base64"])
    elif request.get("body") is not None:
        raw = json.dumps(request["body"]).encode("utf-8")
    else:
        raw = b""
    chunks = response.get("chunks_base64")
    return Exchange(
        provider=item["provider"],
        method=request["method"],
        path=request["path"],
        query=dict(request.get("query") or {}),
        body_key=_body_key(raw),
        response=Response(
            status=int(response["status"]),
            headers=dict(response.get("headers") or {}),
            body=base64.b64decode(response.get("body_base64", "")) if chunks is None else None,
            chunks=[base64.b64decode(c) for c in chunks] if chunks is not None else None,
        ),
    )


@dataclass
class Upstream:
    """An upstream answer being passed through; what was read is kept for the cassette."""

    status: int
    headers: dict[str, str]
    chunked: bool
    _response: http.client.HTTPResponse | None
    received: list[bytes] = field(default_factory=list)

    def chunks(self) -> Iterator[bytes]:
        while self._response is not None:
            piece = self._response.read1(_READ_SIZE)
            if not piece:
                return
            self.received.append(piece)
            yield piece

    def read(self) -> bytes:
        body = b"".join([*self.received, *self.chunks()])
        self.received = [body]
        return body


class Recorder:
    """Proxies the providers in ``upstream`` and appends each exchange to the cassette."""

    def __init__(self, path: str | os.PathLike[str], upstream: dict[str, str]) -> None:
        self.path = Path(path)
        self.upstream = {p: u.rstrip("/") for p, u in upstream.items()}
        self._interactions: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def proxies(self, provider: str) -> bool:
        return provider in self.upstream

    def open(self, req: RecordedRequest, headers: dict[str, str], raw_path: str) -> Upstream:
        """Send ``req`` upstream (credentials included: the upstream needs them)."""
        target = urlsplit(self.upstream[req.provider])
        connection_class = (
            http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
        )
        connection = connection_class(target.netloc, timeout=_TIMEOUT)
        forwarded = {k: v for k, v in headers.items() if k not in _FRAMING}
        forwarded["accept-encoding"] = "identity"  # bytes the client can read as they are
        path = target.path + _relative_path(req.provider, raw_path)
        try:
            connection.request(req.method, path, body=req.raw_body or None, headers=forwarded)
            response = connection.getresponse()
        except OSError as exc:
            message = f"MockLLMServer: upstream {target.netloc} failed: {type(exc).__name__}"
            body = json.dumps({"error": {"message": message, "type": "mock_error"}}).encode()
            upstream = Upstream(502, {"content-type": "application/json"}, False, None)
            upstream.received = [body]
            return upstream
        response_headers = {
            k.lower(): v
            for k, v in response.getheaders()
            if k.lower() not in _FRAMING and k.lower() not in _DROPPED_RESPONSE
        }
        return Upstream(response.status, response_headers, bool(response.chunked), response)

    def save(self, req: RecordedRequest, upstream: Upstream) -> None:
        interaction = {
            "provider": req.provider,
            "request": _request_record(req),
            "response": _response_record(upstream),
        }
        with self._lock:
            self._interactions.append(interaction)
            data = {"zerda_cassette": VERSION, "interactions": self._interactions}
            self.path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def _relative_path(provider: str, raw_path: str) -> str:
    """The request path after the base URL ``MockLLMServer.base_url(provider)`` gives the SDK
    (``/<provider>`` and the wire's ``base_path``: ``/v1`` for every OpenAI-shaped row), query
    included: the upstream base URL (the one the SDK would use, ``.../v1`` for those rows)
    takes its place, so a request is never forwarded to ``.../v1/v1/...``."""
    parts = urlsplit(raw_path)
    _, _, rest = parts.path.lstrip("/").partition("/")  # the /<provider> segment (or alias)
    path = "/" + rest
    base_path = _base_path(provider)
    if base_path and (path == base_path or path.startswith(base_path + "/")):
        path = path[len(base_path) :]
    return path + (f"?{parts.query}" if parts.query else "")


def _base_path(provider: str) -> str:
    """What the mock's base URL for ``provider`` adds after ``/<provider>`` (its wire's
    ``MockWire.base_path``)."""
    return wires.mock_wire(registry.get(provider).wire).base_path


def _request_record(req: RecordedRequest) -> dict[str, Any]:
    record: dict[str, Any] = {
        "method": req.method,
        "path": req.path,
        "query": _public_query(req.query),
        "headers": {k: (REDACTED if k in SECRET_HEADERS else v) for k, v in req.headers.items()},
    }
    if req.body is not None:
        record["body"] = req.body
    elif req.raw_body:
        record["body_base64"] = _b64(req.raw_body)
    return record


def _response_record(upstream: Upstream) -> dict[str, Any]:
    record: dict[str, Any] = {"status": upstream.status, "headers": upstream.headers}
    if upstream.chunked:
        record["chunks_base64"] = [_b64(c) for c in upstream.received]
    else:
        record["body_base64"] = _b64(b"".join(upstream.received))
    return record


__all__ = ["Exchange", "Player", "Recorder", "Response"]
