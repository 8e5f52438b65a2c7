"""Every registry row works through create_interface against MockLLMServer, and the rows
added for more endpoints (OpenAI-compatible services, Azure, Claude on Bedrock and Vertex,
Gemini on Vertex) send what their real APIs expect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.llm.compatible_rows import SERVICES
from zerda.llm import create_interface, registry, tool_result
from zerda.testing import MockLLMServer

NAMES = list(registry.NAMES)
WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}
KEYS = {k for spec in registry.REGISTRY.values() for k in spec.env_keys}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in (*KEYS, "OPENAI_API_KEY", "OPENAI_API_VERSION", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(key, raising=False)


def make(server: MockLLMServer, name: str, **options: Any) -> Any:
    spec = registry.get(name)
    return create_interface(
        name, model=spec.demo_model, max_retries=0, **{**server.client_options(name), **options}
    )


# --- every row -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_a_tool_round_trip_on_every_row(server: MockLLMServer, name: str) -> None:
    server.reset()
    llm = make(server, name)
    server.enqueue(name, tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}])
    server.enqueue(name, text="Sunny.")
    first = llm.generate("Weather?", tools=[WEATHER])
    assert first["tool_calls"][0]["arguments"] == {"city": "Oslo"}, first.get("error")
    user = {"role": "user", "content": "Weather?"}
    history = [user, first["message"], tool_result(first["tool_calls"][0], "sunny")]
    second = llm.generate(history, tools=[WEATHER])
    assert (second["content"], second["stop_reason"]) == ("Sunny.", "end_turn")
    assert [r.provider for r in server.requests] == [name, name]


@pytest.mark.parametrize("name", NAMES)
def test_every_row_streams(server: MockLLMServer, name: str) -> None:
    server.reset()
    server.enqueue(name, text="Hello there.", fragments=3)
    events = list(make(server, name).stream("hi"))
    assert "".join(e["text"] for e in events if e["type"] == "text") == "Hello there."
    assert events[-1]["result"]["content"] == "Hello there."


@pytest.mark.parametrize("name", NAMES)
async def test_every_row_answers_async(server: MockLLMServer, name: str) -> None:
    server.reset()
    server.enqueue(name, text="Async.")
    assert (await make(server, name).generate_async("hi"))["content"] == "Async."


@pytest.mark.parametrize("name", NAMES)
def test_http_errors_are_mapped_on_every_row(server: MockLLMServer, name: str) -> None:
    server.reset()
    server.enqueue_error(429, name, message="slow down")
    result = make(server, name).generate("hi")
    assert (result["error"]["type"], result["error"]["status_code"]) == ("rate_limit", 429)


# --- where each row's requests go ------------------------------------------------------------

ROUTES = {
    "azure": ("/openai/deployments/gpt-4o-mini/chat/completions", {"api-version": "2024-10-21"}),
    "azure-responses": ("/openai/responses", {"api-version": "2025-04-01-preview"}),
    "anthropic-bedrock": ("/model/anthropic.claude-sonnet-4-6/invoke", {}),
    "anthropic-vertex": (
        "/projects/mock-project/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-6:rawPredict",
        {},
    ),
    "vertex": (
        "/v1beta1/projects/mock-project/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:generateContent",
        {},
    ),
}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_cloud_rows_call_their_platform_paths(server: MockLLMServer, name: str) -> None:
    server.reset()
    server.enqueue(name, text="ok")
    make(server, name).generate("hi")
    request = server.last_request(name)
    assert (request.path, request.query) == ROUTES[name]


COMPATIBLE = registry.compatible()
HOSTED = [n for n in COMPATIBLE if SERVICES[n].key]
LOCAL = [n for n in COMPATIBLE if not SERVICES[n].key]


def test_every_compatible_row_has_its_test_data() -> None:
    # A row added with registry.compatible_row needs its entry in compatible_rows.py.
    assert set(COMPATIBLE) == set(SERVICES)
    assert HOSTED and LOCAL


@pytest.mark.parametrize("name", COMPATIBLE)
def test_compatible_rows_default_to_their_base_url(name: str) -> None:
    llm = create_interface(name, model="m", api_key="k")
    assert llm.base_url == SERVICES[name].base_url
    assert str(llm.client.base_url).rstrip("/") == SERVICES[name].base_url


@pytest.mark.parametrize("name", HOSTED)
def test_hosted_rows_demand_their_own_key(server: MockLLMServer, name: str) -> None:
    server.reset()
    options = {k: v for k, v in server.client_options(name).items() if k != "api_key"}
    result = create_interface(name, model="m", **options).generate("hi")
    key = registry.get(name).env_keys[0]
    assert result["error"]["type"] == "authentication"
    assert key in result["error"]["message"]
    assert server.requests_for(name) == []


@pytest.mark.parametrize("name", LOCAL)
def test_local_servers_need_no_key_and_never_get_the_openai_one(
    server: MockLLMServer, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    server.reset()
    server.enqueue(name, text="local")
    llm = create_interface(name, model="m", base_url=server.base_url(name), max_retries=0)
    assert llm.generate("hi")["content"] == "local"
    assert llm.client.api_key == "no-key"


@pytest.mark.parametrize(
    ("name", "field"),
    [("openai", "max_completion_tokens")] + [(n, SERVICES[n].max_tokens) for n in COMPATIBLE],
)
def test_max_tokens_goes_in_each_services_field(
    server: MockLLMServer, name: str, field: str
) -> None:
    server.reset()
    server.enqueue(name, text="ok")
    make(server, name).generate("hi", max_tokens=50)
    body = server.last_request(name).body
    assert body[field] == 50
    other = ({"max_tokens", "max_completion_tokens"} - {field}).pop()
    assert other not in body


def test_fireworks_forces_a_call_with_any(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("fireworks", text="ok")
    make(server, "fireworks").generate("hi", tools=[WEATHER], tool_choice="required")
    assert server.last_request("fireworks").body["tool_choice"] == "any"


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [choice],
        "usage": usage,
    }


def _chunks(deltas: list[dict[str, Any]]) -> str:
    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return (
            "data: "
            + json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": "m",
                    "choices": [choice],
                }
            )
            + "\n\n"
        )

    return "".join(chunk(d, None) for d in deltas) + chunk({}, "stop") + "data: [DONE]\n\n"


@pytest.mark.parametrize(("name", "field"), [(n, SERVICES[n].reasoning) for n in COMPATIBLE])
def test_reasoning_fields_are_read_as_reasoning(
    server: MockLLMServer, name: str, field: str
) -> None:
    server.reset()
    llm = make(server, name)
    message = {"content": "4.", field: "2 + 2 is 4."}
    server.enqueue_raw(
        200, _completion(message), {"content-type": "application/json"}, provider=name
    )
    result = llm.generate("2+2?")
    assert (result["content"], result["reasoning"]) == ("4.", "2 + 2 is 4.")
    stream = _chunks([{"role": "assistant", field: "2 + 2"}, {field: " is 4."}, {"content": "4."}])
    server.enqueue_raw(200, stream, {"content-type": "text/event-stream"}, provider=name)
    events = list(llm.stream("2+2?"))
    assert [e["text"] for e in events if e["type"] == "reasoning"] == ["2 + 2", " is 4."]
    done = events[-1]["result"]
    assert (done["content"], done["reasoning"]) == ("4.", "2 + 2 is 4.")


# --- Azure -----------------------------------------------------------------------------------


def test_azure_takes_an_entra_token_provider_instead_of_a_key(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("azure", text="ok")
    llm = create_interface(
        "azure",
        model="my-deployment",
        azure_endpoint=server.base_url("azure"),
        azure_ad_token_provider=lambda: "entra-token",
        max_retries=0,
    )
    assert llm.generate("hi")["content"] == "ok"
    request = server.last_request("azure")
    assert request.path == "/openai/deployments/my-deployment/chat/completions"
    assert "authorization" in request.headers and "api-key" not in request.headers


def test_azure_without_key_or_token_names_both(server: MockLLMServer) -> None:
    server.reset()
    llm = create_interface("azure", model="d", azure_endpoint=server.base_url("azure"))
    result = llm.generate("hi")
    assert result["error"]["type"] == "authentication"
    assert "AZURE_OPENAI_API_KEY" in result["error"]["message"]
    assert server.requests_for("azure") == []


def test_azure_api_version_from_the_environment_wins_over_the_default(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-01-01-preview")
    server.reset()
    server.enqueue("azure", text="ok")
    make(server, "azure").generate("hi")
    assert server.last_request("azure").query == {"api-version": "2025-01-01-preview"}


def test_the_mock_refuses_azure_calls_without_an_api_version(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("azure", text="never served")
    url = server.base_url("azure") + "/openai/deployments/d/chat/completions"
    response = httpx.post(url, json={"messages": []})
    assert response.status_code == 404
    assert "api-version" in response.json()["error"]["message"]


# --- Claude and Gemini on the clouds -------------------------------------------------------


def test_claude_on_bedrock_sends_the_invoke_body(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("anthropic-bedrock", text="ok")
    llm = make(server, "anthropic-bedrock")
    llm.generate("hi", max_tokens=100)
    body = server.last_request("anthropic-bedrock").body
    # The model travels in the path, the API version in the body (the SDK's own value).
    assert body == {
        "anthropic_version": body["anthropic_version"],
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert isinstance(body["anthropic_version"], str)


def test_claude_on_bedrock_takes_region_as_the_bedrock_row_does(server: MockLLMServer) -> None:
    options = {**server.client_options("anthropic-bedrock")}
    options["region"] = options.pop("aws_region")
    llm = create_interface("anthropic-bedrock", model="m", **options)
    assert llm.client.aws_region == "us-east-1"


def test_claude_on_vertex_sends_the_raw_predict_body(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("anthropic-vertex", text="ok")
    make(server, "anthropic-vertex").generate("hi", max_tokens=100)
    body = server.last_request("anthropic-vertex").body
    assert body == {
        "anthropic_version": body["anthropic_version"],
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_gemini_on_vertex_never_sends_an_api_key(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-not-for-vertex")
    server.reset()
    server.enqueue("vertex", text="ok")
    assert make(server, "vertex").generate("hi")["content"] == "ok"
    headers = server.last_request("vertex").headers
    assert "x-goog-api-key" not in headers and "authorization" in headers


SECRET = "s3cr3t-value-9f8e7d"


@pytest.mark.parametrize(
    ("name", "option"),
    [
        ("anthropic-bedrock", "aws_secret_key"),
        ("anthropic-bedrock", "aws_session_token"),
        ("anthropic-vertex", "access_token"),
        ("azure", "azure_ad_token"),
        ("azure-responses", "azure_ad_token"),
    ],
)
def test_secret_options_are_never_shown(server: MockLLMServer, name: str, option: str) -> None:
    server.reset()
    # Azure takes a key or a token, never both.
    extra = {"api_key": None} if option == "azure_ad_token" else {}
    llm = make(server, name, **{option: SECRET}, **extra)
    server.enqueue_error(401, name, message=f"Bad credentials: {SECRET}")
    result = llm.generate("hi")
    assert result["error"]["message"].endswith("Bad credentials: ***")
    assert SECRET not in json.dumps(result) and SECRET not in repr(llm)


def test_claude_on_bedrock_shows_bedrocks_error_message(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue_error(429, "anthropic-bedrock", message="Too many requests, please wait.")
    error = make(server, "anthropic-bedrock").generate("hi")["error"]
    assert (error["type"], error["message"]) == ("rate_limit", "Too many requests, please wait.")


# --- the mock validates the cloud wires as their APIs do ----------------------------------

INVALID = {
    "azure": (
        "/openai/deployments/d/chat/completions?api-version=2024-10-21",
        {"messages": [{"role": "tool", "tool_call_id": "x", "content": "?"}], "model": "d"},
        {"api-key": "k"},
    ),
    "anthropic-vertex": (
        "/projects/p/locations/us-east5/publishers/anthropic/models/m:rawPredict",
        {"anthropic_version": "vertex-2023-10-16", "messages": [{"role": "user", "content": "hi"}]},
        {"authorization": "Bearer t"},
    ),
    "anthropic-bedrock": (
        "/model/m/invoke",
        {
            "anthropic_version": "bedrock-2023-05-31",
            "messages": [{"role": "user", "content": "hi"}],
        },
        {"authorization": "AWS4-HMAC-SHA256 ..."},
    ),
    "vertex": (
        "/v1beta1/projects/p/locations/l/publishers/google/models/m:generateContent",
        {"contents": []},
        {"authorization": "Bearer t"},
    ),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_the_mock_refuses_what_the_cloud_api_refuses(server: MockLLMServer, name: str) -> None:
    server.reset()
    server.enqueue(name, text="never served")
    path, body, headers = INVALID[name]
    response = httpx.post(server.url + f"/{name}" + path, json=body, headers=headers)
    assert response.status_code == 400, response.text
    assert server.last_request(name).rejected_by
    assert server.pending(name) == 1  # the queued answer was not used


def test_the_mock_refuses_azure_without_credentials(server: MockLLMServer) -> None:
    server.reset()
    url = server.base_url("azure") + "/openai/deployments/d/chat/completions?api-version=1"
    response = httpx.post(url, json={"model": "d", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 401
    assert "missing subscription key" in response.json()["error"]["message"]


# --- content parts on the rows that share a shape ------------------------------------------

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
WITH_IMAGE = [
    {"role": "user", "content": "Screenshot, please."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {}}],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [{"type": "image", "data": PIXEL, "media_type": "image/png"}],
    },
]
SAME_SHAPE = {
    "azure": ("openai", "messages"),
    "anthropic-bedrock": ("anthropic", "messages"),
    "anthropic-vertex": ("anthropic", "messages"),
    "vertex": ("gemini", "contents"),
    "azure-responses": ("openai-responses", "input"),
}


def _sent(server: MockLLMServer, name: str) -> Any:
    server.reset()
    server.set_default(text="ok")
    assert make(server, name).generate(WITH_IMAGE, tools=[WEATHER])["content"] == "ok"
    return server.last_request(name).body


@pytest.mark.parametrize("name", sorted(SAME_SHAPE))
def test_rows_on_a_shared_shape_send_the_same_parts(server: MockLLMServer, name: str) -> None:
    base, field = SAME_SHAPE[name]
    assert _sent(server, name)[field] == _sent(server, base)[field]


TEXT_ONLY = [n for n in COMPATIBLE if not registry.get(n).traits.user.parts]
WITH_IMAGES = [n for n in COMPATIBLE if n not in TEXT_ONLY]


def test_the_text_only_rows_are_the_services_without_images() -> None:
    assert [n for n in COMPATIBLE if not SERVICES[n].images] == TEXT_ONLY
    assert TEXT_ONLY


@pytest.mark.parametrize("name", TEXT_ONLY)
def test_text_only_rows_refuse_media_naming_themselves(server: MockLLMServer, name: str) -> None:
    server.reset()
    result = make(server, name).generate(WITH_IMAGE, tools=[WEATHER])
    assert result["error"]["type"] == "invalid_request"
    assert f"{name} does not take image parts" in result["error"]["message"]
    assert server.requests_for(name) == []


@pytest.mark.parametrize("name", WITH_IMAGES)
def test_compatible_rows_send_tool_images_in_a_user_message(
    server: MockLLMServer, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chat Completions tool messages take text: the image follows the results as an
    image_url part of a user message, as on OpenAI."""
    # Some services' demo models take text only (together's Llama 3.3), which Zerda refuses
    # before sending (docs/cost-and-limits.md): this is about where the image goes.
    monkeypatch.setenv("ZERDA_CHECK_LIMITS", "0")
    sent = _sent(server, name)["messages"]
    assert sent == _sent(server, "openai")["messages"]
    assert sent[-1]["role"] == "user"
    assert [p["type"] for p in sent[-1]["content"]][-1] == "image_url"
