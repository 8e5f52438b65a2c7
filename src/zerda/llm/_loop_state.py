"""The state of one run of the tool loop (docs/loop.md): its options, checked before anything
is sent; the history and what it says about a paused run; usage, cost and the budget; and
the result the run returns.

A paused run's state is its history: the last assistant message's calls that have no tool
result yet are the calls a resumed run answers first (``decisions=`` names them by id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zerda.llm._loop_tools import (
    Answer,
    Decisions,
    Plan,
    Runner,
    Verdict,
    call_key,
    tool_table,
    verdict_of,
)
from zerda.llm._request import normalize_tools
from zerda.llm._tool_decorator import check_timeout
from zerda.llm.errors import ZerdaError
from zerda.llm.hosted import is_hosted
from zerda.llm.usage import add_usage

BUDGET_KEYS = ("tool_calls", "input_tokens", "output_tokens", "total_tokens", "cost")
COST_KEYS = ("input", "output", "total")
Approver = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class LoopOptions:
    """``run``'s own arguments, checked (see :func:`loop_options`)."""

    max_turns: int = 10
    output_retries: int = 0
    approve: Approver | None = None
    decisions: Mapping[Any, Any] | None = None
    tool_timeout: float | None = None
    budget: Mapping[str, float] | None = None
    stop_on: frozenset[str] = frozenset()
    final_answer: bool = False
    max_concurrency: int | None = None


def loop_options(
    *,
    max_turns: int,
    output_retries: int,
    on_tool_call: Approver | None,
    approve: Approver | None,
    decisions: Mapping[Any, Any] | None,
    tool_timeout: float | None,
    budget: Mapping[str, float] | None,
    stop_on: Sequence[str],
    final_answer: bool,
    max_concurrency: int | None,
) -> LoopOptions:
    """The options, or a ValueError naming the argument that is wrong."""
    if not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, not {max_turns}")
    if max_concurrency is not None and (
        not isinstance(max_concurrency, int) or max_concurrency < 1
    ):
        raise ValueError(f"max_concurrency must be an int of at least 1, not {max_concurrency!r}")
    if decisions is not None and not isinstance(decisions, Mapping):
        raise ValueError(f"decisions must be a dict {{call id: decision}}, not {decisions!r}")
    return LoopOptions(
        max_turns,
        output_retries,
        _approver(approve, on_tool_call),
        decisions,
        check_timeout(tool_timeout, "tool_timeout"),
        _budget(budget),
        _stop_on(stop_on),
        bool(final_answer),
        max_concurrency,
    )


def _approver(approve: Approver | None, on_tool_call: Approver | None) -> Approver | None:
    """``approve``, or ``on_tool_call`` (the first round's approve: its answer is taken as
    True or False)."""
    for name, value in (("approve", approve), ("on_tool_call", on_tool_call)):
        if value is not None and not callable(value):
            raise ValueError(f"{name} must be a function of the call, not {value!r}")
    if approve is not None and on_tool_call is not None:
        raise ValueError("pass approve= or on_tool_call= (its older, True/False form), not both")
    return approve if on_tool_call is None else _as_bool(on_tool_call)


def _as_bool(on_tool_call: Approver) -> Approver:
    def approve(call: dict[str, Any]) -> Any:
        answer = on_tool_call(call)
        if hasattr(answer, "__await__"):  # async on_tool_call: awaited by the loop
            return _awaited_bool(answer)
        return bool(answer)

    return approve


async def _awaited_bool(answer: Any) -> bool:
    return bool(await answer)


def _budget(budget: Mapping[str, float] | None) -> Mapping[str, float] | None:
    if budget is None:
        return None
    if not isinstance(budget, Mapping):
        raise ValueError(f"budget must be a dict with keys {', '.join(BUDGET_KEYS)}")
    for key, limit in budget.items():
        if key not in BUDGET_KEYS:
            raise ValueError(f"budget: unknown key {key!r} (keys: {', '.join(BUDGET_KEYS)})")
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 0:
            raise ValueError(f"budget[{key!r}] must be a number of at least 0, not {limit!r}")
    return dict(budget)


def _stop_on(stop_on: Sequence[str]) -> frozenset[str]:
    if isinstance(stop_on, str) or not all(isinstance(n, str) for n in stop_on):
        raise ValueError(f"stop_on must be a list of tool names, not {stop_on!r}")
    return frozenset(stop_on)


