"""MockLLMServer: a local HTTP server that speaks every provider's wire protocol.

One server answers every provider at once; the first path segment names the provider
(``/openai/v1/chat/completions``, ``/bedrock/model/{id}/converse`` ...) and its registry row
names the wire protocol spoken there. Everything about a wire lives in its own folder,
``zerda.testing.wires.<wire>``, whose ``WIRE`` (a ``MockWire``, ``_wire.py``) this server reads:
routes, client options, the renderer and validation modules, error and request-id
conventions. No wire is named here. Each wire's renderer module is imported the first time
that wire is called, so a missing renderer only breaks its own wire; wires that differ only
in their routes (Azure's, Vertex AI's) name another wire's renderer.

Renderer interface (pure functions, no I/O)::

    wants_stream(req: RecordedRequest) -> bool
    render(script: Script, req: RecordedRequest) -> Reply      # JSON (body) or stream (chunks)
    render_error(err: ErrorReply) -> Reply                     # the provider's error body
    render_stream_error(err: ErrorReply) -> bytes | None       # optional: in-stream error event
    render_count(script: Script, req: RecordedRequest) -> Reply  # a wire with count_paths

A request to a wire's token-counting endpoint (``MockWire.count_paths``) is answered like
any other (validated, then the next queued answer), with ``render_count``; with nothing
queued it is answered too, with a count of the request itself (``_counting.py``).

The server owns everything about timing and transport: ``delay``, ``chunk_delay``,
``cut_after``, ``stream_error`` placement, ``invalid_json_body``, faults and raw replay.

Before answering, a strict server (the default) checks the request as the real API does
(``_validate.py`` and each wire's ``validate.py``); a broken rule is answered with
the provider's own error. ``record_to``/``upstream`` proxy and record, ``replay_from``
replays a cassette (``_cassette.py``).
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import re
import socket
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from zerda.llm import registry
from zerda.llm._server_tools import SERVER_CALL_TYPES
from zerda.testing import _batches, _cassette, _validate, wires
from zerda.testing._modellike import model_like_answer
from zerda.testing._script import (
    ErrorReply,
    Fault,
    FaultKind,
    Queued,
    Raw,
    RecordedRequest,
    Reply,
    Responder,
    Script,
    ScriptedCall,
    refusal_as_text,
)
from zerda.testing._wire import MockWire

# Every registry row is served under /<name>/, in its row's wire protocol.
PROVIDERS = registry.NAMES
ALIASES = registry.ALIASES

_REDACTED_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token", "cookie"}
)
_SCRIPT_FIELDS = frozenset(f.name for f in fields(Script))
_POLL_INTERVAL = 0.05  # how fast stop() is noticed by serve_forever
_HANG_LIMIT = 60.0  # a hang with no delay waits this long at most (or until stop())
_MALFORMED_BODY = b'{"mock": "malformed", this is not json'


def normalize_provider(provider: str) -> str:
    """Return the canonical provider name for ``provider`` (aliases resolved)."""
    name = ALIASES.get(provider.lower(), provider.lower())
    if name not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    return name


def wire_of(provider: str) -> str:
    """The wire protocol a provider's row speaks (its renderer, routes and client options)."""
    return registry.get(provider).wire


def wire_for(provider: str) -> MockWire:
    """The declared :class:`MockWire` of the wire ``provider``'s row speaks."""
    return wires.mock_wire(wire_of(provider))


def _optional_provider(provider: str | None) -> str | None:
    return None if provider is None else normalize_provider(provider)


class RendererMissing(Exception):
    """The renderer module for a provider does not exist (yet)."""


_renderers: dict[str, ModuleType] = {}
_renderers_lock = threading.Lock()


def load_renderer(wire: str) -> ModuleType:
    """Return the renderer module ``wire`` declares (``MockWire.renderer``), imported once."""
    name = wires.mock_wire(wire).renderer
    with _renderers_lock:
        if name not in _renderers:
            try:
                _renderers[name] = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    raise
                raise RendererMissing(
                    f"MockLLMServer: no renderer for wire {wire!r} ({name} is missing)"
                ) from exc
        return _renderers[name]


