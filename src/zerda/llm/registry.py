"""The provider registry: one row per provider, its traits as data.

Everything that needs to know which providers exist reads this module: ``create_interface``,
the shared base's checks (tool names, ids, tool_choice, parallel_tool_calls), the CLI,
MockLLMServer, the docs tables and the tests' parametrisation. An OpenAI-compatible service
is a row here (``cls`` an existing interface, its own ``name``, ``default_base_url``,
``env_keys`` and traits), not a module. Importing this module imports no SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

PART_TYPES = ("text", "image", "document", "audio", "file", "cache_point")
TOOL_CHOICES = frozenset({"auto", "none", "required", "name"})

# The common rule of OpenAI, Groq, Mistral, Anthropic and Bedrock function names
# (https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools,
# https://docs.anthropic.com/en/docs/build-with-claude/tool-use).
NAME_64 = r"[a-zA-Z0-9_-]{1,64}"


def _frozen(mapping: Mapping[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Media:
    """What one place of a request (user messages, or tool results) accepts.

    ``parts``: the part types (DESIGN §4a) besides text; ``media_types``: per part type, the
    media types accepted (``"*"`` any); ``urls``: part types that may be given as a URL the
    provider fetches; ``uris``: URI schemes of provider-hosted files (``"gs"``, ``"s3"``,
    ``"file-id"`` for OpenAI file ids, ``"files-api"`` for Gemini file URIs).
    """

    parts: frozenset[str] = frozenset()
    media_types: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _frozen({}))
    urls: frozenset[str] = frozenset()
    uris: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Traits:
    """The rules a provider imposes on requests and what it can do, checked in one place.

    - ``tool_name``: regular expression a tool name must match in full.
    - ``tool_id``: the id rule applied to history tool calls (see :mod:`zerda.llm._ids`).
    - ``user`` / ``tool_results``: the content parts each accepts (:class:`Media`).
    - ``tool_media``: whether tool results carry media natively; where they cannot, media
      from tools travel in one user message after that turn's results.
    - ``reasoning``: the name of the reasoning mapping (None: no reasoning control).
    - ``structured_output``: the structured-output modes, best first (``native``, ``tool``).
    - ``json_mode``: native output can be "any JSON" (``response_format="json"``); else
      "json" travels in tool mode.
    - ``native_output_with_tools``: regular expression (searched in the model name) of the
      models whose native structured output combines with tools; for the others a call
      with tools carries the answer in a tool.
    - ``strict_output_models``: regular expression of the models whose native schema is
      sent strict (made strict by :mod:`zerda.llm._strict_schema`); others get it as given.
    - ``no_native_output``: regular expression of the models known to lack native
      structured output: their answers travel in a tool.
    - ``cache_points``: explicit prompt-cache points are honoured (else caching is automatic
      or absent, and cache points are ignored).
    - ``tool_choice``: the tool_choice values it enforces (``name``: a named tool).
    - ``parallel_tool_calls``: ``parallel_tool_calls=False`` can be sent.
    - ``batch``: the batch API ``llm.batch`` maps (``openai``: files + /v1/batches, also
      Groq's; ``anthropic``: Message Batches; ``mistral``: a file + /v1/batch/jobs;
      ``gemini``: batchGenerateContent, inline or from a file; ``bedrock``: a model
      invocation job on S3); None: ``batch`` is refused before anything is sent.
    """

    tool_name: str = NAME_64
    tool_name_rule: str = "1-64 characters: letters, digits, '_' and '-'"
    tool_id: str = "keep"
    user: Media = field(default_factory=Media)
    tool_results: Media = field(default_factory=Media)
    tool_media: bool = False
    reasoning: str | None = None
    structured_output: tuple[str, ...] = ("tool",)
    json_mode: bool = True
    native_output_with_tools: str = ""
    strict_output_models: str = ""
    no_native_output: str = ""
    cache_points: bool = False
    tool_choice: frozenset[str] = TOOL_CHOICES
    parallel_tool_calls: bool = False
    batch: str | None = None


@dataclass(frozen=True)
class ProviderSpec:
    """One provider: how to build it, where it lives, and its traits."""

    name: str
    cls: str  # "module:Class"
    extra: str  # pip install "zerda-llm[extra]"
    sdk_module: str  # imported at construction, so a missing SDK fails early
    sdk_package: str
    env_keys: tuple[str, ...]  # where the API key comes from, in order; () for none
    default_base_url: str | None
    wire: str  # the wire protocol MockLLMServer speaks for it
    demo_model: str
    title: str  # for docs tables
    aliases: tuple[str, ...] = ()
    auth: str = ""  # how it authenticates when env_keys is empty, for docs
    traits: Traits = field(default_factory=Traits)
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __reduce__(self) -> str | tuple[Any, ...]:
        # A registry row travels as its name (its mappings are read-only proxies, which
        # pickle cannot store); a row from outside the registry travels field by field.
        if REGISTRY.get(self.name) is self:
            return (get, (self.name,))
        return (_spec_from_fields, (_thawed_fields(self),))

    def interface_class(self) -> type[BaseLLMInterface]:
        module, _, cls = self.cls.partition(":")
        result: type[BaseLLMInterface] = getattr(importlib.import_module(module), cls)
        return result


def _thaw(value: Any) -> Any:
    """``value`` with its read-only mappings as dicts, for pickling."""
    if isinstance(value, MappingProxyType):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (Media, Traits)):
        return (type(value), {f.name: _thaw(getattr(value, f.name)) for f in fields(value)})
    return value


def _thawed_fields(spec: ProviderSpec) -> dict[str, Any]:
    return {f.name: _thaw(getattr(spec, f.name)) for f in fields(spec)}


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, tuple) and len(value) == 2 and value[0] in (Media, Traits):
        return value[0](**{k: _freeze(v) for k, v in value[1].items()})
    return value


def _spec_from_fields(values: dict[str, Any]) -> ProviderSpec:
    return ProviderSpec(**{k: _freeze(v) for k, v in values.items()})


_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_OPENAI_AUDIO = ("audio/wav", "audio/mpeg")

_OPENAI = ProviderSpec(
    name="openai",
    cls="zerda.llm.providers.openai:OpenAIInterface",
    extra="openai",
    sdk_module="openai",
    sdk_package="openai",
    env_keys=("OPENAI_API_KEY",),
    default_base_url="https://api.openai.com/v1",
    wire="openai",
    demo_model="gpt-4o-mini",
    title="OpenAI Chat Completions",
    traits=Traits(
        # https://platform.openai.com/docs/guides/images-vision, /docs/guides/pdf-files,
        # /docs/guides/audio: image_url (data URI or URL), file (file_data or file_id),
        # input_audio (wav, mp3). Tool messages take text only.
        user=Media(
            parts=frozenset({"image", "document", "audio", "file"}),
            media_types=_frozen(
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
    ),
)

_GROQ = ProviderSpec(
    name="groq",
    cls="zerda.llm.providers.groq:GroqInterface",
    extra="groq",
    sdk_module="groq",
    sdk_package="groq",
    env_keys=("GROQ_API_KEY",),
    default_base_url="https://api.groq.com",
    wire="groq",
    demo_model="llama-3.3-70b-versatile",
    title="Groq",
    traits=Traits(
        # https://console.groq.com/docs/vision: image_url only, data URI or URL.
        user=Media(
            parts=frozenset({"image"}),
            media_types=_frozen({"image": _IMAGES}),
            urls=frozenset({"image"}),
        ),
        reasoning="groq",
        structured_output=("native", "tool"),
        # https://console.groq.com/docs/structured-outputs: strict mode (constrained
        # decoding) only on the gpt-oss models, best-effort elsewhere; structured outputs do
        # not combine with tool use.
        strict_output_models="gpt-oss",
        parallel_tool_calls=True,
        # https://console.groq.com/docs/batch: OpenAI's file + /v1/batches shape.
        batch="openai",
    ),
)

_MISTRAL = ProviderSpec(
    name="mistral",
    cls="zerda.llm.providers.mistral:MistralInterface",
    extra="mistral",
    sdk_module="mistralai.client",
    sdk_package="mistralai",
    env_keys=("MISTRAL_API_KEY",),
    default_base_url="https://api.mistral.ai",
    wire="mistral",
    demo_model="mistral-small-latest",
    title="Mistral",
    traits=Traits(
        tool_id="mistral",
        # https://docs.mistral.ai/capabilities/vision/, /capabilities/document_ai/,
        # /capabilities/audio/: image_url, document_url, input_audio.
        user=Media(
            parts=frozenset({"image", "document", "audio"}),
            media_types=_frozen(
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
    cls="zerda.llm.providers.ollama:OllamaInterface",
    extra="ollama",
    sdk_module="ollama",
    sdk_package="ollama",
    env_keys=(),
    auth="none (a local server)",
    default_base_url="http://127.0.0.1:11434",
    wire="ollama",
    demo_model="llama3.2",
    title="Ollama",
    traits=Traits(
        tool_id="optional",
        # https://github.com/ollama/ollama/blob/main/docs/api.md#chat: message.images,
        # base64 only (the server fetches no URL).
        user=Media(parts=frozenset({"image"}), media_types=_frozen({"image": _IMAGES})),
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

# Claude 3.x and Claude 4.0 (claude-sonnet-4-20250514, claude-opus-4-20250514, *-4-0) have no
# structured outputs: https://docs.claude.com/en/docs/build-with-claude/structured-outputs
_CLAUDE_BEFORE_STRUCTURED = r"claude-3|claude-(opus|sonnet)-4-(0|2025)"

_ANTHROPIC_MEDIA = Media(
    parts=frozenset({"image", "document"}),
    media_types=_frozen({"image": _IMAGES, "document": ("application/pdf", "text/plain")}),
    urls=frozenset({"image", "document"}),
)

_ANTHROPIC = ProviderSpec(
    name="anthropic",
    cls="zerda.llm.providers.anthropic:AnthropicInterface",
    extra="anthropic",
    sdk_module="anthropic",
    sdk_package="anthropic",
    env_keys=("ANTHROPIC_API_KEY",),
    default_base_url="https://api.anthropic.com",
    wire="anthropic",
    demo_model="claude-sonnet-4-6",
    title="Anthropic Messages",
    traits=Traits(
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
        native_output_with_tools=".*",
        strict_output_models=".*",
        # Structured outputs came with Claude Opus 4.1 and Sonnet 4.5; older models answer
        # in a tool.
        no_native_output=_CLAUDE_BEFORE_STRUCTURED,
        cache_points=True,
        parallel_tool_calls=True,
        # https://docs.anthropic.com/en/docs/build-with-claude/batch-processing
        batch="anthropic",
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
    media_types=_frozen({"image": _IMAGES, "document": _BEDROCK_DOCUMENTS}),
    uris=frozenset({"s3"}),
)
# Messages also take AudioBlock (format mp3, wav, flac, ogg, aac, m4a, webm... raw bytes or
# s3Location): https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_AudioBlock.html.
# ToolResultContentBlock has no audio member, so tool results stay without it.
_BEDROCK_USER_MEDIA = Media(
    parts=frozenset({"image", "document", "audio", "file"}),
    media_types=_frozen(
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
    aliases=("aws",),
    cls="zerda.llm.providers.aws:AWSInterface",
    extra="bedrock",
    sdk_module="boto3",
    sdk_package="boto3",
    env_keys=(),  # the AWS credential chain signs requests; there is no API key
    auth="the AWS credential chain, and a region",
    default_base_url=None,  # https://bedrock-runtime.{region}.amazonaws.com
    wire="bedrock",
    demo_model="anthropic.claude-3-5-sonnet-20240620-v1:0",
    title="AWS Bedrock Converse",
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
        native_output_with_tools=".*",
        strict_output_models=".*",
        no_native_output=_CLAUDE_BEFORE_STRUCTURED,
        cache_points=True,
        # Converse has no parallel_tool_calls switch: sending False would be ignored.
        parallel_tool_calls=False,
        # https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html:
        # a JSONL file in S3, a model invocation job of the Converse type.
        batch="bedrock",
    ),
)

# User content: inline_data, or file_data for Files API / gs:// URIs and, since January 2026,
# public or signed http(s) URLs the API fetches
# (https://ai.google.dev/gemini-api/docs/file-input-methods).
_GEMINI_MEDIA = Media(
    parts=frozenset({"image", "document", "audio", "file"}),
    media_types=_frozen({"image": ("*",), "document": ("*",), "audio": ("*",), "file": ("*",)}),
    urls=frozenset({"image", "document", "audio"}),
    uris=frozenset({"gs", "files-api"}),
)
# FunctionResponse.parts ("multimodal function responses", Gemini 3) take images and
# documents only: https://ai.google.dev/gemini-api/docs/function-calling#multimodal
# (image/png, image/jpeg, image/webp, application/pdf, text/plain); recorded exchanges show
# inline_data and Files API file_data accepted there, and audio sent as user parts instead.
_GEMINI_TOOL_MEDIA = Media(
    parts=frozenset({"image", "document", "file"}),
    media_types=_frozen(
        {
            "image": ("image/png", "image/jpeg", "image/webp"),
            "document": ("application/pdf", "text/plain"),
        }
    ),
    uris=frozenset({"gs", "files-api"}),
)

_GEMINI = ProviderSpec(
    name="gemini",
    aliases=("google",),
    cls="zerda.llm.providers.gemini:GeminiInterface",
    extra="gemini",
    sdk_module="google.genai",
    sdk_package="google-genai",
    env_keys=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    default_base_url="https://generativelanguage.googleapis.com",
    wire="gemini",
    demo_model="gemini-2.5-flash",
    title="Google Gemini",
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
        # response_json_schema + response_mime_type; Gemini 2.x refuses them beside
        # function declarations, Gemini 3 combines them
        # (https://ai.google.dev/gemini-api/docs/structured-output).
        native_output_with_tools="gemini-3",
        # https://ai.google.dev/gemini-api/docs/batch-mode: inline requests, or a JSONL file.
        batch="gemini",
    ),
)

REGISTRY: Mapping[str, ProviderSpec] = MappingProxyType(
    {p.name: p for p in (_OPENAI, _GROQ, _MISTRAL, _OLLAMA, _ANTHROPIC, _BEDROCK, _GEMINI)}
)
ALIASES: Mapping[str, str] = MappingProxyType(
    {alias: p.name for p in REGISTRY.values() for alias in p.aliases}
)
NAMES: tuple[str, ...] = tuple(REGISTRY)


def canonical_name(provider: str) -> str:
    """The registry name of ``provider`` (aliases resolved, case-insensitive)."""
    if not isinstance(provider, str):
        raise TypeError(f"a provider name must be a string, not {type(provider).__name__}")
    key = provider.lower()
    name = ALIASES.get(key, key)
    if name not in REGISTRY:
        known = ", ".join(sorted([*REGISTRY, *ALIASES]))
        raise ValueError(f"unknown provider {provider!r} (known: {known})")
    return name


def get(provider: str) -> ProviderSpec:
    """The row of ``provider`` (a name or an alias)."""
    return REGISTRY[canonical_name(provider)]


def wires() -> tuple[str, ...]:
    """The distinct wire protocols of the registry's rows, in row order."""
    return tuple(dict.fromkeys(p.wire for p in REGISTRY.values()))