# --- the run ------------------------------------------------------------------------------------


class RunState:
    """One run: its history, tools, counters and the result it returns."""

    def __init__(
        self, messages: Any, tools: Sequence[Any], opts: LoopOptions, kwargs: dict[str, Any]
    ) -> None:
        self.opts = opts
        self.kwargs = kwargs
        self.history = _history(messages)
        self.unified = _unified(tools)
        table = tool_table(tools, opts.tool_timeout)
        _check_stop_on(opts.stop_on, self.unified)
        self.decide = Decisions(table, opts.approve)
        self.runner = Runner(table, opts.max_concurrency)
        self.at, self.unanswered = _unanswered(self.history)
        self.given = _given(opts.decisions, self.unanswered)
        self.turns = self.tool_calls = 0
        self.retries = opts.output_retries
        self.last: dict[str, Any] | None = None  # the last model turn's result
        self.answered = False  # whether calls were answered (a turn event comes next)
        self.usage: dict[str, Any] | None = None
        self.cost: dict[str, Any] | None = None

    @property
    def resumed(self) -> bool:
        return bool(self.unanswered)

    def close(self) -> None:
        self.runner.close()

    # --- turns --------------------------------------------------------------------------

    def request(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {"tools": self.unified, **self.kwargs, **(extra or {})}

    def count(self, result: Mapping[str, Any]) -> None:
        """A turn's usage and cost (a turn whose cost is unknown adds nothing)."""
        self.turns += 1
        self.usage = add_usage(self.usage, result.get("usage"))
        self.cost = add_cost(self.cost, result.get("cost"))

    def add_message(self, message: dict[str, Any], result: dict[str, Any]) -> None:
        """A turn's assistant message whose calls are answered next."""
        self.at = len(self.history)
        self.history.append(message)
        self.last = result

    def current_calls(self) -> list[dict[str, Any]]:
        """The calls of the assistant message being answered."""
        assert self.at is not None
        calls: list[dict[str, Any]] = self.history[self.at].get("tool_calls") or []
        return calls

    def add_answers(self, answers: Sequence[Answer]) -> None:
        """The tool messages, after those already there, all in call order."""
        assert self.at is not None
        self.answered = self.answered or bool(answers)
        calls = self.current_calls()
        order = {c.get("id"): j for j, c in enumerate(calls) if c.get("id")}
        tail = [*self.history[self.at + 1 :], *(a.message for a in answers)]
        tail.sort(key=lambda m: order.get(m.get("tool_call_id"), len(calls)))
        self.history[self.at + 1 :] = tail

    # --- budget ---------------------------------------------------------------------------

    def within_budget(self, plans: Sequence[Plan]) -> list[Plan]:
        """The plans, the calls past the tool_calls budget skipped; those run are counted."""
        limit = (self.opts.budget or {}).get("tool_calls")
        out = []
        for plan in plans:
            if plan.verdict.action == "run":
                if limit is not None and self.tool_calls >= limit:
                    text = f"Not run: this run's budget of {limit:g} tool calls is used up."
                    plan = plan._replace(verdict=Verdict("skip", text=text))
                else:
                    self.tool_calls += 1
            out.append(plan)
        return out

    def budget_reached(self) -> bool:
        budget = self.opts.budget
        if not budget:
            return False
        usage = self.usage or {}
        spent = {
            "tool_calls": self.tool_calls,
            "input_tokens": usage.get("input_tokens") or 0,
            "output_tokens": usage.get("output_tokens") or 0,
            "cost": (self.cost or {}).get("total") or 0.0,
        }
        spent["total_tokens"] = spent["input_tokens"] + spent["output_tokens"]
        return any(spent[key] >= limit for key, limit in budget.items())

    def stop_after(self, plans: Sequence[Plan], answers: Sequence[Answer]) -> str | None:
        """Why the loop ends after a turn's calls: paused, stop_on, budget, max_turns."""
        if any(p.verdict.action == "pause" for p in plans):
            return "paused"
        if any(
            a.call.get("name") in self.opts.stop_on and not a.message["is_error"] for a in answers
        ):
            return "stop_on"
        if self.budget_reached():
            return "budget"
        return "max_turns" if self.turns >= self.opts.max_turns else None

    # --- results --------------------------------------------------------------------------

    def result(
        self, base: Mapping[str, Any] | None, stop_reason: str | None = None, pending: Any = ()
    ) -> dict[str, Any]:
        """The run's result: the last turn's (or, when this run made none, the answered
        message's) with the whole history, summed usage and cost, turns and pending calls."""
        out = {
            **(base if base is not None else self._no_turn()),
            "messages": self.history,
            "usage": self.usage,
            "cost": self.cost,
            "turns": self.turns,
            "pending": [{**p.call, "index": p.position} for p in pending],
        }
        if stop_reason is not None:
            out["stop_reason"] = stop_reason
        return out

    def _no_turn(self) -> dict[str, Any]:
        """A resumed run that ended before calling the model: the message it answered."""
        assert self.at is not None
        message = self.history[self.at]
        return {
            "content": message.get("content"),
            "tool_calls": message.get("tool_calls") or [],
            "stop_reason": "tool_use",
            "usage": None,
            "reasoning": None,
            "message": message,
        }


def add_cost(total: dict[str, Any] | None, cost: Any) -> dict[str, Any] | None:
    """``total`` + a turn's cost; None + None stays None (every price unknown so far)."""
    if not isinstance(cost, Mapping):
        return total
    base = total or {**dict.fromkeys(COST_KEYS, 0.0), "currency": cost.get("currency", "USD")}
    summed = {k: float(base[k]) + float(cost.get(k) or 0.0) for k in COST_KEYS}
    return {**summed, "currency": base["currency"]}


def _history(messages: Any) -> list[Any]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return list(messages)


def _unified(tools: Sequence[Any]) -> list[Any] | None:
    """The tools each turn sends: functions in the unified shape, hosted tools (DESIGN §18)
    as given, after them (generate checks them; the provider runs them)."""
    try:
        unified = normalize_tools(tools)
    except ZerdaError:
        return list(tools)  # generate reports the problem in its usual error shape
    hosted = [t for t in tools if is_hosted(t)] if isinstance(tools, (list, tuple)) else []
    return [*(unified or ()), *hosted] or None


def _check_stop_on(stop_on: frozenset[str], unified: list[Any] | None) -> None:
    names = {t.get("name") for t in unified or [] if isinstance(t, dict)}
    unknown = sorted(stop_on - names)
    if unknown:
        known = ", ".join(sorted(n for n in names if isinstance(n, str))) or "none"
        raise ValueError(f"stop_on: {unknown[0]!r} is not one of the tools ({known})")


def _unanswered(history: list[Any]) -> tuple[int | None, list[tuple[int, dict[str, Any]]]]:
    """The index of the last assistant message with tool calls when only tool messages
    follow it, and its calls that have no result yet (an id-less call: by position)."""
    at = len(history) - 1
    while at >= 0 and isinstance(history[at], dict) and history[at].get("role") == "tool":
        at -= 1
    message = history[at] if at >= 0 else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None, []
    calls = message.get("tool_calls") or []
    results = history[at + 1 :]
    ids = {m.get("tool_call_id") for m in results if m.get("tool_call_id")}
    idless = sum(1 for m in results if not m.get("tool_call_id"))
    open_calls = []
    for j, call in enumerate(calls):
        if call.get("id"):
            if call["id"] not in ids:
                open_calls.append((j, call))
        elif idless:
            idless -= 1
        else:
            open_calls.append((j, call))
    return (at if calls else None), open_calls


def _given(
    decisions: Mapping[Any, Any] | None, unanswered: list[tuple[int, dict[str, Any]]]
) -> dict[Any, Verdict]:
    """``decisions=`` checked against the calls awaiting one, as verdicts."""
    if decisions is None:
        return {}
    keys = [call_key(call, j) for j, call in unanswered]
    if not keys:
        raise ValueError(
            "decisions= was given, but the history has no pending tool calls to decide "
            "(its last assistant message has no call without a result)"
        )
    for key in decisions:
        if key not in keys:
            known = ", ".join(repr(k) for k in keys)
            raise ValueError(f"decisions: {key!r} names no pending tool call (pending: {known})")
    return {key: verdict_of(value, f"decisions[{key!r}]") for key, value in decisions.items()}