def _redact(headers: dict[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k in _REDACTED_HEADERS else v) for k, v in headers.items()}


def _parse_json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # a body nested ~1,000 levels is not an error here
        return None


def _to_call(call: ScriptedCall | dict[str, Any]) -> ScriptedCall:
    if isinstance(call, ScriptedCall):
        return call
    return ScriptedCall(name=call["name"], arguments=call.get("arguments", {}), id=call.get("id"))


def make_script(fields_: dict[str, Any]) -> Script:
    """Build a Script from keyword fields; tool calls may be plain dicts."""
    unknown = set(fields_) - _SCRIPT_FIELDS
    if unknown:
        raise TypeError(f"unknown Script field(s): {', '.join(sorted(unknown))}")
    values = dict(fields_)
    values["tool_calls"] = [_to_call(c) for c in values.get("tool_calls") or []]
    _check_hosted_script(values)
    if isinstance(values.get("stream_error"), dict):
        values["stream_error"] = ErrorReply(**values["stream_error"])
    return Script(**values)


# The types a result's server_tool_calls take: the library's own list.
_SERVER_CALL_TYPES = SERVER_CALL_TYPES


def _check_hosted_script(values: dict[str, Any]) -> None:
    """server_tool_calls= and citations= of enqueue (DESIGN §18), checked when queued: a
    mistake in a test's script fails where it is written."""
    for j, call in enumerate(values.get("server_tool_calls") or []):
        if not isinstance(call, dict) or call.get("type") not in _SERVER_CALL_TYPES:
            raise TypeError(
                f"server_tool_calls[{j}] must be a dict whose 'type' is one of "
                f"{', '.join(_SERVER_CALL_TYPES)}"
            )
    text = values.get("text") or ""
    for j, cited in enumerate(values.get("citations") or []):
        start, end = (cited.get("start"), cited.get("end")) if isinstance(cited, dict) else (0, -1)
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(text)):
            raise TypeError(
                f"citations[{j}] must be a dict with 'url' and character offsets 'start' <= "
                f"'end' within the script's text ({len(text)} characters)"
            )


def answer_from(responder: Responder, req: RecordedRequest) -> Script | ErrorReply:
    """A ``respond_with`` function's answer; its failure is the test's bug, answered as a
    500 that names it (never a silent success)."""
    try:
        answer = responder.respond(req)
        return make_script(answer) if isinstance(answer, dict) else answer
    except Exception as exc:
        message = f"MockLLMServer: the respond_with function failed: {type(exc).__name__}: {exc}"
        return ErrorReply(500, message)


def decode_recorded_body(response: dict[str, Any]) -> bytes:
    """Return the bytes of a recorded fixture response (body_encoding json/text/base64)."""
    encoding = response.get("body_encoding", "json")
    body = response.get("body")
    if encoding == "base64":
        return base64.b64decode(body or "")
    if encoding == "text":
        return (body or "").encode("utf-8")
    if body is None:
        return b""
    return json.dumps(body).encode("utf-8")


@dataclass
class _Route:
    provider: str | None  # None: the prefix names no provider
    path: str  # without the prefix
    known: bool  # the path is one of the provider's endpoints


def _split_route(raw_path: str) -> _Route:
    path = urlsplit(raw_path).path
    prefix, _, rest = path.lstrip("/").partition("/")
    try:
        provider = normalize_provider(prefix)
    except ValueError:
        return _Route(None, path, False)
    rest = "/" + rest
    known = any(p.fullmatch(rest) for p in wire_for(provider).routes) or counts(provider, rest)
    return _Route(provider, rest, known)


def counts(provider: str, path: str) -> bool:
    """Whether ``path`` is the token-counting endpoint of ``provider``'s wire."""
    pattern = wire_for(provider).count_paths
    return pattern is not None and pattern.fullmatch(path) is not None


