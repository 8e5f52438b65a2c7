"""The docs' provider tables, generated from the registry's rows.

Each table sits in a page between ``<!-- registry:NAME -->`` and ``<!-- /registry -->``;
tests/test_docs.py checks every page holds :data:`DOCS_TABLES`' tables as they are now, and
``python -m zerda.llm.registry`` rewrites them after a row is added or changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from zerda.llm._traits import HOSTED_TYPES, Media, Traits
from zerda.llm.registry.spec import ProviderSpec


def _rows() -> Iterable[ProviderSpec]:
    """The registry's rows as they are now (a test may add one: read them per call)."""
    from zerda.llm import registry  # the package imports this module first

    return registry.REGISTRY.values()


def _key_cell(spec: ProviderSpec) -> str:
    if spec.env_keys:
        keys = " or ".join(f"`{k}`" for k in spec.env_keys)
        return f"{keys}, or {spec.auth}" if spec.auth else keys
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
    for spec in _rows():
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
    for spec in _rows():
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
    for spec in _rows():
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
    for spec in _rows():
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
    for spec in _rows():
        how = spec.traits.batch
        cell = BATCH_DOCS[how] if how else "no batch API mapped: refused before anything is sent"
        lines.append(f"| `{spec.name}` | {cell} |")
    return "\n".join(lines)


# What each ``traits.count_tokens`` value calls (docs/cost-and-limits.md, "Counting tokens").
COUNT_DOCS = {
    "anthropic": "`POST /v1/messages/count_tokens` (`client.messages.count_tokens`); on Vertex "
    "AI the SDK sends it to `count-tokens:rawPredict`",
    "gemini": "`countTokens`: on the fast path the whole request (`generateContentRequest` on "
    "the Gemini API), else `client.models.count_tokens`, which on the Gemini API counts no "
    "system prompt or tools (then an estimate)",
    "bedrock": "`CountTokens` with the Converse input (`client.count_tokens`); botocore "
    "releases without it estimate",
    "openai-responses": "`POST /v1/responses/input_tokens` "
    "(`client.responses.input_tokens.count`); openai releases without it estimate",
}


def counting_table() -> str:
    """The Markdown table of what ``llm.count_tokens`` calls on each row (or its estimate)."""
    lines = ["| provider | `count_tokens` | how |", "|---|---|---|"]
    for spec in _rows():
        how = spec.traits.count_tokens
        if how:
            lines.append(f"| `{spec.name}` | exact | {COUNT_DOCS[how]} |")
        else:
            lines.append(f"| `{spec.name}` | estimate | Zerda's estimate, `exact: False` |")
    return "\n".join(lines)


def prices_table() -> str:
    """The Markdown table of where each row's prices and model limits are looked up
    (docs/cost-and-limits.md): ``price_provider`` and ``profile_providers``."""
    lines = [
        "| provider | prices (genai-prices provider) | limits (models.dev providers) |",
        "|---|---|---|",
    ]
    for spec in _rows():
        price = f"`{spec.price_provider}`" if spec.price_provider else "none: `cost` is None"
        limits = ", ".join(f"`{p}`" for p in spec.profile_providers) or "none: not checked"
        lines.append(f"| `{spec.name}` | {price} | {limits} |")
    return "\n".join(lines)


def portability_table() -> str:
    """The matrix of docs/portability.md: every row's outputs continued on every row
    (tests/llm/test_any_history.py runs each cell)."""
    names = [spec.name for spec in _rows()]
    cells = " | ".join("✓" for _ in names)
    lines = [
        "| from ↓, continued on → | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|" + "---|" * len(names),
        *(f"| `{n}` | {cells} |" for n in names),
        "| hand-written: foreign ids, id-less calls, refused names, every provider's "
        f"`provider_data` | {cells} |",
    ]
    return "\n".join(lines)


