"""Claude's thinking with a forced tool_choice (DESIGN §11, issue 33): refused before sending
where the provider answers 400 "Thinking may not be enabled when tool_choice forces tool
use" — budget thinking everywhere, adaptive thinking too on Bedrock (both the Converse row
and Claude through the anthropic SDK) — and sent where the provider answers it (adaptive
thinking on Anthropic's API and Vertex AI: recorded claude-opus-4-6 exchanges got 200 and
the forced call). A response_format with thinking travels natively where the model has
native output, never as a forced answer tool. MockLLMServer refuses the same requests with
the provider's own status and body."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from zerda.llm import registry
from zerda.llm.providers import create_interface
from zerda.testing import MockLLMServer

TOOLS = [{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}]
ANSWER = {
    "name": "answer",
    "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
SAYS = (
    "reasoning='high' with tool_choice forcing a tool: {where} refuses thinking with a forced "
    "tool_choice ('required', a tool name, or the answer tool of a response_format in tool "
    'mode): the provider answers 400 "Thinking may not be enabled when tool_choice forces tool '
    "use\"; use tool_choice='auto', reasoning=False, or structured_output='native' where the "
    "model has it"
)
SONNET = {  # claude-sonnet-4-6 as each Claude row names it
    "anthropic": "claude-sonnet-4-6",
    "anthropic-vertex": "claude-sonnet-4-6",
    "anthropic-bedrock": "us.anthropic.claude-sonnet-4-6",
    "bedrock": "us.anthropic.claude-sonnet-4-6",
}
BEDROCK_ROWS = [p for p in SONNET if not registry.get(p).traits.forced_tool_with_adaptive]
API_ROWS = [p for p in SONNET if p not in BEDROCK_ROWS]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> None:
    server.reset()


def make(server: MockLLMServer, provider: str, model: str | None = None) -> Any:
    options = server.client_options(provider)
    return create_interface(provider, model or SONNET[provider], **options, max_retries=0)


def test_bedrock_rows_are_the_ones_refusing_adaptive_thinking_with_a_forced_tool() -> None:
    assert BEDROCK_ROWS == ["anthropic-bedrock", "bedrock"]


@pytest.mark.parametrize("choice", ["required", "get_weather"])
@pytest.mark.parametrize("provider", BEDROCK_ROWS)
def test_adaptive_thinking_with_a_forced_tool_is_refused_on_bedrock(
    server: MockLLMServer, provider: str, choice: str
) -> None:
    result = make(server, provider).generate(
        "Weather?", tools=TOOLS, tool_choice=choice, reasoning="high"
    )
    family = (
        "Claude Opus / Sonnet 4.6 (adaptive)"
        if provider == "bedrock"
        else ("Opus / Sonnet 4.6 (adaptive)")
    )
    mode = registry.get(provider).traits.reasoning
    where = f"{mode} {SONNET[provider]} ({family})"
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"] == SAYS.format(where=where)
    assert server.requests == []


@pytest.mark.parametrize("choice", ["required", "get_weather"])
@pytest.mark.parametrize("provider", API_ROWS)
def test_adaptive_thinking_with_a_forced_tool_is_refused_on_anthropics_api_but_for_opus_4_6(
    server: MockLLMServer, provider: str, choice: str
) -> None:
    result = make(server, provider).generate(
        "Weather?", tools=TOOLS, tool_choice=choice, reasoning="high"
    )
    where = f"anthropic {SONNET[provider]} (Opus / Sonnet 4.6 (adaptive))"
    assert result["error"]["type"] == "invalid_request"
    assert result["error"]["message"] == SAYS.format(where=where)
    assert server.requests == []


@pytest.mark.parametrize("provider", API_ROWS)
def test_adaptive_thinking_with_a_forced_tool_is_sent_for_opus_4_6(
    server: MockLLMServer, provider: str
) -> None:
    server.enqueue(provider, tool_calls=[{"name": "get_weather", "arguments": {}}])
    result = make(server, provider, "claude-opus-4-6").generate(
        "Weather?", tools=TOOLS, tool_choice="required", reasoning="high"
    )
    assert result["stop_reason"] == "tool_use"
    body = server.last_request(provider).body
    assert (body["thinking"], body["tool_choice"]) == ({"type": "adaptive"}, {"type": "any"})


@pytest.mark.parametrize("provider", list(SONNET))
def test_budget_thinking_with_a_forced_tool_is_refused_everywhere(
    server: MockLLMServer, provider: str
) -> None:
    result = make(server, provider).generate(
        "Weather?", tools=TOOLS, tool_choice="required", reasoning={"budget_tokens": 2048}
    )
    assert result["error"]["type"] == "invalid_request"
    assert "refuses thinking with a forced tool_choice" in result["error"]["message"]
    assert server.requests == []


@pytest.mark.parametrize("provider", list(SONNET))
def test_a_response_format_with_thinking_travels_natively(
    server: MockLLMServer, provider: str
) -> None:
    """The model has native structured output: the answer is asked for natively, beside the
    tools, with no forced answer tool, on every Claude row (Bedrock included)."""
    server.enqueue(provider, text='{"city": "Paris"}')
    result = make(server, provider).generate(
        "Where?", tools=TOOLS, reasoning="high", response_format=ANSWER
    )
    assert result["parsed"] == {"city": "Paris"}
    body = server.last_request(provider).body
    if provider == "bedrock":
        assert "toolChoice" not in body["toolConfig"]
        assert body["outputConfig"]["textFormat"]["type"] == "json_schema"
    else:
        assert "tool_choice" not in body
        assert body["output_config"]["format"]["type"] == "json_schema"


@pytest.mark.parametrize("provider", list(SONNET))
def test_a_response_format_in_tool_mode_with_thinking_is_refused_where_it_is_forced(
    server: MockLLMServer, provider: str
) -> None:
    """claude-sonnet-4-0 has no native structured output: its answer would come in a forced
    tool, which its budget thinking refuses."""
    model = SONNET[provider].replace("claude-sonnet-4-6", "claude-sonnet-4-20250514")
    result = make(server, provider, model).generate(
        "Where?", reasoning="high", response_format=ANSWER
    )
    assert result["error"]["type"] == "invalid_request"
    message = result["error"]["message"]
    assert "forced tool_choice" in message and "reasoning=" in message
    assert server.requests == []


# --- MockLLMServer refuses what the API refuses --------------------------------------------


def _create(client: Any, model: str, thinking: dict[str, Any]) -> Any:
    return client.messages.create(
        model=model,
        max_tokens=4096,
        messages=[{"role": "user", "content": "Weather?"}],
        tools=[{"name": "get_weather", "input_schema": {"type": "object"}}],
        tool_choice={"type": "any"},
        thinking=thinking,
    )


BUDGET = {"type": "enabled", "budget_tokens": 1024}
ADAPTIVE = {"type": "adaptive"}


@pytest.mark.parametrize("provider", ["anthropic", "anthropic-vertex"])
def test_the_mock_refuses_budget_thinking_with_a_forced_tool(
    server: MockLLMServer, provider: str
) -> None:
    cls = anthropic.Anthropic if provider == "anthropic" else anthropic.AnthropicVertex
    client = cls(**server.sdk_client_kwargs(provider), max_retries=0)
    server.enqueue(provider, tool_calls=[{"name": "get_weather", "arguments": {}}])
    with pytest.raises(anthropic.BadRequestError) as caught:
        _create(client, SONNET[provider], BUDGET)
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "Thinking may not be enabled when tool_choice forces tool use.",
        },
        "request_id": caught.value.response.headers["request-id"],
    }
    assert server.last_request(provider).rejected_by == "thinking_allows_tool_choice"
    answer = _create(client, "claude-opus-4-6", ADAPTIVE)  # recorded: answered
    assert answer.content[0].type == "tool_use"
    server.enqueue(provider, text="never served")
    with pytest.raises(anthropic.BadRequestError):
        _create(client, SONNET[provider], ADAPTIVE)  # the other models: refused alike
    assert server.last_request(provider).rejected_by == "thinking_allows_tool_choice"


def test_the_mock_refuses_adaptive_thinking_with_a_forced_tool_on_bedrock(
    server: MockLLMServer,
) -> None:
    client = anthropic.AnthropicBedrock(
        **server.sdk_client_kwargs("anthropic-bedrock"), max_retries=0
    )
    server.enqueue("anthropic-bedrock", text="never served")
    with pytest.raises(anthropic.BadRequestError) as caught:
        _create(client, SONNET["anthropic-bedrock"], ADAPTIVE)
    assert caught.value.body == {
        "message": "The model returned the following errors: Thinking may not be enabled "
        "when tool_choice forces tool use."
    }
    rule = server.last_request("anthropic-bedrock").rejected_by
    assert rule == "adaptive_thinking_allows_tool_choice"
    assert server.pending("anthropic-bedrock") == 1
