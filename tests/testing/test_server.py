"""MockLLMServer itself: routing, queues, defaults, the request log, faults, raw replay,
streaming control and concurrency, tested over plain HTTP."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from zerda.llm import registry
from zerda.testing import MockLLMServer, Script, _server

CHAT = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}


# One client for the whole module: building an httpx.Client (its SSL context) per request
# would cost more than the requests themselves.
# The key headers every provider's SDK sends: a strict server refuses a request without.
AUTH = {"authorization": "Bearer test-key", "x-api-key": "test-key", "x-goog-api-key": "test-key"}
_HTTP = httpx.Client(timeout=5, limits=httpx.Limits(max_connections=100), headers=AUTH)


def post(server: MockLLMServer, path: str, body: object = CHAT, **kw: object) -> httpx.Response:
    return _HTTP.post(server.url + path, json=body, **kw)  # type: ignore[arg-type]


def text_of(resp: httpx.Response) -> str:
    return resp.json()["choices"][0]["message"]["content"]


# -- addresses ----------------------------------------------------------------------------


def test_url_is_loopback_with_the_bound_port(mock_llm_server: MockLLMServer) -> None:
    host, port = mock_llm_server.url.removeprefix("http://").split(":")
    assert host == "127.0.0.1"
    assert int(port) > 0


def test_base_urls_per_provider(mock_llm_server: MockLLMServer) -> None:
    url = mock_llm_server.url
    assert {p: mock_llm_server.base_url(p) for p in _server.PROVIDERS} == {
        "openai": f"{url}/openai/v1",
        "openai-responses": f"{url}/openai-responses/v1",
        "groq": f"{url}/groq",
        "mistral": f"{url}/mistral",
        "ollama": f"{url}/ollama",
        "anthropic": f"{url}/anthropic",
        "bedrock": f"{url}/bedrock",
        "gemini": f"{url}/gemini",
        # The cloud SDKs append their own paths (/openai/..., /model/..., /projects/...).
        **{n: f"{url}/{n}" for n in ("azure", "azure-responses", "anthropic-bedrock")},
        **{n: f"{url}/{n}" for n in ("anthropic-vertex", "vertex")},
        # OpenAI-compatible services: the openai SDK's base URL ends in /v1.
        **{n: f"{url}/{n}/v1" for n in registry.compatible()},
    }
    assert mock_llm_server.base_url("aws") == f"{url}/bedrock"
    assert mock_llm_server.base_url("google") == f"{url}/gemini"


def test_client_options_and_sdk_kwargs(mock_llm_server: MockLLMServer) -> None:
    s, url = mock_llm_server, mock_llm_server.url
    assert s.client_options("anthropic") == {"base_url": f"{url}/anthropic", "api_key": "test-key"}
    assert s.client_options("ollama") == {"base_url": f"{url}/ollama"}
    assert s.client_options("bedrock") == {
        "base_url": f"{url}/bedrock",
        "region": "us-east-1",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
        "endpoint_urls": {"bedrock": f"{url}/bedrock", "s3": f"{url}/bedrock/s3"},
    }
    assert s.sdk_client_kwargs("openai") == {"base_url": f"{url}/openai/v1", "api_key": "test-key"}
    assert s.sdk_client_kwargs("mistral") == {"server_url": f"{url}/mistral", "api_key": "test-key"}
    assert s.sdk_client_kwargs("ollama") == {"host": f"{url}/ollama"}
    assert s.sdk_client_kwargs("gemini") == {
        "api_key": "test-key",
        "http_options": {"base_url": f"{url}/gemini"},
    }
    assert s.sdk_client_kwargs("bedrock") == {
        "service_name": "bedrock-runtime",
        "endpoint_url": f"{url}/bedrock",
        "region_name": "us-east-1",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
    }


def test_unknown_provider_name_is_rejected(mock_llm_server: MockLLMServer) -> None:
    with pytest.raises(ValueError, match="unknown provider 'cohere'"):
        mock_llm_server.enqueue("cohere", text="x")


# -- routing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "provider", "stripped"),
    [
        ("/openai/v1/chat/completions", "openai", "/v1/chat/completions"),
        ("/groq/openai/v1/chat/completions", "groq", "/openai/v1/chat/completions"),
        ("/mistral/v1/chat/completions", "mistral", "/v1/chat/completions"),
        ("/ollama/api/chat", "ollama", "/api/chat"),
        ("/ollama/v1/chat/completions", "ollama", "/v1/chat/completions"),
    ],
)
def test_routes_by_provider_prefix(
    mock_llm_server: MockLLMServer, path: str, provider: str, stripped: str
) -> None:
    mock_llm_server.enqueue(provider, text="routed")
    resp = post(mock_llm_server, path, {**CHAT, "stream": False})
    assert resp.status_code == 200
    req = mock_llm_server.last_request()
    assert (req.provider, req.method, req.path) == (provider, "POST", stripped)


def test_unknown_path_is_404_naming_provider_and_path(mock_llm_server: MockLLMServer) -> None:
    """Where the provider's own answer to an unknown URL was not seen (Gemini's), the 404
    names the provider and path (test_wire_details.py has the providers' own)."""
    resp = post(mock_llm_server, "/gemini/v1beta/models/m:countTokenz")
    assert resp.status_code == 404
    assert resp.json()["error"]["message"] == (
        "MockLLMServer: unknown path for gemini: POST /v1beta/models/m:countTokenz"
    )


def test_unknown_prefix_is_404(mock_llm_server: MockLLMServer) -> None:
    resp = post(mock_llm_server, "/cohere/v1/chat")
    assert resp.status_code == 404
    assert "unknown provider prefix" in resp.json()["error"]["message"]
    assert mock_llm_server.last_request().provider == ""


def test_missing_renderer_answers_501(
    mock_llm_server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str) -> None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(_server, "_renderers", {})
    monkeypatch.setattr(_server.importlib, "import_module", missing)
    mock_llm_server.enqueue("openai", text="x")
    resp = post(mock_llm_server, "/openai/v1/chat/completions")
    assert resp.status_code == 501
    assert resp.json() == {
        "error": {
            "message": "MockLLMServer: no renderer for wire 'openai' "
            "(zerda.testing.wires.openai.render is missing)",
            "type": "mock_error",
        }
    }


def test_renderer_failure_answers_500_with_the_exception(
    mock_llm_server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zerda.testing.wires.openai import render as _render_openai

    def broken(script: Script, req: object) -> None:
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(_render_openai, "render", broken)
    mock_llm_server.enqueue("openai", text="x")
    resp = post(mock_llm_server, "/openai/v1/chat/completions")
    assert resp.status_code == 500
    assert resp.json()["error"]["message"] == (
        "MockLLMServer: failed to answer openai /v1/chat/completions: RuntimeError('renderer bug')"
    )


def test_run_forever_serves_until_stopped() -> None:
    import threading

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = MockLLMServer(port=port)
    thread = threading.Thread(target=server.run_forever, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while server._httpd is None and time.monotonic() < deadline:
        time.sleep(0.01)
    server.enqueue(text="foreground")
    assert text_of(post(server, "/openai/v1/chat/completions")) == "foreground"
    server.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()


# -- queues and defaults ------------------------------------------------------------------


def test_nothing_queued_is_a_400_naming_provider_and_path(mock_llm_server: MockLLMServer) -> None:
    resp = post(mock_llm_server, "/openai/v1/chat/completions")
    assert resp.status_code == 400
    assert resp.json() == {
        "error": {
            "message": "MockLLMServer: nothing queued for openai POST /v1/chat/completions",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


def test_provider_queue_before_shared_queue_in_order(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue(text="shared-1")
    s.enqueue("openai", text="openai-1")
    s.enqueue(text="shared-2")
    s.enqueue("openai", text="openai-2")
    path = "/openai/v1/chat/completions"
    got = [text_of(post(s, path)) for _ in range(4)]
    assert got == ["openai-1", "openai-2", "shared-1", "shared-2"]


def test_provider_queue_is_not_served_to_another_provider(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("groq", text="for groq")
    assert post(s, "/openai/v1/chat/completions").status_code == 400
    assert text_of(post(s, "/groq/openai/v1/chat/completions")) == "for groq"
    assert s.pending("groq") == 0


def test_shared_queue_serves_any_provider(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue(text="a")
    s.enqueue(text="b")
    assert text_of(post(s, "/mistral/v1/chat/completions")) == "a"
    assert text_of(post(s, "/groq/openai/v1/chat/completions")) == "b"


def test_default_answers_when_queues_are_empty(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.set_default(text="shared default")
    s.set_default("openai", text="openai default")
    s.enqueue("openai", text="queued")
    path = "/openai/v1/chat/completions"
    got = [text_of(post(s, path)) for _ in range(3)]
    assert got == ["queued", "openai default", "openai default"]
    assert text_of(post(s, "/mistral/v1/chat/completions")) == "shared default"


def test_reset_clears_queues_defaults_and_log(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue(text="x")
    s.set_default(text="d")
    post(s, "/openai/v1/chat/completions")
    s.enqueue(text="y")
    s.reset()
    assert s.requests == []
    assert s.pending() == 0
    assert post(s, "/openai/v1/chat/completions").status_code == 400


def test_enqueue_rejects_unknown_fields(mock_llm_server: MockLLMServer) -> None:
    with pytest.raises(TypeError, match="unknown Script field"):
        mock_llm_server.enqueue("openai", txt="typo")


def test_enqueue_returns_the_script_with_calls_as_dataclasses(
    mock_llm_server: MockLLMServer,
) -> None:
    script = mock_llm_server.enqueue("openai", tool_calls=[{"name": "f", "arguments": {"a": 1}}])
    assert isinstance(script, Script)
    assert script.tool_calls[0].name == "f"
    assert script.tool_calls[0].id is None


# -- request log --------------------------------------------------------------------------


def test_request_log_records_native_request_with_credentials_redacted(
    mock_llm_server: MockLLMServer,
) -> None:
    s = mock_llm_server
    s.enqueue(text="x")
    secret_headers = {
        "Authorization": "Bearer sk-secret",
        "x-api-key": "k1",
        "x-goog-api-key": "k2",
        "api-key": "k3",
        "x-amz-security-token": "k4",
        "Cookie": "session=s",
        "X-Custom": "kept",
    }
    post(s, "/openai/v1/chat/completions?trace=1", headers=secret_headers)
    req = s.last_request("openai")
    assert req.query == {"trace": "1"}
    assert req.body == CHAT
    assert json.loads(req.raw_body) == CHAT
    redacted = {k: req.headers[k] for k in (h.lower() for h in secret_headers)}
    assert redacted == {
        "authorization": "<redacted>",
        "x-api-key": "<redacted>",
        "x-goog-api-key": "<redacted>",
        "api-key": "<redacted>",
        "x-amz-security-token": "<redacted>",
        "cookie": "<redacted>",
        "x-custom": "kept",
    }
    assert "sk-secret" not in repr(s.requests)


def test_request_log_filters_by_provider(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.set_default(text="x")
    post(s, "/openai/v1/chat/completions")
    post(s, "/mistral/v1/chat/completions")
    post(s, "/openai/v1/chat/completions", {"model": "second"})
    assert [r.provider for r in s.requests] == ["openai", "mistral", "openai"]
    assert [r.body["model"] for r in s.requests_for("openai")] == ["gpt-test", "second"]
    assert s.last_request("openai").body == {"model": "second"}
    assert s.last_request().provider == "openai"


def test_last_request_without_requests_raises(mock_llm_server: MockLLMServer) -> None:
    with pytest.raises(LookupError, match="no request for groq"):
        mock_llm_server.last_request("groq")


def test_non_json_body_is_logged_raw(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    _HTTP.post(s.url + "/openai/v1/chat/completions", content=b"not json")
    req = s.last_request()
    assert (req.body, req.raw_body) == (None, b"not json")


# -- errors and delays --------------------------------------------------------------------


def test_error_reply_with_retry_after_headers(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue_error(429, "openai", message="slow down", retry_after=0.25)
    resp = post(s, "/openai/v1/chat/completions")
    assert resp.status_code == 429
    assert (resp.headers["retry-after"], resp.headers["retry-after-ms"]) == ("0.25", "250")
    assert resp.json()["error"]["message"] == "slow down"


def test_error_type_overrides_the_derived_one(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue_error(400, "openai", message="m", error_type="custom_error")
    assert post(s, "/openai/v1/chat/completions").json()["error"]["type"] == "custom_error"


def test_delay_postpones_the_answer(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("openai", text="late", delay=0.2)
    start = time.monotonic()
    assert text_of(post(s, "/openai/v1/chat/completions")) == "late"
    assert time.monotonic() - start >= 0.2


def test_invalid_json_body(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("openai", text="x", invalid_json_body=True)
    resp = post(s, "/openai/v1/chat/completions")
    assert resp.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(resp.content)


# -- faults -------------------------------------------------------------------------------


def test_fault_drop_closes_without_answer(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue_fault("drop", "openai")
    with pytest.raises(httpx.RemoteProtocolError):
        post(mock_llm_server, "/openai/v1/chat/completions")


def test_fault_malformed_and_empty(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue_fault("malformed")
    s.enqueue_fault("empty")
    malformed = post(s, "/openai/v1/chat/completions")
    empty = post(s, "/openai/v1/chat/completions")
    assert (malformed.status_code, malformed.content) == (200, _server._MALFORMED_BODY)
    assert (empty.status_code, empty.content) == (200, b"")


def test_fault_hang_makes_the_client_time_out(mock_llm_server: MockLLMServer) -> None:
    mock_llm_server.enqueue_fault("hang", delay=5)
    start = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        post(mock_llm_server, "/openai/v1/chat/completions", timeout=0.2)
    assert time.monotonic() - start < 2


def test_unknown_fault_kind_is_rejected(mock_llm_server: MockLLMServer) -> None:
    with pytest.raises(ValueError, match="unknown fault 'boom'"):
        mock_llm_server.enqueue_fault("boom")  # type: ignore[arg-type]


def test_stop_releases_a_hanging_request() -> None:
    server = MockLLMServer().start()
    server.enqueue_fault("hang")  # no delay: hangs until stop()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(post, server, "/openai/v1/chat/completions")
        time.sleep(0.1)
        start = time.monotonic()
        server.stop()
        with pytest.raises(httpx.HTTPError):
            future.result(timeout=5)
        assert time.monotonic() - start < 2


# -- raw and recorded replay --------------------------------------------------------------


def test_raw_is_served_byte_for_byte(mock_llm_server: MockLLMServer) -> None:
    body = b'{"exact":   "bytes"}'
    mock_llm_server.enqueue_raw(201, body, {"content-type": "application/json", "x-extra": "1"})
    resp = post(mock_llm_server, "/mistral/v1/chat/completions")
    assert (resp.status_code, resp.content, resp.headers["x-extra"]) == (201, body, "1")


def test_raw_in_chunks_is_chunked(mock_llm_server: MockLLMServer) -> None:
    body = b"data: a\n\ndata: b\n\ndata: [DONE]\n\n"
    mock_llm_server.enqueue_raw(200, body, {"content-type": "text/event-stream"}, chunk_size=5)
    with _HTTP.stream("POST", mock_llm_server.url + "/openai/v1/chat/completions", json=CHAT) as r:
        assert r.headers["transfer-encoding"] == "chunked"
        assert r.read() == body


def test_raw_accepts_str_and_json_bodies(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    assert s.enqueue_raw(200, "é").body == "é".encode()
    assert s.enqueue_raw(200, {"a": [1]}).body == b'{"a": [1]}'


def test_enqueue_recorded_decodes_each_body_encoding(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    raw_json = s.enqueue_recorded(
        {"response": {"status": 200, "headers": {}, "body": {"a": 1}, "body_encoding": "json"}}
    )
    raw_text = s.enqueue_recorded(
        {
            "streaming": True,
            "response": {
                "status": 200,
                "headers": {"content-type": "text/event-stream"},
                "body": "data: x\n\n",
                "body_encoding": "text",
            },
        }
    )
    raw_b64 = s.enqueue_recorded(
        {"response": {"status": 200, "headers": {}, "body": "AAEC", "body_encoding": "base64"}}
    )
    assert (raw_json.body, raw_json.headers, raw_json.chunk_size) == (
        b'{"a": 1}',
        {"content-type": "application/json"},
        None,
    )
    assert (raw_text.body, raw_text.chunk_size) == (b"data: x\n\n", 512)
    assert raw_b64.body == b"\x00\x01\x02"


def test_recorded_openai_fixture_is_replayed_verbatim(mock_llm_server: MockLLMServer) -> None:
    fixtures = _fixtures_dir() / "recorded" / "openai"
    if not fixtures.is_dir():
        pytest.skip("shared fixtures are absent")
    path = fixtures / "langchaingo__llms.openai.TestWithStreaming__i00.json"
    fixture = json.loads(path.read_text())
    mock_llm_server.enqueue_recorded(fixture, "openai")
    resp = post(mock_llm_server, "/openai/v1/chat/completions", fixture["request"]["body"])
    assert resp.text == fixture["response"]["body"]
    assert resp.headers["content-type"] == fixture["response"]["headers"]["content-type"]


def _fixtures_dir() -> Path:
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures"


# -- streaming control --------------------------------------------------------------------


def _stream_lines(server: MockLLMServer, path: str, body: object) -> list[str]:
    with _HTTP.stream("POST", server.url + path, json=body, timeout=5) as resp:
        return [line for line in resp.iter_lines() if line]


def test_stream_cut_after_drops_the_connection(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("openai", text="abcdef", fragments=3, cut_after=2)
    received: list[str] = []
    with (
        pytest.raises(httpx.RemoteProtocolError),
        _HTTP.stream(
            "POST", s.url + "/openai/v1/chat/completions", json={**CHAT, "stream": True}
        ) as r,
    ):
        received.extend(line for line in r.iter_lines() if line)
    assert len(received) == 2  # the role chunk and the first text fragment


def test_stream_chunk_delay_spaces_chunks(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue("openai", text="ab", fragments=2, chunk_delay=0.05)
    start = time.monotonic()
    lines = _stream_lines(s, "/openai/v1/chat/completions", {**CHAT, "stream": True})
    # role, "a", "b", finish, [DONE]: four gaps
    assert len(lines) == 5
    assert time.monotonic() - start >= 0.2


def test_stream_error_event_after_cut(mock_llm_server: MockLLMServer) -> None:
    s = mock_llm_server
    s.enqueue(
        "openai",
        text="abc",
        fragments=3,
        cut_after=2,
        stream_error={"status": 500, "message": "overloaded"},
    )
    lines = _stream_lines(s, "/openai/v1/chat/completions", {**CHAT, "stream": True})
    assert len(lines) == 3
    assert json.loads(lines[-1].removeprefix("data: ")) == {
        "error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}
    }


def test_keep_alive_serves_several_requests_on_one_connection(
    mock_llm_server: MockLLMServer,
) -> None:
    s = mock_llm_server
    s.set_default(text="x")
    with httpx.Client(base_url=s.url, timeout=5, headers=AUTH) as client:
        for _ in range(3):
            assert client.post("/openai/v1/chat/completions", json=CHAT).status_code == 200
        lines = client.post("/openai/v1/chat/completions", json={**CHAT, "stream": True})
        assert lines.text.endswith("data: [DONE]\n\n")
        assert client.post("/openai/v1/chat/completions", json=CHAT).status_code == 200


# -- concurrency --------------------------------------------------------------------------


def test_fifty_parallel_requests_each_get_one_queued_answer(
    mock_llm_server: MockLLMServer,
) -> None:
    s = mock_llm_server
    expected = {f"answer-{i}" for i in range(50)}
    for text in sorted(expected):
        s.enqueue(text=text, delay=0.2)

    def one(i: int) -> str:
        path = "/openai/v1/chat/completions" if i % 2 else "/mistral/v1/chat/completions"
        return text_of(post(s, path, {**CHAT, "n": i}))

    start = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(one, range(50)))
    assert set(answers) == expected
    assert len(s.requests) == 50
    assert time.monotonic() - start < 5  # in parallel: one after another would take 10 s


async def test_async_clients_share_the_server(mock_llm_server: MockLLMServer) -> None:
    import asyncio

    s = mock_llm_server
    s.set_default(text="async")
    async with httpx.AsyncClient(base_url=s.url, timeout=5, headers=AUTH) as client:
        resps = await asyncio.gather(
            *(client.post("/openai/v1/chat/completions", json=CHAT) for _ in range(10))
        )
    assert [text_of(r) for r in resps] == ["async"] * 10


def test_server_port_can_be_chosen() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with MockLLMServer(port=port) as server:
        assert server.url == f"http://127.0.0.1:{port}"
        server.enqueue(text="x")
        assert text_of(post(server, "/openai/v1/chat/completions")) == "x"
