"""The stumbles of a first hour (issue 36), each answered by an error that says what to do."""

from __future__ import annotations

from typing import Any

import pytest

from zerda.llm import create_interface
from zerda.testing import MockLLMServer


@pytest.mark.parametrize(
    ("target", "hint"),
    [
        ("openai/gpt-4o-mini", "did you mean 'openai:gpt-4o-mini'? Zerda writes provider:model"),
        ("antropic:claude-sonnet-4-6", "unknown provider 'antropic'; did you mean 'anthropic'?"),
        ("gemni", "did you mean 'gemini'?"),
    ],
)
def test_a_misspelt_provider_gets_a_suggestion(target: str, hint: str) -> None:
    with pytest.raises(ValueError, match="unknown provider") as raised:
        create_interface(target)
    assert hint in str(raised.value)


def test_an_unknown_provider_far_from_any_gets_no_suggestion() -> None:
    with pytest.raises(ValueError) as raised:
        create_interface("zzzz:m")
    assert "did you mean" not in str(raised.value)


@pytest.fixture(scope="module")
def server() -> Any:
    with MockLLMServer() as s:
        yield s


def refused(server: MockLLMServer, messages: list[dict[str, Any]]) -> str:
    llm = create_interface("openai:gpt-4o-mini", max_retries=0, **server.client_options("openai"))
    result = llm.generate(messages)
    assert result["error"]["type"] == "invalid_request"
    assert server.requests_for("openai") == []  # refused before sending
    return str(result["error"]["message"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
            "messages[0].content[0].type: unknown part type 'image_url' (part types: text, "
            "image, document, audio, file, cache_point); that is OpenAI's shape: use "
            "zerda.llm.image(url) or {'type': 'image', 'url': ...}",
        ),
        (
            [{"type": "tool_result", "tool_use_id": "t1", "content": "18 C"}],
            "messages[0].content[0].type: unknown part type 'tool_result' (part types: text, "
            "image, document, audio, file, cache_point); Zerda's history holds a tool's output "
            "as a message {'role': 'tool', 'tool_call_id', 'content'}: build it with "
            "zerda.llm.tool_result(call, output)",
        ),
        (
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                }
            ],
            "messages[0].content[0]: an image part needs either 'data' (base64 or bytes) or "
            "'url'; that is Anthropic's shape: use zerda.llm.image(...)",
        ),
    ],
)
def test_provider_shaped_user_parts_point_to_zerdas(
    server: MockLLMServer, content: list[Any], message: str
) -> None:
    server.reset()
    assert refused(server, [{"role": "user", "content": content}]) == message


def test_anthropic_shaped_assistant_blocks_point_to_the_result_message(
    server: MockLLMServer,
) -> None:
    server.reset()
    blocks = [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
    ]
    message = refused(
        server, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": blocks}]
    )
    assert message == (
        "messages[1]: assistant message 'content' must be a string, got a list; that looks like "
        "Anthropic content blocks: an assistant message holds its text in 'content' and its "
        "calls in 'tool_calls' ({'id', 'name', 'arguments'}); append result['message'] as "
        "generate returned it"
    )


def test_azure_without_an_endpoint_is_refused_at_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(ValueError, match="pass azure_endpoint=") as raised:
        create_interface("azure:my-deployment", api_key="k")
    assert "AZURE_OPENAI_ENDPOINT" in str(raised.value)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com")
    create_interface("azure:my-deployment", api_key="k")  # the variable is enough


def credentials_error(provider: str, exc: BaseException, **options: Any) -> Any:
    """The error a call gets when the SDK finds no credentials (raised without a network
    look-up: the exception is the one the SDK raises)."""
    llm = create_interface(provider, **options)
    return llm._to_error(exc)


def test_bedrock_without_credentials_says_what_to_set() -> None:
    from botocore.exceptions import NoCredentialsError

    err = credentials_error("bedrock:m", NoCredentialsError(), region="us-east-1")
    assert err.type == "authentication"
    assert err.message == (
        "NoCredentialsError: Unable to locate credentials (AWS credentials were not found: set "
        "AWS_PROFILE (a profile that `aws configure` or `aws sso login` wrote) or "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass profile= or aws_access_key_id= "
        "and aws_secret_access_key=)"
    )


@pytest.mark.parametrize(
    ("provider", "options"),
    [
        ("vertex:gemini-2.5-flash", {"project": "p", "location": "us-central1"}),
        ("anthropic-vertex:claude-sonnet-4-6", {"project_id": "p", "region": "us-east5"}),
    ],
)
def test_vertex_without_credentials_is_an_authentication_error(
    provider: str, options: dict[str, Any]
) -> None:
    from google.auth.exceptions import DefaultCredentialsError

    err = credentials_error(provider, DefaultCredentialsError("no ADC"), **options)
    assert err.type == "authentication" and not err.retryable
    assert err.message == (
        "DefaultCredentialsError: no ADC (Google credentials were not found: run `gcloud auth "
        "application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to a service-account "
        "key file, or pass credentials=)"
    )


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("jsonschema", "structured"),
        ("mcp", "mcp"),
        ("opentelemetry.trace", "otel"),
        ("click", "cli"),
    ],
)
def test_a_missing_optional_package_names_its_extra(module: str, extra: str) -> None:
    llm = create_interface("openai:m", api_key="k")
    err = llm._to_error(ModuleNotFoundError(f"No module named {module!r}", name=module))
    assert err.type == "invalid_request" and not err.retryable
    assert err.message == (
        f'{module!r} is not installed, and this call needs it: pip install "zerda-llm[{extra}]"'
    )


def test_a_missing_package_zerda_does_not_install_names_the_package() -> None:
    llm = create_interface("openai:m", api_key="k")
    err = llm._to_error(ModuleNotFoundError("No module named 'nosuch'", name="nosuch"))
    assert err.message == "'nosuch' is not installed, and this call needs it: pip install nosuch"


def test_a_called_function_in_tools_says_to_pass_the_function(server: MockLLMServer) -> None:
    server.reset()

    def get_weather(city: str) -> dict[str, Any]:
        return {"city": city, "temp_c": 18}

    llm = create_interface("openai:gpt-4o-mini", max_retries=0, **server.client_options("openai"))
    result = llm.generate("hi", tools=[get_weather("Paris")])
    assert result["error"]["message"] == (
        "tools[0]: Each tool must have a 'name'. (was the function called? pass the function "
        "itself: tools=[get_weather], not tools=[get_weather(...)])"
    )
    assert server.requests_for("openai") == []