# --- docs tables (tests/test_docs.py checks that docs/providers.md holds these) ---------


def _key_cell(spec: ProviderSpec) -> str:
    if spec.env_keys:
        return " or ".join(f"`{k}`" for k in spec.env_keys)
    return spec.auth or "none"


ID_RULE_DOCS = {
    "keep": "any string; id-less calls get `call_<message>_<n>`",
    "optional": "optional: sent back when the call had one",
    "anthropic": "`[a-zA-Z0-9_-]+`; other characters become `_`",
    "bedrock": "`[a-zA-Z0-9_-]{1,64}`; others mapped, long ones shortened",
    "mistral": "9 characters `[a-zA-Z0-9]`; others mapped",
}


def providers_table() -> str:
    """The Markdown table of every row: name, aliases, class, extra, key variables."""
    lines = [
        "| provider | what | class | extra | API key from |",
        "|---|---|---|---|---|",
    ]
    for spec in REGISTRY.values():
        names = " / ".join(f"`{n}`" for n in (spec.name, *spec.aliases))
        cls = spec.cls.partition(":")[2]
        lines.append(f"| {names} | {spec.title} | `{cls}` | `{spec.extra}` | {_key_cell(spec)} |")
    return "\n".join(lines)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def traits_table() -> str:
    """The Markdown table of the request rules every row enforces before sending."""
    lines = [
        "| provider | tool names | history tool-call ids | tool_choice "
        "| `parallel_tool_calls=False` |",
        "|---|---|---|---|---|",
    ]
    for spec in REGISTRY.values():
        t = spec.traits
        choices = ", ".join(
            f"`{c}`" if c != "name" else "a tool name"
            for c in ("auto", "none", "required", "name")
            if c in t.tool_choice
        )
        lines.append(
            f"| `{spec.name}` | {t.tool_name_rule} | {ID_RULE_DOCS[t.tool_id]} | {choices} "
            f"| {_yes(t.parallel_tool_calls)} |"
        )
    return "\n".join(lines)


