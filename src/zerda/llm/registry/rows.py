"""The registry's rows: one per provider, its traits as data.

An OpenAI-compatible service is one :func:`compatible_row` row here (its own ``name``,
``default_base_url``, ``env_keys`` and traits over ``OpenAIInterface``), not a module. What
a model family can do wherever it is served comes from :mod:`.profiles`, which the rows
hosting that family read. Importing this module imports no SDK and no wire: a row names its
class as a ``"module:Class"`` string, imported by :meth:`ProviderSpec.interface_class`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from zerda.llm._record import replace
from zerda.llm._traits import Hosted, Media, Traits, frozen_hosted, frozen_map
from zerda.llm.registry.profiles import CLAUDE, GEMINI, GPT_OSS, output_traits
from zerda.llm.registry.spec import ProviderSpec

_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_OPENAI_AUDIO = ("audio/wav", "audio/mpeg")

_OPENAI = ProviderSpec(
    name="openai",
    cls="zerda.llm.wires.openai.interface:OpenAIInterface",
    extra="openai",
    sdk_module="openai",
    sdk_package="openai",
    env_keys=("OPENAI_API_KEY",),
    default_base_url="https://api.openai.com/v1",
    wire="openai",
    demo_model="gpt-4o-mini",
    title="OpenAI Chat Completions",
    price_provider="openai",
    profile_providers=("openai",),
    traits=Traits(
        # https://platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files,
        # /docs/guides/audio: image_url (data URI or URL), file (file_data or file_id),
        # input_audio (wav, mp3). Tool messages take text only.
        user=Media(
            parts=frozenset({"image", "document", "audio", "file"}),
            media_types=frozen_map(
                {"image": _IMAGES, "document": ("application/pdf",), "audio": _OPENAI_AUDIO}
            ),
            urls=frozenset({"image"}),
            uris=frozenset({"file-id"}),
        ),
        reasoning="openai",
        structured_output=("native", "tool"),
        native_output_with_tools=".*",
        strict_output_models=".*",
        parallel_tool_calls=True,
        # https://platform.openai.com/docs/guides/batch: a JSONL file, then /v1/batches.
        batch="openai",
        # Chat Completions runs web search on its search models only, as the body's
        # web_search_options (wires/openai/hosted.py): no domain filters, no max uses.
        hosted=frozen_hosted(
            {
                "web_search": Hosted(
                    native="web_search_options",
                    options=frozenset({"user_location"}),
                    models=r"-search-(preview|api)",
                    doc="https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat",
                )
            }
        ),
    ),
)

_RESPONSES_MEDIA = Media(
    parts=frozenset({"image", "document", "file"}),
    media_types=frozen_map({"image": _IMAGES, "document": ("application/pdf",)}),
    urls=frozenset({"image", "document"}),
    uris=frozenset({"file-id"}),
)

# Hosted tools (DESIGN §18): built-in tools in ``tools``
# (https://platform.openai.com/docs/guides/tools); the wire's mapping is in
# wires/openai_responses/hosted.py. No per-tool use limit and no blocked-domain list exist
# there (filters.allowed_domains only), so the core refuses max_uses and blocked_domains.
_RESPONSES_HOSTED = frozen_hosted(
    {
        "web_search": Hosted(
            native="web_search",
            options=frozenset({"allowed_domains", "user_location"}),
            # "not supported in gpt-4.1-nano" (the guide's Limitations).
            models=r"^(?!.*gpt-4\.1-nano)",
            doc="https://platform.openai.com/docs/guides/tools-web-search",
        ),
        "code_execution": Hosted(
            native="code_interpreter",
            doc="https://platform.openai.com/docs/guides/tools-code-interpreter",
        ),
        "file_search": Hosted(
            native="file_search",
            options=frozenset({"vector_store_ids", "max_num_results"}),
            doc="https://platform.openai.com/docs/guides/tools-file-search",
        ),
        "mcp": Hosted(
            native="mcp",
            options=frozenset({"url", "name", "allowed_tools", "headers"}),
            doc="https://platform.openai.com/docs/guides/tools-remote-mcp",
        ),
    }
)
# Azure OpenAI's Responses API runs web_search (its how-to: "use the web_search tool";
# user_location is the one option it documents), code_interpreter and remote MCP servers
# (server_url, require_approval, headers), per
# https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses; it documents no
# file_search for Responses (vector stores are the Assistants') and no allowed_tools.
_AZURE_RESPONSES_HOSTED = frozen_hosted(
    {
        "web_search": Hosted(
            native="web_search",
            options=frozenset({"user_location"}),
            doc="https://learn.microsoft.com/azure/ai-foundry/openai/how-to/web-search",
        ),
        "code_execution": Hosted(
            native="code_interpreter",
            doc="https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses#code-interpreter",
        ),
        "mcp": Hosted(
            native="mcp",
            options=frozenset({"url", "name", "headers"}),
            doc="https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses#using-remote-mcp-servers",
        ),
    }
)

_OPENAI_RESPONSES = ProviderSpec(
    name="openai-responses",
    aliases=("responses",),
    cls="zerda.llm.wires.openai_responses.interface:OpenAIResponsesInterface",
    extra="openai",
    sdk_module="openai",
    sdk_package="openai",
    env_keys=("OPENAI_API_KEY",),
    default_base_url="https://api.openai.com/v1",
    wire="openai-responses",
    demo_model="gpt-5-mini",
    title="OpenAI Responses",
    price_provider="openai",
    profile_providers=("openai",),
    traits=Traits(
        # https://platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files:
        # input_image (data URI or URL) and input_file (file_data, file_url or file_id), in
        # user messages and inside function_call_output. No audio input here.
        user=_RESPONSES_MEDIA,
        tool_results=_RESPONSES_MEDIA,
        tool_media=True,
        reasoning="openai",
        # text.format (json_schema, strict; or json_object), beside tools:
        # https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses
        structured_output=("native", "tool"),
        native_output_with_tools=".*",
        strict_output_models=".*",
        parallel_tool_calls=True,
        # https://platform.openai.com/docs/api-reference/responses/create has no stop field.
        stop_sequences=False,
        # https://platform.openai.com/docs/api-reference/responses/input-tokens
        count_tokens="openai-responses",
        hosted=_RESPONSES_HOSTED,
    ),
)

_GROQ = ProviderSpec(
    name="groq",
    cls="zerda.llm.wires.groq.interface:GroqInterface",
    extra="groq",
    sdk_module="groq",
    sdk_package="groq",
    env_keys=("GROQ_API_KEY",),
    default_base_url="https://api.groq.com",
    wire="groq",
    demo_model="llama-3.3-70b-versatile",
    title="Groq",
    price_provider="groq",
    profile_providers=("groq",),
    traits=Traits(
        # https://console.groq.com/docs/vision: image_url only, data URI or URL.
        user=Media(
            parts=frozenset({"image"}),
            media_types=frozen_map({"image": _IMAGES}),
            urls=frozenset({"image"}),
        ),
        reasoning="groq",
        structured_output=("native", "tool"),
        # https://console.groq.com/docs/structured-outputs: strict mode (constrained
        # decoding) only on the gpt-oss models (their profile says so), best-effort
        # elsewhere; structured outputs do not combine with tool use.
        **output_traits(GPT_OSS),
        parallel_tool_calls=True,
        # https://console.groq.com/docs/batch: OpenAI's file + /v1/batches shape.
        batch="openai",
        # Built-in tools: gpt-oss takes browser_search / code_interpreter in tools; the
        # Compound systems run web search, code and website visits themselves, restricted by
        # compound_custom.tools.enabled_tools (wires/groq/hosted.py maps both).
        hosted=frozen_hosted(
            {
                "web_search": Hosted(
                    native="browser_search",
                    # search_settings.include_domains / exclude_domains: Compound only
                    options=frozenset({"allowed_domains", "blocked_domains"}),
                    models=r"gpt-oss|compound",
                    doc="https://console.groq.com/docs/browser-search",
                ),
                "web_fetch": Hosted(
                    native="visit_website",
                    models=r"compound",
                    doc="https://console.groq.com/docs/visit-website",
                ),
                "code_execution": Hosted(
                    native="code_interpreter",
                    models=r"gpt-oss-(20b|120b)|compound",
                    doc="https://console.groq.com/docs/code-execution",
                ),
            }
        ),
    ),
)

_MISTRAL = ProviderSpec(
    name="mistral",
    cls="zerda.llm.wires.mistral.interface:MistralInterface",
    extra="mistral",
    sdk_module="mistralai.client",
    sdk_package="mistralai",
    env_keys=("MISTRAL_API_KEY",),
    default_base_url="https://api.mistral.ai",
    wire="mistral",
    demo_model="mistral-small-latest",
    title="Mistral",
    price_provider="mistral",
    profile_providers=("mistral",),
    traits=Traits(
        tool_id="mistral",
        # https://docs.mistral.ai/capabilities/vision/, /capabilities/document_ai/,
        # /capabilities/audio/: image_url, document_url, input_audio.
        user=Media(
            parts=frozenset({"image", "document", "audio"}),
            media_types=frozen_map(
                {"image": _IMAGES, "document": ("application/pdf",), "audio": _OPENAI_AUDIO}
            ),
            urls=frozenset({"image", "document"}),
        ),
        reasoning="mistral",
        structured_output=("native", "tool"),
        native_output_with_tools=".*",
        strict_output_models=".*",
        parallel_tool_calls=True,
        # https://docs.mistral.ai/capabilities/batch: a JSONL file, then /v1/batch/jobs.
        batch="mistral",
    ),
)

_OLLAMA = ProviderSpec(
    name="ollama",
    cls="zerda.llm.wires.ollama.interface:OllamaInterface",
    extra="ollama",
    sdk_module="ollama",
    sdk_package="ollama",
    env_keys=(),
    auth="none (a local server)",
    default_base_url="http://127.0.0.1:11434",
    wire="ollama",
    demo_model="llama3.2",
    title="Ollama",
    # No price_provider: a local server's calls cost nothing genai-prices could price, and
    # its model names are the user's own; models.dev describes none of them.
    traits=Traits(
        # Ollama applies no rule to tool names (its API reference types function.name as a
        # string, https://github.com/ollama/ollama/blob/main/docs/api.md#chat; the server
        # passes it to the model's template): MCP's "server.tool" names go out unchanged.
        tool_name=r".+",
        tool_name_rule="any name (Ollama applies no rule of its own)",
        tool_id="optional",
        # https://github.com/ollama/ollama/blob/main/docs/api.md#chat: message.images,
        # base64 only (the server fetches no URL).
        user=Media(parts=frozenset({"image"}), media_types=frozen_map({"image": _IMAGES})),
        reasoning="ollama",
        structured_output=("native", "tool"),
        # /api/chat "format" takes a JSON Schema or "json" beside tools; the schema is the
        # caller's own (no strict dialect).
        native_output_with_tools=".*",
        # The server does not enforce tool_choice: "required" cannot be honoured
        # (none: no tools sent; a name: only that tool sent).
        tool_choice=frozenset({"auto", "none", "name"}),
    ),
)

_ANTHROPIC_MEDIA = Media(
    parts=frozenset({"image", "document"}),
    media_types=frozen_map({"image": _IMAGES, "document": ("application/pdf", "text/plain")}),
    urls=frozenset({"image", "document"}),
)

# Anthropic's server tools (DESIGN §18; wires/anthropic/server_tools.py maps them): tools
# entries of these versions, the MCP connector's servers with this beta. A newer version
# (web_search_20260209's dynamic filtering, on the models that take it) is a native tool.
_ANTHROPIC_HOSTED = frozen_hosted(
    {
        "web_search": Hosted(
            native="web_search_20250305",
            options=frozenset({"max_uses", "allowed_domains", "blocked_domains", "user_location"}),
            doc="https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-search-tool",
            # Dynamic filtering: web_search_20260209 on Opus and Sonnet 4.6 and later (the
            # page above; a recorded claude-sonnet-4-6 exchange with it got 200, and one
            # with claude-sonnet-4-5 used web_search_20250305, pydantic-ai's test_web_tools).
            versions=(
                (r"claude-(opus|sonnet)-(4-([6-9]|\d\d)(?!\d)|[5-9])", "web_search_20260209"),
            ),
        ),
        "web_fetch": Hosted(
            native="web_fetch_20250910",
            options=frozenset(
                {"max_uses", "allowed_domains", "blocked_domains", "max_content_tokens"}
                | {"citations"}
            ),
            doc="https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-fetch-tool",
        ),
        "code_execution": Hosted(
            native="code_execution_20250825",
            doc="https://docs.claude.com/en/docs/agents-and-tools/tool-use/code-execution-tool",
        ),
        "mcp": Hosted(
            native="mcp-client-2025-11-20",
            options=frozenset({"url", "name", "allowed_tools", "headers"}),
            doc="https://docs.claude.com/en/docs/agents-and-tools/mcp-connector",
        ),
    }
)
# Claude on Vertex AI runs web search (with the web-search-2025-03-05 beta) and none of the
# other server tools; the MCP connector "is currently not supported on Amazon Bedrock and
# Google Vertex" (the connector's page above).
_ANTHROPIC_VERTEX_HOSTED = frozen_hosted(
    {
        "web_search": Hosted(
            native="web_search_20250305",
            options=frozenset({"max_uses", "allowed_domains", "blocked_domains"}),
            doc="https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/web-search",
        )
    }
)

_ANTHROPIC = ProviderSpec(
    name="anthropic",
    cls="zerda.llm.wires.anthropic.interface:AnthropicInterface",
    extra="anthropic",
    sdk_module="anthropic",
    sdk_package="anthropic",
    env_keys=("ANTHROPIC_API_KEY",),
    default_base_url="https://api.anthropic.com",
    wire="anthropic",
    demo_model="claude-sonnet-4-6",
    title="Anthropic Messages",
    price_provider="anthropic",
    profile_providers=("anthropic",),
    traits=Traits(
        # Adaptive thinking with a forced tool_choice: answered for claude-opus-4-6 (recorded
        # exchanges, 200 and the forced call), refused for the others (Traits' docstring).
        forced_tool_with_adaptive=r"claude-opus-4-6",
        tool_id="anthropic",
        # https://docs.anthropic.com/en/docs/build-with-claude/vision, /pdf-support:
        # image and document blocks (base64 or URL sources), also inside tool_result.
        user=_ANTHROPIC_MEDIA,
        tool_results=_ANTHROPIC_MEDIA,
        tool_media=True,
        reasoning="anthropic",
        structured_output=("native", "tool"),
        # https://docs.claude.com/en/docs/build-with-claude/structured-outputs: a JSON
        # schema (closed objects) in output_config.format, with tools too; no schema-less
        # JSON mode.
        json_mode=False,
        # Claude models before structured outputs answer in a tool (profiles.CLAUDE).
        **output_traits(CLAUDE, native_output_with_tools=".*", strict_output_models=".*"),
        cache_points=True,
        parallel_tool_calls=True,
        # https://docs.anthropic.com/en/docs/build-with-claude/batch-processing
        batch="anthropic",
        # https://docs.anthropic.com/en/api/messages-count-tokens
        count_tokens="anthropic",
        hosted=_ANTHROPIC_HOSTED,
    ),
)

# DocumentBlock.format: pdf | csv | doc | docx | xls | xlsx | html | txt | md
_BEDROCK_DOCUMENTS = (
    "application/pdf",
    "text/csv",
    "application/msword",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "text/html",
    "text/plain",
    "text/markdown",
)
_BEDROCK_MEDIA = Media(
    parts=frozenset({"image", "document", "file"}),
    media_types=frozen_map({"image": _IMAGES, "document": _BEDROCK_DOCUMENTS}),
    uris=frozenset({"s3"}),
)
# Messages also take AudioBlock (format mp3, wav, flac, ogg, aac, m4a, webm... raw bytes or
# s3Location): https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_AudioBlock.html.
# ToolResultContentBlock has no audio member, so tool results stay without it.
_BEDROCK_USER_MEDIA = Media(
    parts=frozenset({"image", "document", "audio", "file"}),
    media_types=frozen_map(
        {
            "image": _IMAGES,
            "document": _BEDROCK_DOCUMENTS,
            "audio": (
                "audio/mpeg",
                "audio/wav",
                "audio/flac",
                "audio/ogg",
                "audio/aac",
                "audio/mp4",
                "audio/webm",
            ),
        }
    ),
    uris=frozenset({"s3"}),
)

_BEDROCK = ProviderSpec(
    name="bedrock",
    region_option="region",
    aliases=("aws",),
    cls="zerda.llm.wires.bedrock.interface:AWSInterface",
    extra="bedrock",
    sdk_module="boto3",
    sdk_package="boto3",
    env_keys=(),  # the AWS credential chain signs requests; there is no API key
    auth="the AWS credential chain, and a region",
    default_base_url=None,  # https://bedrock-runtime.{region}.amazonaws.com
    wire="bedrock",
    demo_model="anthropic.claude-3-5-sonnet-20240620-v1:0",
    title="AWS Bedrock Converse",
    price_provider="aws",
    profile_providers=("amazon-bedrock",),
    traits=Traits(
        tool_id="bedrock",
        # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html:
        # image / document (and, in messages, audio) blocks with raw bytes or an s3Location;
        # image / document also inside toolResult (API_runtime_ToolResultContentBlock.html).
        user=_BEDROCK_USER_MEDIA,
        tool_results=_BEDROCK_MEDIA,
        tool_media=True,
        reasoning="bedrock",
        structured_output=("native", "tool"),
        # outputConfig.textFormat (type json_schema) of the Converse API; no schema-less
        # JSON mode.
        json_mode=False,
        **output_traits(CLAUDE, GPT_OSS, native_output_with_tools=".*", strict_output_models=".*"),
        cache_points=True,
        # Converse has no parallel_tool_calls switch: sending False would be ignored.
        parallel_tool_calls=False,
        # https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html:
        # a JSONL file in S3, a model invocation job of the Converse type.
        batch="bedrock",
        # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html
        count_tokens="bedrock",
        # claude-sonnet-4-6 with adaptive thinking and a forced toolChoice: 400 "Thinking may
        # not be enabled when tool_choice forces tool use" (https://github.com/can1357/oh-my-pi/issues/341):
        # no model's adaptive thinking takes one here (forced_tool_with_adaptive, the default "").
        # Converse's system tools: toolConfig.tools {"systemTool": {"name": ...}}
        # (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_SystemTool.html),
        # Amazon Nova's only; no options. Converse's Tool union has no field for Anthropic's
        # server tools: Claude's run on the anthropic-bedrock row, not here.
        hosted=frozen_hosted(
            {
                "web_search": Hosted(
                    native="nova_grounding",
                    # Nova Premier (Nova 1) and Nova 2 models.
                    models=r"nova-premier|nova-2",
                    doc="https://docs.aws.amazon.com/nova/latest/nova2-userguide/web-grounding.html",
                ),
                "code_execution": Hosted(
                    native="nova_code_interpreter",
                    models=r"nova-2",
                    doc="https://docs.aws.amazon.com/nova/latest/userguide/tool-built-in.html",
                ),
            }
        ),
    ),
)

# User content: inline_data, or file_data for Files API / gs:// URIs and, since January 2026,
# public or signed http(s) URLs the API fetches
# (https://ai.google.dev/gemini-api/docs/file-input-methods).
_GEMINI_MEDIA = Media(
    parts=frozenset({"image", "document", "audio", "file"}),
    media_types=frozen_map({"image": ("*",), "document": ("*",), "audio": ("*",), "file": ("*",)}),
    urls=frozenset({"image", "document", "audio"}),
    uris=frozenset({"gs", "files-api"}),
)
# FunctionResponse.parts ("multimodal function responses", Gemini 3) take images and
# documents only: https://ai.google.dev/gemini-api/docs/function-calling#multimodal
# (image/png, image/jpeg, image/webp, application/pdf, text/plain); recorded exchanges show
# inline_data and Files API file_data accepted there, and audio sent as user parts instead.
_GEMINI_TOOL_MEDIA = Media(
    parts=frozenset({"image", "document", "file"}),
    media_types=frozen_map(
        {
            "image": ("image/png", "image/jpeg", "image/webp"),
            "document": ("application/pdf", "text/plain"),
        }
    ),
    uris=frozenset({"gs", "files-api"}),
)

# Hosted tools (DESIGN §18), each a Tool field of generateContent's ``tools``
# (https://ai.google.dev/api/caching#Tool): the Gemini API's google_search, url_context,
# code_execution and file_search take none of the shared options (no use limit, no domain
# lists, no location), so the core refuses them; file_search's vector store ids are its
# fileSearchStores names and max_num_results its top_k.
_GEMINI_HOSTED = frozen_hosted(
    {
        "web_search": Hosted(
            native="google_search", doc="https://ai.google.dev/gemini-api/docs/google-search"
        ),
        "web_fetch": Hosted(
            native="url_context", doc="https://ai.google.dev/gemini-api/docs/url-context"
        ),
        "code_execution": Hosted(
            native="code_execution", doc="https://ai.google.dev/gemini-api/docs/code-execution"
        ),
        "file_search": Hosted(
            native="file_search",
            options=frozenset({"vector_store_ids", "max_num_results"}),
            doc="https://ai.google.dev/gemini-api/docs/file-search",
        ),
    }
)
# Vertex AI: google_search with exclude_domains (the blocked domains; "not supported in
# Gemini API", google-genai's GoogleSearch), url_context and code_execution; no file_search
# ("not supported in Vertex AI": its RAG is the retrieval tool, reachable as a native tool).
_VERTEX_HOSTED = frozen_hosted(
    {
        "web_search": Hosted(
            native="google_search",
            options=frozenset({"blocked_domains"}),
            doc="https://cloud.google.com/vertex-ai/generative-ai/docs/grounding/grounding-with-google-search",
        ),
        "web_fetch": Hosted(
            native="url_context",
            doc="https://cloud.google.com/vertex-ai/generative-ai/docs/url-context",
        ),
        "code_execution": Hosted(
            native="code_execution",
            doc="https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/code-execution",
        ),
    }
)

_GEMINI = ProviderSpec(
    name="gemini",
    aliases=("google",),
    cls="zerda.llm.wires.gemini.interface:GeminiInterface",
    extra="gemini",
    sdk_module="google.genai",
    sdk_package="google-genai",
    env_keys=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    default_base_url="https://generativelanguage.googleapis.com",
    wire="gemini",
    demo_model="gemini-2.5-flash",
    title="Google Gemini",
    price_provider="google",
    profile_providers=("google",),
    traits=Traits(
        # FunctionDeclaration.name in google-genai's types: starts with a letter or an
        # underscore; letters, digits, underscores, dots, colons and dashes; at most 128.
        tool_name=r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}",
        tool_name_rule="1-128 characters: a letter or '_' first, then letters, digits, '_', '.', ':' and '-'",
        tool_id="optional",
        # https://ai.google.dev/gemini-api/docs/image-understanding, /document-processing,
        # /audio: inline_data and file_data parts; FunctionResponse.parts for tool media.
        user=_GEMINI_MEDIA,
        tool_results=_GEMINI_TOOL_MEDIA,
        tool_media=True,
        reasoning="gemini",
        structured_output=("native", "tool"),
        # response_json_schema + response_mime_type, beside function declarations only on
        # the generations profiles.GEMINI names.
        **output_traits(GEMINI),
        # https://ai.google.dev/gemini-api/docs/batch-mode: inline requests, or a JSONL file.
        batch="gemini",
        # https://ai.google.dev/api/tokens (on Vertex AI too: countTokens).
        count_tokens="gemini",
        hosted=_GEMINI_HOSTED,
    ),
)

# --- OpenAI-compatible services: rows over OpenAIInterface, their quirks as traits --------

_OPENAI_TRAITS = _OPENAI.traits


def compatible_row(
    name: str,
    title: str,
    base_url: str,
    env_key: str | None,
    demo_model: str,
    *,
    auth: str = "",
    price_provider: str | None = None,
    profile_providers: tuple[str, ...] = (),
    **traits: Any,
) -> ProviderSpec:
    """A Chat Completions service reached through the openai SDK at its own base URL.
    Text only in user messages unless a trait says otherwise: what each service accepts
    beyond text varies by model."""
    return ProviderSpec(
        name=name,
        cls="zerda.llm.wires.openai.interface:OpenAIInterface",
        extra="openai",
        sdk_module="openai",
        sdk_package="openai",
        env_keys=(env_key,) if env_key else (),
        auth=auth,
        default_base_url=base_url,
        wire="openai",
        demo_model=demo_model,
        title=title,
        traits=Traits(**{"reasoning": "openai", "structured_output": ("native", "tool"), **traits}),
        defaults=MappingProxyType({"base_url": base_url}),
        price_provider=price_provider,
        profile_providers=profile_providers,
    )


_LOCAL = "none (a local server; `api_key=` when it was started with one)"

# Chat Completions image_url parts (a data URI or a URL), which these services take for their
# vision models (a text-only model answers 400, as on OpenAI); tool messages take text, so
# images from tools travel in a user message after the results.
_COMPATIBLE_IMAGES = Media(
    parts=frozenset({"image"}),
    media_types=frozen_map({"image": _IMAGES}),
    urls=frozenset({"image"}),
)

_OPENROUTER = compatible_row(
    "openrouter",
    "OpenRouter (OpenAI-compatible)",
    "https://openrouter.ai/api/v1",
    "OPENROUTER_API_KEY",
    "openai/gpt-4o-mini",
    price_provider="openrouter",
    profile_providers=("openrouter",),
    # https://openrouter.ai/docs/api-reference/chat-completion: "reasoning" on the message
    # and delta; max_tokens; parallel_tool_calls passed to the model's provider.
    max_tokens_field="max_tokens",
    parallel_tool_calls=True,
    # https://openrouter.ai/docs/features/multimodal/images: image_url, URL or base64.
    user=_COMPATIBLE_IMAGES,
)
_DEEPSEEK = compatible_row(
    "deepseek",
    "DeepSeek (OpenAI-compatible)",
    "https://api.deepseek.com",
    "DEEPSEEK_API_KEY",
    "deepseek-chat",
    price_provider="deepseek",
    profile_providers=("deepseek",),
    # https://api-docs.deepseek.com/guides/reasoning_model: the reasoning is the message's
    # (and delta's) reasoning_content; the API documents max_tokens, not
    # max_completion_tokens, and no parallel_tool_calls switch. Text only: an image_url part
    # gets 400 "unknown variant `image_url`, expected `text`".
    max_tokens_field="max_tokens",
    # https://api-docs.deepseek.com/guides/json_mode: json_object only, no json_schema, so a
    # schema's answer comes in a tool ("json" too: one mode for every response_format).
    structured_output=("tool",),
    # https://api-docs.deepseek.com/guides/thinking_mode#tool-calls: in thinking mode, the
    # reasoning_content of a turn that called tools must go back in every later request
    # (else 400); on the other turns it is ignored.
    reasoning_echo="reasoning_content",
)
_XAI = compatible_row(
    "xai",
    "xAI Grok (OpenAI-compatible)",
    "https://api.x.ai/v1",
    "XAI_API_KEY",
    "grok-3-mini",
    price_provider="x-ai",
    profile_providers=("xai",),
    # https://docs.x.ai/docs/guides/reasoning: reasoning_content on reasoning models;
    # https://docs.x.ai/docs/guides/function-calling: parallel_tool_calls.
    parallel_tool_calls=True,
    # https://docs.x.ai/docs/guides/image-understanding: image_url, URL or base64.
    user=_COMPATIBLE_IMAGES,
)
_TOGETHER = compatible_row(
    "together",
    "Together AI (OpenAI-compatible)",
    "https://api.together.xyz/v1",
    "TOGETHER_API_KEY",
    "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    price_provider="together",
    profile_providers=("togetherai",),
    # https://docs.together.ai/reference/chat-completions-1: max_tokens; reasoning models
    # return "reasoning"; no parallel_tool_calls switch documented.
    max_tokens_field="max_tokens",
    # https://docs.together.ai/docs/vision-overview: image_url, URL or base64.
    user=_COMPATIBLE_IMAGES,
)
_FIREWORKS = compatible_row(
    "fireworks",
    "Fireworks AI (OpenAI-compatible)",
    "https://api.fireworks.ai/inference/v1",
    "FIREWORKS_API_KEY",
    "accounts/fireworks/models/llama-v3p3-70b-instruct",
    price_provider="fireworks",
    profile_providers=("fireworks-ai",),
    # https://docs.fireworks.ai/guides/function-calling: tool_choice "any" forces a call;
    # https://docs.fireworks.ai/guides/reasoning: reasoning_content.
    max_tokens_field="max_tokens",
    tool_choice_required="any",
    # https://docs.fireworks.ai/guides/querying-vision-language-models: image_url.
    user=_COMPATIBLE_IMAGES,
)
_CEREBRAS = compatible_row(
    "cerebras",
    "Cerebras (OpenAI-compatible)",
    "https://api.cerebras.ai/v1",
    "CEREBRAS_API_KEY",
    "llama-3.3-70b",
    price_provider="cerebras",
    profile_providers=("cerebras",),
    # https://inference-docs.cerebras.ai/api-reference/chat-completions: "reasoning" on
    # the message, max_completion_tokens, parallel_tool_calls.
    parallel_tool_calls=True,
    # https://inference-docs.cerebras.ai/capabilities/vision: image_url on vision models.
    user=_COMPATIBLE_IMAGES,
)
_VLLM = compatible_row(
    "vllm",
    "vLLM server (OpenAI-compatible)",
    "http://127.0.0.1:8000/v1",
    None,
    "Qwen/Qwen3-8B",
    auth=_LOCAL,
    # https://docs.vllm.ai/en/latest/features/reasoning_outputs.html: reasoning_content
    # (renamed "reasoning" in newer servers); tool_choice auto/none/required/named.
    parallel_tool_calls=True,
    # https://docs.vllm.ai/en/latest/features/multimodal_inputs.html: image_url.
    user=_COMPATIBLE_IMAGES,
)
_LMSTUDIO = compatible_row(
    "lmstudio",
    "LM Studio server (OpenAI-compatible)",
    "http://127.0.0.1:1234/v1",
    None,
    "qwen3-8b",
    auth=_LOCAL,
    # https://lmstudio.ai/docs/app/api/tools: tool_choice "auto", "none" and "required"
    # only; reasoning_content (or "reasoning") when the server separates it.
    tool_choice=frozenset({"auto", "none", "required"}),
    # https://lmstudio.ai/docs/app/api/structured-output: response_format json_schema only.
    json_mode=False,
    # https://lmstudio.ai/docs/app/api/endpoints/openai: base64 image_url on VLMs.
    user=replace(_COMPATIBLE_IMAGES, urls=frozenset()),
)

# --- the same APIs through cloud platforms -----------------------------------------------

_AZURE = ProviderSpec(
    name="azure",
    cls="zerda.llm.wires.azure.interface:AzureOpenAIInterface",
    extra="openai",
    sdk_module="openai",
    sdk_package="openai",
    env_keys=("AZURE_OPENAI_API_KEY",),
    auth="a Microsoft Entra ID token (`azure_ad_token_provider=`)",
    secret_options=("azure_ad_token",),
    default_base_url=None,  # https://{resource}.openai.azure.com, as azure_endpoint
    wire="azure",
    demo_model="gpt-4o-mini",  # a deployment name
    title="Azure OpenAI Chat Completions",
    price_provider="azure",
    profile_providers=("azure", "openai"),
    # Azure's batch API needs a Global-Batch deployment and its own file routes: not mapped.
    # Its Chat Completions reference documents no hosted tool (no search models, no
    # web_search_options): web search runs on azure-responses.
    traits=replace(_OPENAI_TRAITS, batch=None, hosted=frozen_hosted({})),
    # The latest GA data-plane version:
    # https://learn.microsoft.com/azure/ai-services/openai/api-version-lifecycle
    defaults=MappingProxyType({"api_version": "2024-10-21"}),
)
_AZURE_RESPONSES = ProviderSpec(
    name="azure-responses",
    cls="zerda.llm.wires.azure.interface:AzureResponsesInterface",
    extra="openai",
    sdk_module="openai",
    sdk_package="openai",
    env_keys=("AZURE_OPENAI_API_KEY",),
    auth="a Microsoft Entra ID token (`azure_ad_token_provider=`)",
    secret_options=("azure_ad_token",),
    default_base_url=None,
    wire="azure-responses",
    demo_model="gpt-5-mini",
    title="Azure OpenAI Responses",
    price_provider="azure",
    profile_providers=("azure", "openai"),
    # Azure documents no /responses/input_tokens route: counts are estimated.
    traits=replace(_OPENAI_RESPONSES.traits, count_tokens=None, hosted=_AZURE_RESPONSES_HOSTED),
    # The Responses API needs 2025-03-01-preview or later:
    # https://learn.microsoft.com/azure/ai-services/openai/how-to/responses
    defaults=MappingProxyType({"api_version": "2025-04-01-preview"}),
)
_ANTHROPIC_BEDROCK = ProviderSpec(
    name="anthropic-bedrock",
    region_option="region",
    cls="zerda.llm.wires.anthropic.cloud:AnthropicBedrockInterface",
    extra="anthropic-bedrock",
    sdk_module="anthropic",
    sdk_package="anthropic",
    env_keys=(),
    auth="the AWS credential chain (or `aws_access_key` / `aws_secret_key`), and a region",
    secret_options=("aws_secret_key", "aws_session_token"),
    default_base_url=None,  # https://bedrock-runtime.{region}.amazonaws.com
    wire="anthropic-bedrock",
    demo_model="anthropic.claude-sonnet-4-6",
    title="Claude on AWS Bedrock (anthropic SDK)",
    price_provider="aws",
    profile_providers=("amazon-bedrock",),
    # Message Batches are the Anthropic API's own; Bedrock batches through S3 jobs instead.
    # The SDK's AnthropicBedrock refuses count_tokens ("Token counting is not supported in
    # Bedrock yet"): counts are estimated (the bedrock row counts through CountTokens).
    # Bedrock refuses adaptive thinking with a forced tool_choice too (the bedrock row's
    # forced_tool_with_adaptive: https://github.com/can1357/oh-my-pi/issues/341).
    # InvokeModel runs none of Anthropic's server tools ("the web search tool is not
    # available on Bedrock", https://github.com/anthropics/anthropic-sdk-python/issues/948:
    # "Input tag 'web_search_20250305' ... does not match any of the expected tags"; the MCP
    # connector neither): hosted tools only as native ones.
    traits=replace(
        _ANTHROPIC.traits,
        batch=None,
        count_tokens=None,
        forced_tool_with_adaptive="",
        hosted=frozen_hosted({}),
    ),
)
_ANTHROPIC_VERTEX = ProviderSpec(
    name="anthropic-vertex",
    region_option="region",
    cls="zerda.llm.wires.anthropic.cloud:AnthropicVertexInterface",
    extra="anthropic-vertex",
    sdk_module="anthropic",
    sdk_package="anthropic",
    env_keys=(),
    auth="Google application default credentials (or `access_token=`), a region and a project",
    secret_options=("access_token", "credentials"),
    default_base_url=None,  # https://{region}-aiplatform.googleapis.com/v1
    wire="anthropic-vertex",
    demo_model="claude-sonnet-4-6",
    title="Claude on Vertex AI (anthropic SDK)",
    price_provider="google",
    profile_providers=("google-vertex-anthropic", "anthropic"),
    # Vertex AI batches through its own batch prediction jobs, not Message Batches.
    traits=replace(_ANTHROPIC.traits, batch=None, hosted=_ANTHROPIC_VERTEX_HOSTED),
)
_VERTEX = ProviderSpec(
    name="vertex",
    region_option="location",
    cls="zerda.llm.wires.gemini.interface:GeminiInterface",
    extra="gemini",
    sdk_module="google.genai",
    sdk_package="google-genai",
    env_keys=(),
    auth="Google application default credentials (or `credentials=`), a project and a location",
    secret_options=("credentials",),
    default_base_url=None,  # https://{location}-aiplatform.googleapis.com
    wire="vertex",
    demo_model="gemini-2.5-flash",
    title="Gemini on Vertex AI",
    price_provider="google",
    profile_providers=("google-vertex", "google"),
    # Vertex AI batches are batch prediction jobs over Cloud Storage / BigQuery, not the
    # Gemini API's inline or file batchGenerateContent that llm.batch maps.
    traits=replace(_GEMINI.traits, batch=None, hosted=_VERTEX_HOSTED),
    defaults=MappingProxyType({"vertexai": True}),
)


# The order is the docs tables' and the tests' order: each wire's own row, the same APIs
# through cloud platforms, then the OpenAI-compatible services.
COMPATIBLE_ROWS: tuple[ProviderSpec, ...] = (
    _OPENROUTER,
    _DEEPSEEK,
    _XAI,
    _TOGETHER,
    _FIREWORKS,
    _CEREBRAS,
    _VLLM,
    _LMSTUDIO,
)
ROWS: tuple[ProviderSpec, ...] = (
    _OPENAI,
    _OPENAI_RESPONSES,
    _GROQ,
    _MISTRAL,
    _OLLAMA,
    _ANTHROPIC,
    _BEDROCK,
    _GEMINI,
    _AZURE,
    _AZURE_RESPONSES,
    _ANTHROPIC_BEDROCK,
    _ANTHROPIC_VERTEX,
    _VERTEX,
    *COMPATIBLE_ROWS,
)
