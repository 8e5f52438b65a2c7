"""The one reasoning control (DESIGN.md §11) and the table that maps it per provider and
model family (docs/reasoning.md shows the same table).

``generate(reasoning=...)`` takes ``None`` (the provider's default: nothing is sent),
``False`` (off), ``"minimal" | "low" | "medium" | "high"`` or a dict ``{"effort",
"budget_tokens", "summary"}``. :func:`check_reasoning` checks the value's shape (any
provider), then :func:`plan_reasoning` finds the model's :class:`Family` in :data:`TABLE`
and checks it against what that family takes, so every refusal happens before anything is
sent and names the rule. The provider modules turn the resulting :class:`Plan` into their
native fields (their ``_map_reasoning``); nothing else about reasoning is decided there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zerda.llm.errors import InvalidRequestError

EFFORTS = ("minimal", "low", "medium", "high")
_KEYS = ("effort", "budget_tokens", "summary")


@dataclass(frozen=True)
class Reasoning:
    """A reasoning value whose shape is checked: ``on=False`` is ``reasoning=False``;
    ``on=True`` with no effort and no budget asks for reasoning at the family's default."""

    on: bool
    effort: str | None = None
    budget_tokens: int | None = None
    summary: bool | None = None


def check_reasoning(value: Any) -> Reasoning | None:
    """The caller's ``reasoning=`` as a :class:`Reasoning` (None for None); refuses any
    other shape, naming what is accepted."""
    if value is None:
        return None
    if value is False:
        return Reasoning(on=False)
    if isinstance(value, str):
        return Reasoning(on=True, effort=_checked_effort(value))
    if not isinstance(value, dict):
        raise InvalidRequestError(f"reasoning must be {_ACCEPTED}, not {value!r}")
    unknown = sorted(set(value) - set(_KEYS))
    if unknown:
        raise InvalidRequestError(
            f"reasoning has unknown key(s) {', '.join(map(repr, unknown))}: it takes "
            f"{', '.join(map(repr, _KEYS))}"
        )
    effort = value.get("effort")
    budget = value.get("budget_tokens")
    summary = value.get("summary")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise InvalidRequestError(f"reasoning budget_tokens must be an int, not {budget!r}")
    if budget is not None and budget < 0:
        raise InvalidRequestError(f"reasoning budget_tokens must not be negative ({budget})")
    if summary is not None and not isinstance(summary, bool):
        raise InvalidRequestError(f"reasoning summary must be True or False, not {summary!r}")
    return Reasoning(
        on=True,
        effort=_checked_effort(effort) if effort is not None else None,
        budget_tokens=budget,
        summary=summary,
    )


_ACCEPTED = (
    "None, False, 'minimal', 'low', 'medium', 'high' or a dict with 'effort', "
    "'budget_tokens' and 'summary'"
)


def _checked_effort(effort: Any) -> str:
    if effort not in EFFORTS:
        raise InvalidRequestError(
            f"reasoning effort {effort!r} is unknown: it is one of "
            f"{', '.join(map(repr, EFFORTS))} (or reasoning=False for off)"
        )
    return str(effort)


# --- the table --------------------------------------------------------------------------

REFUSE = "refuse"  # Family.off: the family cannot turn reasoning off
ALL = {e: e for e in EFFORTS}


@dataclass(frozen=True)
class Family:
    """How one model family of one provider takes reasoning.

    ``efforts`` maps each unified effort the family has to its native value (``{}``: the
    family takes no effort level); ``budgets`` maps efforts to a thinking budget instead,
    for families that take tokens; ``off`` is the native value for ``reasoning=False``
    (None: nothing to send, the model does not reason unless asked; ``REFUSE``: it cannot be
    turned off). ``reasons=False`` marks a family known not to reason, where asking would
    get a 400. ``forced_tool_choice=False``: the provider refuses this family's budget
    thinking with a forced tool_choice (Claude's adaptive thinking takes one)."""

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