# How each wire asks for native structured output, and what its strict schema is.
STRUCTURED_DOCS = {
    "openai": (
        '`response_format: {"type": "json_schema", ...}`',
        "made strict, `strict: true`",
    ),
    "openai-responses": (
        '`text.format: {"type": "json_schema", "name", "schema", "strict": true}`',
        "made strict",
    ),
    "groq": ("`response_format` as OpenAI's", "made strict"),
    "mistral": ("`response_format` as OpenAI's", "made strict, `strict: true`"),
    "ollama": ("`format` (a schema)", "made strict"),
    "anthropic": (
        "`output_config.format`",
        "closed objects (strict rules, no numeric or length bounds)",
    ),
    "bedrock": ("`outputConfig.textFormat` (the schema as JSON text)", "as Anthropic's"),
    "gemini": ("`response_json_schema` + `response_mime_type: application/json`", "made strict"),
}
STRUCTURED_DOCS["azure"] = STRUCTURED_DOCS["openai"]
STRUCTURED_DOCS["azure-responses"] = STRUCTURED_DOCS["openai-responses"]
STRUCTURED_DOCS["anthropic-bedrock"] = STRUCTURED_DOCS["anthropic"]
STRUCTURED_DOCS["anthropic-vertex"] = STRUCTURED_DOCS["anthropic"]
STRUCTURED_DOCS["vertex"] = STRUCTURED_DOCS["gemini"]


def _models(pattern: str, every: str, none: str, some: str) -> str:
    """A model-pattern trait in words: every model, none, or those matching it."""
    if pattern == ".*":
        return every
    if not pattern:
        return none
    return some.format(f"`{pattern}`".replace("|", "\\|"))


def _structured_row(spec: ProviderSpec) -> str:
    t = spec.traits
    if "native" not in t.structured_output:
        return f"| `{spec.name}` | none: always tool mode | — | tool mode | — | — |"
    field, strict = STRUCTURED_DOCS[spec.wire]
    schema = _models(
        t.strict_output_models,
        strict,
        "as given",
        f"{strict} on models matching {{}}, as given elsewhere",
    )
    tools = _models(t.native_output_with_tools, "yes", "no: tool mode", "models matching {}")
    lacking = _models(t.no_native_output, "every model", "—", "models matching {}")
    json_cell = "native" if t.json_mode else "tool mode"
    return f"| `{spec.name}` | {field} | {schema} | {json_cell} | {tools} | {lacking} |"


def structured_table() -> str:
    """docs/structured-output.md's table: each row's native field, the schema it sends,
    whether native output combines with tools, and the models that answer in a tool."""
    lines = [
        '| provider | native field | schema sent | `"json"` | native beside `tools` '
        "| tool mode always for |",
        "|---|---|---|---|---|---|",
        *(_structured_row(spec) for spec in _rows()),
    ]
    return "\n".join(lines)


# OpenAIInterface's own field for max_tokens (a row's traits.max_tokens_field overrides it).
_OPENAI_MAX_TOKENS = "max_completion_tokens"


def _compatible_notes(traits: Traits, local: bool) -> str:
    notes = ["a local server"] if local else []
    if not traits.parallel_tool_calls:
        notes.append("no `parallel_tool_calls` switch")
    if traits.tool_choice_required:
        notes.append(f'`tool_choice="required"` is sent as `"{traits.tool_choice_required}"`')
    if "name" not in traits.tool_choice:
        takes = ", ".join(f"`{c}`" for c in ("auto", "none", "required") if c in traits.tool_choice)
        notes.append(f"`tool_choice` a tool name is refused (it takes {takes})")
    if "native" not in traits.structured_output:
        notes.append("structured output through a tool only")
    elif not traits.json_mode:
        notes.append('no `json_object` (`"json"` through a tool)')
    if "image" in traits.user.parts:
        notes.append("images (URL too)" if "image" in traits.user.urls else "images (base64)")
    return "; ".join(notes)