class _State:
    """Queues, defaults and the request log, guarded by one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queues: dict[str | None, deque[Queued]] = {}
        self.defaults: dict[str | None, Queued | Responder] = {}
        self.log: list[RecordedRequest] = []

    def push(self, provider: str | None, item: Queued) -> None:
        with self.lock:
            self.queues.setdefault(provider, deque()).append(item)

    def pop(self, provider: str) -> Queued | Responder | None:
        """Provider queue first, then the shared queue, then the defaults."""
        with self.lock:
            for key in (provider, None):
                queue = self.queues.get(key)
                if queue:
                    return queue.popleft()
            for key in (provider, None):
                if key in self.defaults:
                    return self.defaults[key]
        return None

    def record(self, req: RecordedRequest) -> None:
        with self.lock:
            self.log.append(req)

    def clear(self) -> None:
        with self.lock:
            self.queues.clear()
            self.defaults.clear()
            self.log.clear()


class MockLLMServer:
    """A real HTTP server on 127.0.0.1 speaking every registry row's wire protocol (OpenAI
    Chat Completions and Responses, Azure, Groq, Mistral, Ollama, Anthropic and Claude on
    Bedrock / Vertex AI, Bedrock Converse, Gemini and Vertex AI), for tests.

    Use it as a context manager (``with MockLLMServer() as server:``), via the pytest
    fixture ``mock_llm_server``, or in the foreground with ``run_forever()``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        strict: bool = True,
        record_to: str | os.PathLike[str] | None = None,
        upstream: dict[str, str] | None = None,
        replay_from: str | os.PathLike[str] | None = None,
    ) -> None:
        """``strict``: refuse what the real API refuses (DESIGN.md §17). ``record_to`` with
        ``upstream`` (provider -> the base URL its SDK would use): proxy those providers and
        write every exchange to the cassette at ``record_to``. ``replay_from``: answer from a
        cassette, byte for byte."""
        if record_to is not None and replay_from is not None:
            raise ValueError("record_to and replay_from cannot be used together")
        if (record_to is None) != (upstream is None):
            raise ValueError("record_to and upstream go together")
        self._host = host
        self._port = port
        self.strict = strict
        self._recorder = (
            _cassette.Recorder(record_to, {normalize_provider(p): u for p, u in upstream.items()})
            if record_to is not None and upstream is not None
            else None
        )
        self._player = _cassette.Player.load(replay_from) if replay_from is not None else None
        self._state = _State()
        self._batches = _batches.BatchStore()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        wires.load_all()  # every wire's declaration, at start: a missing folder fails here

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> MockLLMServer:
        """Start serving in a background daemon thread; return self."""
        if self._httpd is None:
            self._httpd = self._bind()
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                args=(_POLL_INTERVAL,),
                name="MockLLMServer",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; hanging requests are released."""
        self._stopping.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def run_forever(self) -> None:
        """Serve in the foreground until interrupted (for ``zerda mock-server``)."""
        self._httpd = self._bind()
        try:
            self._httpd.serve_forever(_POLL_INTERVAL)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _bind(self) -> _HTTPServer:
        self._stopping.clear()
        httpd = _HTTPServer((self._host, self._port), _Handler)
        httpd.mock = self
        self._port = httpd.server_address[1]
        return httpd

    # -- addresses --------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the port is known once started)."""
        return f"http://{self._host}:{self._port}"

    def base_url(self, provider: str) -> str:
        """The base URL the provider's SDK (or ``create_interface``) takes."""
        name = normalize_provider(provider)
        return f"{self.url}/{name}{wire_for(name).base_path}"

    def client_options(self, provider: str) -> dict[str, Any]:
        """Keyword arguments for zerda's ``create_interface`` pointing at this server."""
        name = normalize_provider(provider)
        return wire_for(name).client_options(self.base_url(name))

    def sdk_client_kwargs(self, provider: str) -> dict[str, Any]:
        """Keyword arguments for the provider's own SDK client constructor."""
        name = normalize_provider(provider)
        return wire_for(name).sdk_client_kwargs(self.base_url(name))

    # -- queueing ---------------------------------------------------------------------

    def enqueue(self, provider: str | None = None, **script_fields: Any) -> Script:
        """Queue one successful response (any ``Script`` field); ``provider=None`` queues
        it for whichever provider asks next. Tool calls may be dicts
        ``{"name", "arguments", "id"?}``. Returns the queued Script."""
        script = make_script(script_fields)
        self.enqueue_item(script, provider)
        return script

    def enqueue_error(
        self,
        status: int,
        provider: str | None = None,
        *,
        message: str = "mock error",
        retry_after: float | None = None,
        error_type: str | None = None,
        delay: float = 0.0,
        fields: dict[str, Any] | None = None,
    ) -> ErrorReply:
        """Queue an HTTP error with the provider's own error body (and ``Retry-After``);
        ``fields`` are merged into the error object, e.g. Groq's
        ``{"code": "tool_use_failed", "failed_generation": "..."}``."""
        err = ErrorReply(status, message, error_type, retry_after, delay, fields=fields)
        self.enqueue_item(err, provider)
        return err

    def enqueue_fault(
        self, kind: FaultKind, provider: str | None = None, delay: float = 0.0
    ) -> Fault:
        """Queue a transport fault: ``drop``, ``malformed``, ``empty`` or ``hang``."""
        if kind not in ("drop", "malformed", "empty", "hang"):
            raise ValueError(f"unknown fault {kind!r}; expected drop, malformed, empty or hang")
        fault = Fault(kind, delay)
        self.enqueue_item(fault, provider)
        return fault

    def enqueue_batch_fault(
        self,
        provider: str | None = None,
        *,
        status: int | None = None,
        message: str = "mock error",
        error_type: str | None = None,
        retry_after: float | None = None,
        fields: dict[str, Any] | None = None,
        delay: float = 0.0,
        path: str | None = None,
        body: bytes | str | None = None,
    ) -> _batches.BatchFault:
        """Script the next batch API request (files, jobs, status, results; Bedrock's S3)
        of ``provider`` whose path matches the regex ``path``: it waits ``delay`` seconds,
        then gets ``body`` as it is (``status``, 200 by default: a results file the provider
        broke), else the provider's error ``status`` (as ``enqueue_error``'s), else its
        usual answer. A 503 while a job is polled, an error that echoes the key, a slow
        status answer. The queues answer the batch's items, not these requests."""
        err = raw = None
        if body is not None:
            raw = Reply(
                status or 200, {"content-type": "application/octet-stream"}, _as_bytes(body)
            )
        elif status is not None:
            err = ErrorReply(status, message, error_type, retry_after, fields=fields)
        pattern = None if path is None else re.compile(path)
        fault = _batches.BatchFault(_optional_provider(provider), pattern, delay, err, raw)
        self._batches.add_fault(fault)
        return fault

    def enqueue_raw(
        self,
        status: int,
        body: bytes | str | dict[str, Any] | list[Any],
        headers: dict[str, str] | None = None,
        provider: str | None = None,
        chunk_size: int | None = None,
    ) -> Raw:
        """Queue a response served byte for byte (a str is UTF-8 encoded, a dict or list
        JSON-encoded); ``chunk_size`` streams it in pieces."""
        raw = Raw(status, _as_bytes(body), dict(headers or {}), chunk_size)
        self.enqueue_item(raw, provider)
        return raw

    def enqueue_recorded(
        self,
        *args: str | dict[str, Any] | None,
        provider: str | None = None,
        fixture: dict[str, Any] | None = None,
        chunk_size: int | None = None,
    ) -> Raw:
        """Queue a recorded exchange (a ``shared/fixtures/recorded`` file, parsed) verbatim:
        ``enqueue_recorded(provider, fixture)``, the provider first as in ``enqueue``
        (``None``: the shared queue), or by keyword. The older order ``(fixture, provider)``
        still works: the fixture is the dict, the provider the name.

        Streams are sent in chunks (``chunk_size``, default 512 bytes)."""
        provider, fixture = _recorded_arguments(args, provider, fixture)
        response = fixture["response"]
        headers = dict(response.get("headers") or {})
        if response.get("body_encoding", "json") == "json":
            headers.setdefault("content-type", "application/json")
        streaming = bool(fixture.get("streaming"))
        size = chunk_size if chunk_size is not None else (512 if streaming else None)
        raw = Raw(int(response["status"]), decode_recorded_body(response), headers, size)
        self.enqueue_item(raw, provider)
        return raw

    def enqueue_item(self, item: Queued, provider: str | None = None) -> None:
        """Queue a ready-made Script, ErrorReply, Fault or Raw."""
        if not isinstance(item, Script | ErrorReply | Fault | Raw):
            raise TypeError(f"cannot queue {type(item).__name__}")
        self._state.push(_optional_provider(provider), item)

    def set_default(self, provider: str | None = None, **script_fields: Any) -> Script:
        """Answer with this Script whenever the queues are empty (per provider or shared)."""
        script = make_script(script_fields)
        with self._state.lock:
            self._state.defaults[_optional_provider(provider)] = script
        return script

    def respond_with(
        self,
        respond: Callable[[RecordedRequest], Script | ErrorReply | dict[str, Any]],
        provider: str | None = None,
    ) -> None:
        """Whenever the queues are empty (per provider or shared), answer with
        ``respond(request)``: a Script, an ErrorReply or a dict of Script fields computed from
        the request (its ``body`` is the provider's native JSON). A default that depends on
        what was asked: an answer that echoes the prompt, a tool call on the first turn and
        text after the tool's result. It runs on the server's handler threads."""
        with self._state.lock:
            self._state.defaults[_optional_provider(provider)] = Responder(respond)

    def answer_like_a_model(self, provider: str | None = None) -> None:
        """Whenever the queues are empty (per provider or shared), answer each request as a
        model would, from what it offers and asks (``_modellike.py``): a call to the tool
        it offers (the one tool_choice names, else the first; arguments its schema
        accepts) unless its last turn is a tool's result; JSON its schema accepts when it
        asks for structured output; else the text ``Done.``. JSON and streams alike, so
        code written for a real model (a tool loop, a stream consumer) runs as it would
        there. It replaces the default ``set_default`` or ``respond_with`` set."""
        self.respond_with(model_like_answer, provider)

    def load_script(self, path: str | os.PathLike[str]) -> int:
        """Queue the responses of a JSON script file (see ``zerda mock-server --script``);
        return how many were queued. Raises ``ValueError`` naming the file and entry."""
        from zerda.testing._scriptfile import load_script

        return load_script(self, path)

    def pending(self, provider: str | None = None) -> int:
        """How many queued responses are waiting (in one queue; None: the shared one)."""
        with self._state.lock:
            return len(self._state.queues.get(_optional_provider(provider), ()))

    def reset(self) -> None:
        """Clear queues, defaults, the request log and batch jobs and files."""
        self._state.clear()
        self._batches.clear()

    # -- request log ------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.log)

    def requests_for(self, provider: str) -> list[RecordedRequest]:
        name = normalize_provider(provider)
        return [r for r in self.requests if r.provider == name]

    def last_request(self, provider: str | None = None) -> RecordedRequest:
        """The latest request (for ``provider`` when given); LookupError when none."""
        log = self.requests if provider is None else self.requests_for(provider)
        if not log:
            raise LookupError(f"MockLLMServer received no request{_for(provider)}")
        return log[-1]

    # -- used by the handler ------------------------------------------------------------

    def _next(self, provider: str) -> Queued | Responder | None:
        return self._state.pop(provider)

    def _record(self, req: RecordedRequest) -> None:
        self._state.record(req)