_ANTHROPIC_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_CLAUDE_ADAPTIVE = r"claude-(opus|sonnet)-(4-[6-9]|[5-9])"
_CLAUDE_NO_BUDGET = r"claude-(opus-4-[7-9]|opus-[5-9]|sonnet-[5-9])"
_CLAUDE_NO_REASONING = r"claude-(3-5|3-opus|3-sonnet|3-haiku|2|instant|v2)"
_GEMINI_FLASH_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
_GEMINI_PRO_BUDGETS = {"minimal": 128, "low": 1024, "medium": 8192, "high": 32768}
_THREE = {"low": "low", "medium": "medium", "high": "high"}
_LEVELS = {e: e.upper() for e in EFFORTS}  # google-genai's ThinkingLevel names
_LEVELS3 = {e: e.upper() for e in _THREE}

# One row per model family, first match wins; each provider's last row ("") is the rest.
# Spellings checked against the recorded exchanges and each SDK's request types.
TABLE: dict[str, tuple[Family, ...]] = {
    "openai": (
        Family(
            "gpt-4 / gpt-3.5 / chat models",
            r"^(gpt-4|gpt-3\.5|chatgpt-|gpt-5[.\d]*-chat)",
            reasons=False,
        ),
        Family("gpt-5.1 and later", r"^gpt-5\.\d", {**_THREE}, off="none"),
        Family("gpt-5", r"^gpt-5", ALL, off=REFUSE, note="the least is 'minimal'"),
        Family("o-series", r"^o\d", {**_THREE}, off=REFUSE),
        Family("other models", "", ALL, off="none"),
    ),
    "groq": (
        Family("gpt-oss", r"gpt-oss", {**_THREE}, off=REFUSE),
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
        Family("other models", "", ALL, off="none"),
    ),
    "mistral": (
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
        Family("other models", "", ALL, off="none"),
    ),
    "ollama": (
        Family("gpt-oss", r"gpt-oss", {**_THREE}, off=REFUSE, default_effort="medium"),
        Family(
            "other models",
            "",
            {e: True for e in EFFORTS},
            off=False,
            default_effort="medium",
            note="on or off: every effort turns it on",
        ),
    ),
    "anthropic": (
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
    "bedrock": (
        Family("Claude 3.5 and older", r"anthropic\." + _CLAUDE_NO_REASONING, reasons=False),
        Family(
            "Claude Opus 4.7+ / Sonnet 5+ (adaptive)",
            r"anthropic\." + _CLAUDE_NO_BUDGET,
            {**_THREE},
            off={"type": "disabled"},
            style="adaptive",
        ),
        Family(
            "Claude Opus / Sonnet 4.6 (adaptive)",
            r"anthropic\." + _CLAUDE_ADAPTIVE,
            {**_THREE},
            off={"type": "disabled"},
            takes_budget=True,
            forced_tool_choice=False,
            style="adaptive",
        ),
        Family(
            "Claude (budget)",
            r"anthropic\.claude",
            budgets=_ANTHROPIC_BUDGETS,
            off={"type": "disabled"},
            takes_budget=True,
            forced_tool_choice=False,
            default_effort="medium",
            style="budget",
        ),
        Family(
            "Amazon Nova 2",
            r"amazon\.nova-2",
            {**_THREE},
            off={"type": "disabled"},
            default_effort="medium",
            style="nova",
        ),
        Family(
            "gpt-oss",
            r"openai\.gpt-oss",
            {**_THREE},
            off=REFUSE,
            default_effort="medium",
            style="reasoning_effort",
        ),
        Family("DeepSeek-R1", r"deepseek\.r1", {}, off=REFUSE, note="always reasons, no levels"),
        Family(
            "other models",
            "",
            reasons=False,
            note="Zerda knows no reasoning field for it: pass additionalModelRequestFields natively",
        ),
    ),
    "gemini": (
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
        Family("other models", "", _LEVELS, off=0, takes_budget=True),
    ),
}


def family_for(mode: str, model: str) -> Family:
    """The first row of ``mode``'s table that matches ``model``."""
    return next(f for f in TABLE[mode] if f.matches(model))


# --- planning ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What to send for one call: ``on=False`` is off (``off`` the native value); with
    ``on=True``, ``effort`` is the family's native effort value or None, ``budget`` a
    thinking budget or None, ``summary`` whether the reasoning text is asked back."""

    family: Family
    on: bool
    effort: Any = None
    budget: int | None = None
    summary: bool = True
    off: Any = None


def plan_reasoning(
    mode: str | None,
    model: str,
    reasoning: Reasoning | None,
    *,
    max_tokens: int | None = None,
    forced_tool_choice: bool = False,
) -> Plan | None:
    """The checked :class:`Plan` for ``reasoning`` on ``model``; None when nothing is to be
    sent. Refuses what the family does not take, naming the rule and what it accepts."""
    if reasoning is None:
        return None
    if mode is None:
        raise InvalidRequestError("reasoning: this provider has no reasoning control in Zerda")
    family = family_for(mode, model)
    where = f"{mode} {model} ({family.name})"
    if not reasoning.on:
        return _plan_off(family, where)
    if not family.reasons:
        why = family.note or "does not reason"
        raise InvalidRequestError(
            f"reasoning={_shown(reasoning)}: {where}: {why} (reasoning=None or False are accepted)"
        )
    effort, budget = _effort_and_budget(family, reasoning, where)
    if budget is not None and max_tokens is not None and budget >= max_tokens:
        raise InvalidRequestError(
            f"reasoning: the thinking budget ({budget} tokens) must be below max_tokens "
            f"({max_tokens}); raise max_tokens or lower the effort"
        )
    if forced_tool_choice and budget is not None and not family.forced_tool_choice:
        raise InvalidRequestError(
            f"reasoning: {where} refuses thinking with a forced tool_choice ('required' or a "
            "tool name); use tool_choice='auto' or reasoning=False"
        )
    summary = reasoning.summary is not False
    return Plan(family, True, effort=effort, budget=budget, summary=summary)


def _plan_off(family: Family, where: str) -> Plan | None:
    if family.off == REFUSE:
        note = f"; {family.note}" if family.note else ""
        raise InvalidRequestError(
            f"reasoning=False: {where} cannot turn reasoning off{note} "
            f"(it takes {_accepted(family)})"
        )
    if family.off is None:
        return None  # the family does not reason unless asked: nothing to send
    return Plan(family, False, off=family.off)


def _effort_and_budget(family: Family, reasoning: Reasoning, where: str) -> tuple[Any, int | None]:
    budget = reasoning.budget_tokens
    if budget is not None and not family.takes_budget:
        raise InvalidRequestError(
            f"reasoning budget_tokens: {where} takes no thinking budget (it takes {_accepted(family)})"
        )
    effort = reasoning.effort or (None if budget is not None else family.default_effort)
    if effort is None:
        return None, budget
    if family.budgets:
        if budget is None:
            budget = family.budgets[effort]
        return None, budget
    if effort not in family.efforts:
        raise InvalidRequestError(
            f"reasoning effort {effort!r}: {where} does not have it (it takes {_accepted(family)})"
        )
    return family.efforts[effort], budget


def _accepted(family: Family) -> str:
    levels = list(family.budgets or family.efforts)
    parts = ["None"]
    if levels:
        parts.append("effort " + ", ".join(map(repr, levels)))
    if family.takes_budget:
        parts.append("budget_tokens")
    if family.off != REFUSE:
        parts.append("False")
    return ", ".join(parts)


def _shown(reasoning: Reasoning) -> str:
    return repr(reasoning.effort) if reasoning.effort else "{...}"
