"""Every Berkeley Function Calling Leaderboard tool schema used as ``response_format`` gives
each provider a native structured-output field its own SDK's types accept: the openai,
groq and anthropic request TypedDicts (validated with pydantic), mistralai's and ollama's
request models, botocore's parameter validation of Converse, and google-genai's
``GenerateContentConfig`` (and, in tool mode, its ``FunctionDeclaration`` schema)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from tests.llm.bfcl_schemas import bfcl_functions, openai_schema
from zerda.llm import _structured, create_interface, registry
from zerda.llm._structured import OutputSpec
from zerda.llm.registry import NAMES
from zerda.testing import MockLLMServer

_BFCL = bfcl_functions()
pytestmark = pytest.mark.skipif(not _BFCL, reason="bfcl-eval is not installed")


@cache
def specs() -> tuple[OutputSpec, ...]:
    """Each BFCL schema as a checked response_format (the same for every provider)."""
    out = []
    for fn in _BFCL:
        spec = _structured.output_spec(
            {"name": fn["name"], "schema": openai_schema(fn["parameters"])}
        )
        assert spec is not None
        out.append(spec)
    return tuple(out)


# The SDK whose types check each wire's native fields (rows on a shared wire: its parent's).
_SDK_OF_WIRE = {
    "azure": "openai",
    "azure-responses": "openai-responses",
    "anthropic-bedrock": "anthropic",
    "anthropic-vertex": "anthropic",
    "vertex": "gemini",
}
NATIVE_ROWS = [p for p in NAMES if "native" in registry.get(p).traits.structured_output]


def _interface(provider: str) -> Any:
    options: dict[str, Any] = {"api_key": "k"}
    if provider == "bedrock":
        options = {"region": "us-east-1", "aws_access_key_id": "a", "aws_secret_access_key": "s"}
    elif provider == "ollama":
        options = {}
    elif registry.get(provider).wire in _SDK_OF_WIRE:
        # The cloud rows' credentials, as the mock hands them out (no request is sent).
        with MockLLMServer() as server:
            options = server.client_options(provider)
    gemini = registry.get(provider).wire in ("gemini", "vertex")
    return create_interface(provider, model="gemini-3-flash" if gemini else "m", **options)


def _validator(provider: str) -> Any:
    """A function that raises when the SDK refuses the native fields."""
    from pydantic import TypeAdapter

    wire = registry.get(provider).wire
    provider = _SDK_OF_WIRE.get(wire, wire)
    if provider == "openai-responses":
        from openai.types.responses import ResponseTextConfigParam

        text = TypeAdapter(ResponseTextConfigParam)
        return lambda fields: text.validate_python(fields["text"], strict=True)
    if provider in ("openai", "groq"):
        if provider == "openai":
            from openai.types.chat.completion_create_params import ResponseFormat
        else:
            from groq.types.chat.completion_create_params import ResponseFormat  # type: ignore[assignment]
        adapter = TypeAdapter(ResponseFormat)
        return lambda fields: adapter.validate_python(fields["response_format"], strict=True)
    if provider == "mistral":
        from mistralai.client.models import ResponseFormat as MistralFormat

        return lambda fields: MistralFormat.model_validate(fields["response_format"])
    if provider == "ollama":
        from ollama._types import ChatRequest

        return lambda fields: ChatRequest.model_validate({"model": "m", "messages": [], **fields})
    if provider == "anthropic":
        from anthropic.types import OutputConfigParam

        adapter = TypeAdapter(OutputConfigParam)
        return lambda fields: adapter.validate_python(fields, strict=True)
    if provider == "bedrock":
        import botocore.session
        from botocore.validate import ParamValidator

        model = botocore.session.get_session().get_service_model("bedrock-runtime")
        shape = model.operation_model("Converse").input_shape

        def validate(fields: dict[str, Any]) -> None:
            params = {"modelId": "m", "messages": [], "outputConfig": fields}
            report = ParamValidator().validate(params, shape)
            assert not report.has_errors(), report.generate_report()

        return validate
    from google.genai import types

    return lambda fields: types.GenerateContentConfig.model_validate(fields)


@pytest.mark.parametrize("provider", NATIVE_ROWS)
def test_every_bfcl_schema_as_response_format_passes_the_sdk(provider: str) -> None:
    llm = _interface(provider)
    validate = _validator(provider)
    strict = _structured.uses_strict(llm.traits, llm.model)
    assert len(specs()) >= 3255
    for spec in specs():
        fields = llm._map_response_format(replace(spec, mode="native", strict=strict))
        validate(fields)


def test_every_bfcl_schema_as_a_gemini_answer_tool_passes_the_sdk() -> None:
    from google.genai import types

    from zerda.llm.tools import to_gemini_tools

    for spec in specs():
        [tool] = to_gemini_tools([_structured.answer_tool(spec)]) or []
        types.Tool.model_validate(tool)