def _recorded_arguments(
    args: tuple[str | dict[str, Any] | None, ...],
    provider: str | None,
    fixture: dict[str, Any] | None,
) -> tuple[str | None, dict[str, Any]]:
    """``enqueue_recorded``'s positional arguments told apart by kind (a dict is the
    fixture, a name or None the provider), whatever their order; each given once."""
    usage = "enqueue_recorded(provider, fixture) takes a provider name (or None) and a fixture dict"
    if len(args) > 2:
        raise TypeError(f"{usage}; got {len(args)} positional arguments")
    fixtures = [a for a in args if isinstance(a, dict)]
    names = [a for a in args if not isinstance(a, dict)]
    if len(fixtures) + (fixture is not None) != 1:
        raise TypeError(f"{usage}: give exactly one fixture dict")
    if len(names) + (provider is not None) > 1 or not all(isinstance(n, str | None) for n in names):
        raise TypeError(f"{usage}: give at most one provider, as a name")
    name = provider if provider is not None else (names[0] if names else None)
    return name, fixture if fixture is not None else fixtures[0]


def _for(provider: str | None) -> str:
    return "" if provider is None else f" for {provider}"


def _as_bytes(body: bytes | str | dict[str, Any] | list[Any]) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body).encode("utf-8")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # many parallel clients connect at once in tests
    mock: MockLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client goes away (closed keep-alive connections, timeouts)."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body waits for the
    # client's delayed ACK (~40 ms per keep-alive response).
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Silence the default stderr access log."""

    def do_GET(self) -> None:  # noqa: N802
        self._handle()

    def do_POST(self) -> None:  # noqa: N802
        self._handle()

    def do_PUT(self) -> None:  # noqa: N802
        self._handle()

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle()

    # -- request --------------------------------------------------------------------

    def _handle(self) -> None:
        mock = self.server.mock
        raw_body = self._read_body()
        route = _split_route(self.path)
        req = RecordedRequest(
            provider=route.provider or "",
            method=self.command,
            path=route.path,
            query=dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True)),
            headers=_redact(self._headers()),
            body=_parse_json(raw_body),
            raw_body=raw_body,
        )
        mock._record(req)
        self._responded = False
        try:
            self._dispatch(mock, route, req)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a renderer bug: tell the client instead of hanging up
            traceback.print_exc()
            if self._responded:
                self._drop()
            else:
                message = f"MockLLMServer: failed to answer {req.provider} {req.path}: {exc!r}"
                self._send_plain(500, _generic_error(message))

    def send_response(self, code: int, message: str | None = None) -> None:
        self._responded = True
        super().send_response(code, message)

    def _headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            out[key] = f"{out[key]}, {value}" if key in out else value
        return out

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    # -- dispatch -------------------------------------------------------------------

    def _dispatch(self, mock: MockLLMServer, route: _Route, req: RecordedRequest) -> None:
        if route.provider is None:
            message = (
                f"MockLLMServer: unknown provider prefix in {req.method} {self.path}; "
                f"expected /<provider>/... with provider one of {', '.join(PROVIDERS)}"
            )
            self._send_plain(404, _generic_error(message))
            return
        provider = route.provider
        if mock._player is not None:
            self._replay(mock._player, req)
        elif mock._recorder is not None and mock._recorder.proxies(provider):
            self._proxy(mock._recorder, req)
        elif _batches.is_batch_path(wire_of(provider), route.path):
            self._serve_batch(mock, provider, req)
        elif not route.known:
            self._serve_unknown_path(provider, req)
        elif not self._refused(mock, provider, req):
            self._serve_queued(mock, provider, req)

    def _serve_unknown_path(self, provider: str, req: RecordedRequest) -> None:
        answer = wire_for(provider).unknown_path(provider, req)
        if isinstance(answer, Raw):
            self._serve_raw(answer)
        else:
            self._send_error_reply(provider, answer)

    def _refused(self, mock: MockLLMServer, provider: str, req: RecordedRequest) -> bool:
        """Answer the error the API gives a request it refuses (a missing required query
        parameter, or a broken validation rule on a strict server); True when it did."""
        required = wire_for(provider).required_query
        if required and required not in req.query:
            message = f"Resource not found (MockLLMServer: {provider} needs ?{required}=)"
            self._send_error_reply(provider, ErrorReply(404, message))
            return True
        rejection = _validate.check(wire_of(provider), req) if mock.strict else None
        if rejection is None:
            return False
        req.rejected_by = rejection.rule
        self._send_error_reply(provider, rejection.to_error())
        return True

    def _serve_queued(self, mock: MockLLMServer, provider: str, req: RecordedRequest) -> None:
        """Answer with the next queued item (or the default, or ``respond_with``'s)."""
        item = mock._next(provider)
        if isinstance(item, Responder):
            item = answer_from(item, req)
        if item is None and counts(provider, req.path):
            item = Script()  # a count needs no script: the request's own count answers
        if item is None:
            message = f"MockLLMServer: nothing queued for {provider} {req.method} {req.path}"
            self._send_error_reply(provider, ErrorReply(400, message))
        elif isinstance(item, Fault):
            self._serve_fault(mock, item)
        elif isinstance(item, Raw):
            self._serve_raw(item)
        elif isinstance(item, ErrorReply):
            self._sleep(mock, item.delay)
            self._send_error_reply(provider, item)
        else:
            self._serve_script(mock, provider, item, req)

    def _serve_batch(self, mock: MockLLMServer, provider: str, req: RecordedRequest) -> None:
        """The batch APIs (``_batches.py`` and the wire's ``batches.py``): files, jobs,
        status, results."""
        renderer = load_renderer(wire_of(provider))
        host = self.headers.get("Host") or f"{mock._host}:{mock._port}"
        reply = _batches.handle(mock, wire_of(provider), req, renderer, host)
        self._send_reply(_with_request_id(provider, reply))

    def _serve_script(
        self, mock: MockLLMServer, provider: str, script: Script, req: RecordedRequest
    ) -> None:
        try:
            renderer = load_renderer(wire_of(provider))
        except RendererMissing as exc:
            self._send_plain(501, _generic_error(str(exc)))
            return
        self._sleep(mock, script.delay)
        if not getattr(renderer, "REFUSAL_FIELD", False):  # no refusal field of its own
            script = refusal_as_text(script, getattr(renderer, "REFUSAL_STOP", "content_filter"))
        if counts(provider, req.path):
            reply = renderer.render_count(script, req)
        else:
            reply = renderer.render(script, req)
        if reply.chunks is None:
            if script.invalid_json_body and reply.body:
                # Half of a JSON document is never valid JSON.
                reply = replace(reply, body=reply.body[: len(reply.body) // 2])
            self._send_reply(_with_request_id(provider, reply))
            return
        self._stream_script(mock, renderer, script, _with_request_id(provider, reply))

    def _stream_script(
        self, mock: MockLLMServer, renderer: ModuleType, script: Script, reply: Reply
    ) -> None:
        chunks = list(reply.chunks or [])
        cut = script.cut_after is not None and script.cut_after < len(chunks)
        if script.cut_after is not None:
            chunks = chunks[: script.cut_after]
        elif script.stream_error is not None and reply.closing_chunks:
            # The error ends the stream in place of its normal closing chunks.
            chunks = chunks[: len(chunks) - reply.closing_chunks]
        error_event = self._stream_error_event(renderer, script)
        if script.stream_error is not None:
            if error_event is None:
                cut = True  # no in-stream error form: the connection just drops
            else:
                chunks.append(error_event)
                cut = False
        self._start_stream(reply)
        for i, chunk in enumerate(chunks):
            if i and script.chunk_delay:
                self._sleep(mock, script.chunk_delay)
            self._write_chunk(chunk)
        if cut:
            self._drop()
        else:
            self._end_stream()

    @staticmethod
    def _stream_error_event(renderer: ModuleType, script: Script) -> bytes | None:
        render_stream_error = getattr(renderer, "render_stream_error", None)
        if script.stream_error is None or render_stream_error is None:
            return None
        event: bytes | None = render_stream_error(script.stream_error)
        return event

    def _serve_fault(self, mock: MockLLMServer, fault: Fault) -> None:
        if fault.kind == "hang":
            self._sleep(mock, fault.delay if fault.delay > 0 else _HANG_LIMIT)
            self._drop()
            return
        self._sleep(mock, fault.delay)
        if fault.kind == "drop":
            self._drop()
        elif fault.kind == "malformed":
            self._send_plain(200, _MALFORMED_BODY)
        else:
            self._send_plain(200, b"")

    def _serve_raw(self, raw: Raw) -> None:
        reply = Reply(raw.status, raw.headers, body=raw.body)
        if not raw.chunk_size:
            self._send_reply(reply)
            return
        size = raw.chunk_size
        pieces = [raw.body[i : i + size] for i in range(0, len(raw.body), size)]
        self._start_stream(Reply(raw.status, raw.headers, chunks=pieces))
        for piece in pieces:
            self._write_chunk(piece)
        self._end_stream()

    def _send_error_reply(self, provider: str, err: ErrorReply) -> None:
        try:
            reply = load_renderer(wire_of(provider)).render_error(err)
        except RendererMissing:
            reply = Reply(
                err.status, {"content-type": "application/json"}, body=_generic_error(err.message)
            )
        if err.retry_after is not None:
            reply = replace(reply, headers={**_retry_headers(err.retry_after), **reply.headers})
        if err.body is not None:
            reply = replace(reply, body=json.dumps(err.body).encode("utf-8"))
        self._send_reply(_with_request_id(provider, reply))

    # -- record and replay ----------------------------------------------------------

    def _replay(self, player: _cassette.Player, req: RecordedRequest) -> None:
        exchange = player.match(req)
        if exchange is None:
            message = (
                f"MockLLMServer: no recording matched {req.method} {req.path} for "
                f"{req.provider} in {player.path}"
            )
            self._send_error_reply(req.provider, ErrorReply(400, message))
            return
        response = exchange.response
        if response.chunks is None:
            self._send_reply(Reply(response.status, response.headers, body=response.body))
            return
        self._start_stream(Reply(response.status, response.headers, chunks=response.chunks))
        for chunk in response.chunks:
            self._write_chunk(chunk)
        self._end_stream()

    def _proxy(self, recorder: _cassette.Recorder, req: RecordedRequest) -> None:
        """Forward to the upstream, pass the answer through as it arrives, record it."""
        upstream = recorder.open(req, self._headers(), self.path)
        if upstream.chunked:
            self._start_stream(Reply(upstream.status, upstream.headers))
            for chunk in upstream.chunks():
                self._write_chunk(chunk)
            self._end_stream()
        else:
            self._send_reply(Reply(upstream.status, upstream.headers, body=upstream.read()))
        recorder.save(req, upstream)

    # -- writing --------------------------------------------------------------------

    def _send_plain(self, status: int, body: bytes) -> None:
        self._send_reply(Reply(status, {"content-type": "application/json"}, body=body))

    def _send_reply(self, reply: Reply) -> None:
        body = reply.body or b""
        self.send_response(reply.status)
        for name, value in _without_framing(reply.headers).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _start_stream(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in _without_framing(reply.headers).items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        if data:  # an empty chunk would end the chunked body
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection at once, mid-response if one was started."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    @staticmethod
    def _sleep(mock: MockLLMServer, seconds: float) -> None:
        if seconds > 0:
            # Waiting on the stop event lets stop() release sleeping handlers at once.
            mock._stopping.wait(seconds)


def _without_framing(headers: dict[str, str]) -> dict[str, str]:
    """Drop headers the server sets itself (recorded ones would contradict the framing)."""
    skip = {"content-length", "transfer-encoding", "connection", "content-encoding"}
    return {k: v for k, v in headers.items() if k.lower() not in skip}


def _retry_headers(seconds: float) -> dict[str, str]:
    text = str(int(seconds)) if float(seconds).is_integer() else str(seconds)
    return {"retry-after": text, "retry-after-ms": str(int(seconds * 1000))}


def _with_request_id(provider: str, reply: Reply) -> Reply:
    """Add the request-id headers the provider's API sends (``MockWire.request_id_headers``),
    unless the reply already carries one."""
    wire = wire_for(provider)
    names = wire.request_id_headers
    if not names or any(n in reply.headers for n in names):
        return reply
    return replace(reply, headers={**reply.headers, **dict.fromkeys(names, wire.request_id())})


def _generic_error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "mock_error"}}).encode("utf-8")


__all__ = ["MockLLMServer", "PROVIDERS", "normalize_provider", "load_renderer"]