MEDIA_PART_TYPES = ("image", "document", "audio", "file")


def _media_cell(media: Media, part: str) -> str:
    if part not in media.parts:
        return "no"
    if part == "file":
        return ", ".join(f"`{u}`" for u in sorted(media.uris))
    return "yes, URL too" if part in media.urls else "yes"


def _tool_cell(traits: Traits, part: str) -> str:
    """A part in tool results: native, moved to the user message after them, or refused."""
    native = _media_cell(traits.tool_results, part)
    if native != "no":
        return native
    return "moved" if part in traits.user.parts else "no"


def media_table() -> str:
    """The Markdown table of the content parts each row accepts, in user messages and in
    tool results ("moved": sent in one user message right after the tool results)."""
    heads = [f"{p}: {where}" for p in MEDIA_PART_TYPES for where in ("user", "tool")]
    lines = [
        "| provider | " + " | ".join(heads) + " | cache_point |",
        "|---|" + "---|" * len(heads) + "---|",
    ]
    for spec in REGISTRY.values():
        t = spec.traits
        cells = [
            cell for p in MEDIA_PART_TYPES for cell in (_media_cell(t.user, p), _tool_cell(t, p))
        ]
        cache = "yes" if t.cache_points else "ignored"
        lines.append(f"| `{spec.name}` | " + " | ".join(cells) + f" | {cache} |")
    return "\n".join(lines)


