"""The vocabulary of provider traits: what a request place accepts (:class:`Media`), the rules
a provider imposes (:class:`Traits`), the part types and tool_choice values.

Part of the provider-neutral core (docs/architecture.md): the history format
(:mod:`zerda.llm.messages`, :mod:`zerda.llm.parts`) and the registry both read it, and it
imports nothing of Zerda's but :mod:`zerda.llm._record`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Protocol

from zerda.llm._record import record, replace

PART_TYPES = ("text", "image", "document", "audio", "file", "cache_point")
TOOL_CHOICES = frozenset({"auto", "none", "required", "name"})

# The common rule of OpenAI, Groq, Mistral, Anthropic and Bedrock function names
# (https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools,
# https://docs.anthropic.com/en/docs/build-with-claude/tool-use).
NAME_64 = r"[a-zA-Z0-9_-]{1,64}"


def frozen_map(mapping: Mapping[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(dict(mapping))


# The hosted tools' unified types (DESIGN §18), in the order the docs list them; "native"
# (a provider-shaped tool passed through unchanged) is accepted on every row besides them.
HOSTED_TYPES = ("web_search", "web_fetch", "code_execution", "file_search", "mcp")


@record
class Hosted:
    """One hosted tool a row runs (DESIGN §18): ``native`` is the native type (and version)
    its wire sends, e.g. ``web_search_20250305``; ``options`` the unified options the row
    honours (any other is refused before sending); ``models`` a regular expression searched
    in the model name, of the models that run it ("" for every model of the row); ``doc``
    the provider's reference; ``versions`` the newer native versions some models take."""

    native: str
    options: frozenset[str] = frozenset()
    models: str = ""
    doc: str = ""
    # Newer native versions some models take: (a regular expression searched in the model
    # name, the native version), the first match wins; other models get ``native``.
    versions: tuple[tuple[str, str], ...] = ()

    def native_for(self, model: str | None) -> str:
        """The native version this model takes."""
        for pattern, native in self.versions:
            if re.search(pattern, model or ""):
                return native
        return self.native


def hosted_for(hosted: Mapping[str, Hosted], model: str | None) -> Mapping[str, Hosted]:
    """A row's hosted tools with the native version ``model`` takes (``Hosted.versions``)."""
    if not any(h.versions for h in hosted.values()):
        return hosted
    return {k: replace(h, native=h.native_for(model), versions=()) for k, h in hosted.items()}


def frozen_hosted(mapping: Mapping[str, Hosted]) -> Mapping[str, Hosted]:
    unknown = set(mapping) - set(HOSTED_TYPES)
    if unknown:
        raise ValueError(f"unknown hosted tool type(s) {sorted(unknown)}; known: {HOSTED_TYPES}")
    return MappingProxyType(dict(mapping))


@record
class Media:
    """What one place of a request (user messages, or tool results) accepts.

    ``parts``: the part types (DESIGN §4a) besides text; ``media_types``: per part type, the
    media types accepted (``"*"`` any); ``urls``: part types that may be given as a URL the
    provider fetches; ``uris``: URI schemes of provider-hosted files (``"gs"``, ``"s3"``,
    ``"file-id"`` for OpenAI file ids, ``"files-api"`` for Gemini file URIs).
    """

    parts: frozenset[str] = frozenset()
    media_types: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: frozen_map({}))
    urls: frozenset[str] = frozenset()
    uris: frozenset[str] = frozenset()


@record
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
    - ``stop_sequences``: ``stop=`` can be sent (the Responses API has no such field).
    - ``max_tokens_field``: the request field ``max_tokens`` is sent as, where a service
      differs from its class (None: the class's own).
    - ``tool_choice_required``: what ``tool_choice="required"`` is sent as, where a service
      differs from its class (None: the class's own).
    - ``batch``: the batch API ``llm.batch`` maps (``openai``: files + /v1/batches, also
      Groq's; ``anthropic``: Message Batches; ``mistral``: a file + /v1/batch/jobs;
      ``gemini``: batchGenerateContent, inline or from a file; ``bedrock``: a model
      invocation job on S3); None: ``batch`` is refused before anything is sent.
    - ``forced_tool_with_adaptive``: the models (a regular expression) whose adaptive
      thinking takes a forced tool_choice; "" for none. Anthropic's API answers it for
      claude-opus-4-6 (recorded exchanges with ``tool_choice`` ``any`` and adaptive thinking
      got 200; pydantic-ai's test_anthropic_opus_46_adaptive_thinking_accepts_tool_output)
      and refuses it for the others, as for budget thinking (400 "Thinking may not be enabled
      when tool_choice forces tool use", https://github.com/Alcova-AI/adk-anthropic-go/pull/23);
      Bedrock refuses it for every Claude 4.6 (https://github.com/can1357/oh-my-pi/issues/341).
      Budget thinking with a forced tool_choice is refused everywhere (the family's
      ``forced_tool_choice``).
    - ``reasoning_echo``: the assistant-message field in which the API needs a turn's
      reasoning text back (DeepSeek's thinking mode with tools: ``reasoning_content``); the
      text is kept in ``provider_data[<row>]`` under that name and sent back to that row
      only. None: reasoning text is never sent back.
    - ``hosted``: the hosted tools the row runs, by unified type (:class:`Hosted`: native
      shape and version, options honoured, models, reference); empty: none (DESIGN §18).
    - ``count_tokens``: the counting endpoint ``llm.count_tokens`` calls, exact
      (``anthropic``: Messages ``count_tokens``; ``gemini``: ``countTokens``; ``bedrock``:
      ``CountTokens``; ``openai-responses``: ``/responses/input_tokens``); None: an
      estimate, marked ``exact: False``.
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
    stop_sequences: bool = True
    max_tokens_field: str | None = None
    tool_choice_required: str | None = None
    batch: str | None = None
    count_tokens: str | None = None
    reasoning_echo: str | None = None
    forced_tool_with_adaptive: str = ""
    hosted: Mapping[str, Hosted] = field(default_factory=lambda: frozen_hosted({}))


class Row(Protocol):
    """What the core reads of a provider's row (the registry's ``ProviderSpec`` is one), so
    the core checks a request against a row without importing the registry."""

    @property
    def name(self) -> str: ...

    @property
    def traits(self) -> Traits: ...

    def rows_with(self, trait: str) -> tuple[str, ...]:
        """The names of the registry's rows whose ``trait`` is set, for refusals that say
        where a feature is."""
        ...

    def rows_hosting(self, kind: str) -> tuple[str, ...]:
        """The names of the registry's rows that run the hosted tool ``kind``."""
        ...
