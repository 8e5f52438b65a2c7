"""The one reasoning control (DESIGN.md §11) and the table that maps it per provider and
model family (docs/reasoning.md shows the same table).

``generate(reasoning=...)`` takes ``None`` (the provider's default: nothing is sent),
``False`` (off), ``"minimal" | "low" | "medium" | "high"`` or a dict ``{"effort",
"budget_tokens", "summary"}``. :func:`check_reasoning` checks the value's shape (any
provider), then :func:`plan_reasoning` finds the model's :class:`Family` in :data:`TABLE`
(the model-family profiles' reasoning rows, :mod:`zerda.llm.registry.profiles`) and checks
it against what that family takes, so every refusal happens before anything is
sent and names the rule. The provider modules turn the resulting :class:`Plan` into their
native fields (their ``_map_reasoning``); nothing else about reasoning is decided there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zerda.llm.errors import InvalidRequestError
from zerda.llm.registry.profiles import ALL, EFFORTS, REFUSE, Family  # noqa: F401 - re-exported
from zerda.llm.registry.profiles import REASONING as TABLE

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

# The per-family rows are model-family data: zerda.llm.registry.profiles holds them (Family,
# REFUSE, ALL and the table, TABLE here), read by every row that hosts a family.


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
    forced_with_adaptive: str = "",
) -> Plan | None:
    """The checked :class:`Plan` for ``reasoning`` on ``model``; None when nothing is to be
    sent. Refuses what the family does not take, naming the rule and what it accepts;
    ``forced_with_adaptive``: the models whose adaptive thinking takes a forced tool_choice
    (the row's ``forced_tool_with_adaptive`` pattern; "" for none)."""
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
    if forced_tool_choice and _refuses_forced(family, budget, forced_with_adaptive, model):
        raise InvalidRequestError(_FORCED.format(shown=_shown(reasoning), where=where))
    summary = reasoning.summary is not False
    return Plan(family, True, effort=effort, budget=budget, summary=summary)


# Anthropic: "Tool use with thinking only supports tool_choice: {"type": "auto"} (the
# default) or tool_choice: {"type": "none"}"; any or a named tool answers 400 "Thinking may
# not be enabled when tool_choice forces tool use"
# (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#extended-thinking-with-tool-use).
_FORCED = (
    "reasoning={shown} with tool_choice forcing a tool: {where} refuses thinking with a "
    "forced tool_choice ('required', a tool name, or the answer tool of a response_format "
    'in tool mode): the provider answers 400 "Thinking may not be enabled when tool_choice '
    "forces tool use\"; use tool_choice='auto', reasoning=False, or "
    "structured_output='native' where the model has it"
)


def _refuses_forced(family: Family, budget: int | None, adaptive_takes: str, model: str) -> bool:
    """Whether the family's thinking refuses a forced tool_choice: budget thinking where
    the family says so, adaptive thinking too but for the models the row names
    (``adaptive_takes``, its ``forced_tool_with_adaptive`` pattern)."""
    if family.forced_tool_choice:
        return False
    return budget is not None or not (adaptive_takes and re.search(adaptive_takes, model))


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