def compatible_table() -> str:
    """docs/providers/openai-compatible.md's table: every row built by ``compatible_row``."""
    from zerda.llm import registry

    lines = [
        "| provider | base URL | key | `max_tokens` sent as | notes |",
        "|---|---|---|---|---|",
    ]
    for spec in _rows():
        if not registry.is_compatible(spec):
            continue
        key = " or ".join(f"`{k}`" for k in spec.env_keys) or "none"
        field = spec.traits.max_tokens_field or _OPENAI_MAX_TOKENS
        notes = _compatible_notes(spec.traits, not spec.env_keys)
        lines.append(f"| `{spec.name}` | `{spec.default_base_url}` | {key} | `{field}` | {notes} |")
    return "\n".join(lines)


def _hosted_cell(traits: Traits, kind: str) -> str:
    hosted = traits.hosted.get(kind)
    if hosted is None:
        return "—"
    cell = f"[`{hosted.native}`]({hosted.doc})" if hosted.doc else f"`{hosted.native}`"
    for pattern, native in hosted.versions:
        cell += " ({} for models matching `{}`)".format(f"`{native}`", pattern.replace("|", "\\|"))
    if hosted.models:  # a "|" in a pattern would end the Markdown cell
        cell += " (models matching `{}`)".format(hosted.models.replace("|", "\\|"))
    return cell


def hosted_table() -> str:
    """The Markdown table of docs/hosted-tools.md: which hosted tools each row runs, as
    what native tool (DESIGN §18); "—": refused before sending, naming the rows that run it."""
    lines = [
        "| provider | " + " | ".join(f"`{k}`" for k in HOSTED_TYPES) + " |",
        "|---|" + "---|" * len(HOSTED_TYPES),
    ]
    for spec in _rows():
        cells = " | ".join(_hosted_cell(spec.traits, k) for k in HOSTED_TYPES)
        lines.append(f"| `{spec.name}` | {cells} |")
    return "\n".join(lines)


def hosted_options_table() -> str:
    """The options each row honours per hosted tool (any other is refused before sending)."""
    lines = ["| provider | hosted tool | options honoured |", "|---|---|---|"]
    for spec in _rows():
        if not spec.traits.hosted:
            lines.append(f"| `{spec.name}` | none | — |")
        for kind in HOSTED_TYPES:
            hosted = spec.traits.hosted.get(kind)
            if hosted is not None:
                honoured = ", ".join(f"`{o}`" for o in sorted(hosted.options)) or "none"
                lines.append(f"| `{spec.name}` | `{kind}` | {honoured} |")
    return "\n".join(lines)


DOCS_TABLES = {
    "providers": providers_table,
    "rules": traits_table,
    "media": media_table,
    "media_types": media_types_table,
    "batch": batch_table,
    "counting": counting_table,
    "prices": prices_table,
    "portability": portability_table,
    "structured": structured_table,
    "compatible": compatible_table,
    "hosted": hosted_table,
    "hosted_options": hosted_options_table,
}

# A block's table, possibly empty (a new block is written as its two markers): it never
# reaches past its own closing marker into the next block.
GENERATED = re.compile(r"(<!-- registry:(\w+)[^>]*-->\n)(.*?)\n?(<!-- /registry -->)", re.S)


def pages(root: Path) -> list[Path]:
    """The pages that may hold generated tables: README.md and docs/**/*.md."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def regenerate(text: str) -> str:
    """``text`` with every generated table as the registry makes it now."""
    return GENERATED.sub(lambda m: m[1] + DOCS_TABLES[m[2]]() + "\n" + m[4], text)


def write(root: Path) -> list[Path]:
    """Rewrites the generated tables of ``root``'s pages; the pages that changed."""
    changed = []
    for page in pages(root):
        if not page.exists():
            continue
        text = page.read_text()
        new = regenerate(text)
        if new != text:
            page.write_text(new)
            changed.append(page)
    return changed
