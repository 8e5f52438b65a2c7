"""Model families as data: what a family of models can do, read by every row that hosts it.

A registry row says what a *service* does (its wire, its fields, its rules); a profile says
what a *model family* does wherever it is served: which of its generations have native
structured output, combine it with tools or take a strict schema, carry media in tool
results, and how each generation takes reasoning. A new Claude or Gemini generation is an
edit here, and every row hosting the family (anthropic, anthropic-bedrock, anthropic-vertex
and bedrock for Claude; gemini and vertex for Gemini) reads it.

Every pattern is a regular expression searched in the model name (reasoning patterns in the
lower-cased name), as the rows' traits always were. Imports nothing of Zerda's but the
core's vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any, TypedDict

from zerda.llm._record import record, replace

EFFORTS = ("minimal", "low", "medium", "high")
REFUSE = "refuse"  # Family.off: the family cannot turn reasoning off
ALL = {e: e for e in EFFORTS}


@record
class Family:
    """How one model family of one provider takes reasoning.

    ``efforts`` maps each unified effort the family has to its native value (``{}``: the
    family takes no effort level); ``budgets`` maps efforts to a thinking budget instead,
    for families that take tokens; ``off`` is the native value for ``reasoning=False``
    (None: nothing to send, the model does not reason unless asked; ``REFUSE``: it cannot be
    turned off). ``reasons=False`` marks a family known not to reason, where asking would
    get a 400. ``forced_tool_choice=False``: the provider refuses this family's budget
    thinking with a forced tool_choice, and its adaptive thinking too but for the models the
    row's ``forced_tool_with_adaptive`` pattern names (Anthropic's API: claude-opus-4-6)."""

    name: str
    pattern: str  # searched in the lower-cased model id; "" matches any model
    efforts: Mapping[str, Any] = field(default_factory=dict)
    budgets: Mapping[str, int] = field(default_factory=dict)
    off: Any = None
    reasons: bool = True
    takes_budget: bool = False
    forced_tool_choice: bool = True
    default_effort: str | None = None  # the level used when reasoning is on without one
    style: str = ""  # which native shape, where a provider has several (see its _map_reasoning)
    note: str = ""

    def matches(self, model: str) -> bool:
        return not self.pattern or re.search(self.pattern, model.lower()) is not None


@record
class Profile:
    """One model family. ``pattern`` names its models; each facet is a pattern of the
    family's models that have (or lack) what it names, "" for none of them.

    - ``no_native_output``: generations without native structured output (answers travel
      in a tool).
    - ``native_output_with_tools``: generations whose native output combines with tools.
    - ``strict_output``: generations whose native schema is sent strict.
    - ``no_tool_media``: generations whose tool results carry no media (media from tools
      travel in a user message after the results).
    - ``reasoning_items``: generations that return reasoning items, the only ones that
      accept ``include=["reasoning.encrypted_content"]`` (OpenAI's Responses API).
    - ``reasoning``: how each generation takes reasoning, first match wins (a hosting row
      may add its own spelling, see :data:`REASONING`).
    - ``hosted_tools``: the provider-run tools the family offers (filled by the hosted
      tools work; empty for now).
    """

    name: str
    pattern: str
    no_native_output: str = ""
    native_output_with_tools: str = ""
    strict_output: str = ""
    no_tool_media: str = ""
    reasoning_items: str = ""
    reasoning: tuple[Family, ...] = ()
    hosted_tools: tuple[str, ...] = ()

    def has(self, facet: str, model: str) -> bool:
        """Whether ``model`` is one of this family's models that ``facet`` names."""
        pattern: str = getattr(self, facet)
        return bool(pattern) and re.search(pattern, model) is not None


# --- the families -------------------------------------------------------------------------

_ANTHROPIC_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_CLAUDE_ADAPTIVE = r"claude-(opus|sonnet)-(4-[6-9]|[5-9])"
_CLAUDE_NO_BUDGET = r"claude-(opus-4-[7-9]|opus-[5-9]|sonnet-[5-9])"
_CLAUDE_NO_REASONING = r"claude-(3-5|3-opus|3-sonnet|3-haiku|2|instant|v2)"
_GEMINI_FLASH_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
_GEMINI_PRO_BUDGETS = {"minimal": 128, "low": 1024, "medium": 8192, "high": 32768}
_THREE = {"low": "low", "medium": "medium", "high": "high"}
_LEVELS = {e: e.upper() for e in EFFORTS}  # google-genai's ThinkingLevel names
_LEVELS3 = {e: e.upper() for e in _THREE}

CLAUDE = Profile(
    name="Claude",
    pattern=r"claude",
    # Claude 3.x and Claude 4.0 (claude-sonnet-4-20250514, claude-opus-4-20250514, *-4-0)
    # have no structured outputs, which came with Opus 4.1 and Sonnet 4.5:
    # https://docs.claude.com/en/docs/build-with-claude/structured-outputs
    no_native_output=r"claude-3|claude-(opus|sonnet)-4-(0|2025)",
    reasoning=(
        Family("Claude 3.5 and older", _CLAUDE_NO_REASONING, reasons=False),
        Family(
            "Opus 4.7+ / Sonnet 5+ (adaptive)",
            _CLAUDE_NO_BUDGET,
            {**_THREE},
            off={"type": "disabled"},
            style="adaptive",
        ),
        Family(
            "Opus / Sonnet 4.6 (adaptive)",
            _CLAUDE_ADAPTIVE,
            {**_THREE},
            off={"type": "disabled"},
            takes_budget=True,
            forced_tool_choice=False,
            style="adaptive",
        ),
        Family(
            "other Claude (budget)",
            "",
            budgets=_ANTHROPIC_BUDGETS,
            off={"type": "disabled"},
            takes_budget=True,
            forced_tool_choice=False,
            default_effort="medium",
        ),
    ),
)

GEMINI = Profile(
    name="Gemini",
    pattern=r"gemini|gemma",
    # response_json_schema beside function declarations: Gemini 2.x refuses it, Gemini 3
    # combines them (https://ai.google.dev/gemini-api/docs/structured-output).
    native_output_with_tools=r"gemini-3",
    # Media in FunctionResponse.parts are a Gemini 3 feature
    # (https://ai.google.dev/gemini-api/docs/function-calling#multimodal): generations
    # before 3 (the number after "gemini-", leading zeros allowed) take none.
    no_tool_media=r"^(?:models/)?gemini-0*[0-2](?!\d)",
    reasoning=(
        Family("Gemini 2.0 and older, Gemma", r"gemini-(1\.|2\.0)|gemma", reasons=False),
        Family(
            "Gemini 3 Pro",
            r"gemini-3-pro",
            {"low": "LOW", "high": "HIGH"},
            off=REFUSE,
            takes_budget=True,
        ),
        Family("Gemini 3.x Pro", r"gemini-3\.\d+-pro", _LEVELS3, off=REFUSE, takes_budget=True),
        Family(
            "Gemini 3 Flash",
            r"gemini-3",
            _LEVELS,
            off=REFUSE,
            takes_budget=True,
            note="the least is 'minimal'",
        ),
        Family(
            "Gemini 2.5 Pro",
            r"gemini-2\.5-pro",
            budgets=_GEMINI_PRO_BUDGETS,
            off=REFUSE,
            takes_budget=True,
        ),
        Family(
            "Gemini 2.5 Flash",
            r"gemini-2\.5",
            budgets=_GEMINI_FLASH_BUDGETS,
            off=0,
            takes_budget=True,
        ),
    ),
)

OPENAI = Profile(
    name="OpenAI GPT and o-series",
    pattern=r"^(gpt-|chatgpt-|o\d|codex)",
    # Others answer 400 "Encrypted content is not supported with this model":
    # https://platform.openai.com/docs/guides/reasoning
    reasoning_items=r"^(o\d|gpt-5(?![.\d]*-chat)|codex)",
    reasoning=(
        Family(
            "gpt-4 / gpt-3.5 / chat models",
            r"^(gpt-4|gpt-3\.5|chatgpt-|gpt-5[.\d]*-chat)",
            reasons=False,
        ),
        Family("gpt-5.1 and later", r"^gpt-5\.\d", {**_THREE}, off="none"),
        Family("gpt-5", r"^gpt-5", ALL, off=REFUSE, note="the least is 'minimal'"),
        Family("o-series", r"^o\d", {**_THREE}, off=REFUSE),
    ),
)

GPT_OSS = Profile(
    name="gpt-oss",
    pattern=r"gpt-oss",
    # https://console.groq.com/docs/structured-outputs: where a host constrains decoding
    # per model (Groq), gpt-oss is the family it does it for.
    strict_output=r"gpt-oss",
    reasoning=(Family("gpt-oss", r"gpt-oss", {**_THREE}, off=REFUSE),),
)

MISTRAL = Profile(
    name="Mistral",
    pattern=r"^(mistral|magistral|codestral|devstral|ministral|pixtral)",
    reasoning=(
        Family(
            "magistral",
            r"^magistral",
            {e: "reasoning" for e in EFFORTS},
            off=REFUSE,
            style="prompt_mode",
            note="always reasons; every effort selects its reasoning prompt mode",
        ),
        Family(
            "mistral-small / mistral-medium-3-5",
            r"^(mistral-small-(latest|2603)|mistral-medium-3-5)",
            {"high": "high"},
            off="none",
            note="reasoning on ('high') or off",
        ),
    ),
)

PROFILES: Mapping[str, Profile] = MappingProxyType(
    {p.name: p for p in (OPENAI, GPT_OSS, MISTRAL, CLAUDE, GEMINI)}
)


# --- what a row reads of the families it hosts ------------------------------------------


def _union(patterns: list[str]) -> str:
    """One pattern matching what any of ``patterns`` matches ("" when none is given)."""
    parts = [p for p in dict.fromkeys(patterns) if p]
    return ".*" if ".*" in parts else "|".join(parts)


class OutputTraits(TypedDict):
    """The Traits fields a row's structured output takes from the families it hosts."""

    no_native_output: str
    native_output_with_tools: str
    strict_output_models: str


def output_traits(
    *hosted: Profile, native_output_with_tools: str = "", strict_output_models: str = ""
) -> OutputTraits:
    """The structured-output traits of a row hosting ``hosted``: the row's own patterns
    (``".*"``: every model it serves) joined with what each family adds."""
    return {
        "no_native_output": _union([p.no_native_output for p in hosted]),
        "native_output_with_tools": _union(
            [native_output_with_tools, *(p.native_output_with_tools for p in hosted)]
        ),
        "strict_output_models": _union([strict_output_models, *(p.strict_output for p in hosted)]),
    }


# --- reasoning, per reasoning mode ------------------------------------------------------


def _other(**values: Any) -> Family:
    """The last row of a mode: every model no family above names."""
    return Family("other models", "", **values)


def _claude_on_bedrock(family: Family) -> Family:
    """A Claude family as Bedrock names its models (``anthropic.claude-...``)."""
    name = family.name.replace("other Claude", "Claude")
    return replace(
        family,
        name=name if name.startswith("Claude") else f"Claude {name}",
        pattern=r"anthropic\." + (family.pattern or "claude"),
        style=family.style or ("budget" if family.budgets else ""),
    )


def _groq() -> tuple[Family, ...]:
    return (
        *GPT_OSS.reasoning,
        Family(
            "qwen3",
            r"qwen3",
            {e: "default" for e in EFFORTS},
            off="none",
            note="on or off: every effort turns it on",
        ),
        Family(
            "deepseek-r1 / qwq",
            r"deepseek-r1|qwq",
            {},
            off=REFUSE,
            note="always reasons, no levels",
        ),
        Family("llama / gemma / kimi", r"llama|gemma|mixtral|kimi|allam|compound", reasons=False),
        _other(efforts=ALL, off="none"),
    )


def _ollama() -> tuple[Family, ...]:
    return (
        *(replace(f, default_effort="medium") for f in GPT_OSS.reasoning),
        _other(
            efforts={e: True for e in EFFORTS},
            off=False,
            default_effort="medium",
            note="on or off: every effort turns it on",
        ),
    )


def _bedrock() -> tuple[Family, ...]:
    gpt_oss = (
        replace(
            f,
            pattern=r"openai\." + f.pattern,
            default_effort="medium",
            style="reasoning_effort",
        )
        for f in GPT_OSS.reasoning
    )
    return (
        *(_claude_on_bedrock(f) for f in CLAUDE.reasoning),
        Family(
            "Amazon Nova 2",
            r"amazon\.nova-2",
            {**_THREE},
            off={"type": "disabled"},
            default_effort="medium",
            style="nova",
        ),
        *gpt_oss,
        Family("DeepSeek-R1", r"deepseek\.r1", {}, off=REFUSE, note="always reasons, no levels"),
        _other(
            reasons=False,
            note="Zerda knows no reasoning field for it: pass additionalModelRequestFields natively",
        ),
    )


# One row per model family, first match wins; each mode's last row ("") is the rest. The
# mode is a row's ``traits.reasoning``. Spellings checked against the recorded exchanges and
# each SDK's request types.
REASONING: dict[str, tuple[Family, ...]] = {
    "openai": (*OPENAI.reasoning, _other(efforts=ALL, off="none")),
    "groq": _groq(),
    "mistral": (*MISTRAL.reasoning, _other(efforts=ALL, off="none")),
    "ollama": _ollama(),
    "anthropic": CLAUDE.reasoning,
    "bedrock": _bedrock(),
    "gemini": (*GEMINI.reasoning, _other(efforts=_LEVELS, off=0, takes_budget=True)),
}