def media_types_table() -> str:
    """The Markdown table of the media types each row checks, per part type and place."""
    lines = ["| provider | where | media types |", "|---|---|---|"]
    for spec in REGISTRY.values():
        for where, media in (("user", spec.traits.user), ("tool", spec.traits.tool_results)):
            kinds = [
                f"{k}: {', '.join(media.media_types[k])}"
                for k in MEDIA_PART_TYPES
                if k in media.parts and k in media.media_types
            ]
            if kinds:
                lines.append(f"| `{spec.name}` | {where} | {'; '.join(kinds)} |")
    return "\n".join(lines)


# What each ``traits.batch`` value maps (docs/scale.md, "Batch APIs").
BATCH_DOCS = {
    "openai": 'a JSONL file uploaded with `purpose="batch"`, then a `/v1/batches` job on '
    "`/v1/chat/completions` (24 h window); results from its output and error files",
    "anthropic": "one Message Batches request (`/v1/messages/batches`); results from the "
    "SDK's `batches.results`",
    "mistral": 'a JSONL file uploaded with `purpose="batch"`, then a `/v1/batch/jobs` job '
    "on `/v1/chat/completions`; results from its `output_file` and `error_file`",
    "gemini": "one `batchGenerateContent` job (Batch Mode) of inline requests up to 20 MB, "
    "else of a JSONL file uploaded with `files.upload`; results inline or from its results file",
    "bedrock": "a JSONL file written to S3, then a model invocation job of the Converse type; "
    "results from the `.jsonl.out` files in the output S3 location",
}


def batch_table() -> str:
    """The Markdown table of the batch API each row maps (or its refusal)."""
    lines = ["| provider | `llm.batch` sends |", "|---|---|"]
    for spec in REGISTRY.values():
        how = spec.traits.batch
        cell = BATCH_DOCS[how] if how else "no batch API mapped: refused before anything is sent"
        lines.append(f"| `{spec.name}` | {cell} |")
    return "\n".join(lines)


DOCS_TABLES = {
    "providers": providers_table,
    "rules": traits_table,
    "media": media_table,
    "media_types": media_types_table,
    "batch": batch_table,
}
