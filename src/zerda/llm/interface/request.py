"""A request, checked and converted before anything is sent.

:meth:`Requests._checked_request` runs :func:`zerda.llm._request.prepare` against the
interface's row (with the response_format's mode, DESIGN.md §13, and ``reasoning=`` planned
for this model's family, DESIGN.md §11), then the wire's ``_build_request``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zerda.llm import _gc, _lazy, registry
from zerda.llm._record import replace
from zerda.llm.errors import InvalidRequestError, OutputValidationError, ZerdaError
from zerda.llm.interface._host import Host
from zerda.llm.interface.retrying import _RETRY_BUDGET

if TYPE_CHECKING:
    from zerda.llm import _ids, _profile, _request, _structured
    from zerda.llm import reasoning as _reasoning
    from zerda.llm._request import Request
    from zerda.llm._structured import OutputSpec
    from zerda.llm.reasoning import Plan
else:
    # The request checks load on the first call: building an interface needs none of them
    # (docs/decisions.md, "Building an interface loads only what building needs").
    _ids = _lazy.module("zerda.llm._ids", __name__, "_ids")
    _profile = _lazy.module("zerda.llm._profile", __name__, "_profile")  # with its tables
    _request = _lazy.module("zerda.llm._request", __name__, "_request")
    _structured = _lazy.module("zerda.llm._structured", __name__, "_structured")
    _reasoning = _lazy.module("zerda.llm.reasoning", __name__, "_reasoning")


def _as_text(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn with its server calls as text before its content."""
    from zerda.llm._server_tools import history_text

    text = history_text(message["server_tool_calls"])
    content = message.get("content")
    out = {k: v for k, v in message.items() if k != "server_tool_calls"}
    out["content"] = f"{text}\n\n{content}" if content else text
    return out


class Requests(Host):
    """Checking a request, converting it, and the structured answer of its result."""

    def _native_request(self, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The SDK call's keyword arguments as JSON data (a batch file's line): data URLs,
        which only the fast paths write lazily, as strings (:func:`zerda.llm.parts.with_urls`)."""
        from zerda.llm.parts import with_urls

        return with_urls(self._checked_request(messages, kwargs)[1])

    def _checked_request(
        self, messages: Any, kwargs: dict[str, Any]
    ) -> tuple[Request, dict[str, Any]]:
        """The checked request and the SDK call's keyword arguments built from it (the
        garbage collector paused meanwhile: :mod:`zerda.llm._gc`)."""
        with _gc.paused():
            try:
                req = self._prepare(messages, **kwargs)
                if req.server_history:
                    req = self._with_server_history(req)
                # The retry budget of this call: its own timeout, else the interface's.
                _RETRY_BUDGET.set(req.timeout if req.timeout is not None else self.timeout)
                return req, self._build_request(req)
            except ValueError as exc:  # a converter refused the input: the caller's mistake
                if isinstance(exc, ZerdaError):
                    raise
                # A schema adapter's refusal of what the row's dialect cannot express is a
                # capability refusal (zerda.llm._schema_walk.DialectError).
                capability = getattr(exc, "capability", False) is True
                raise InvalidRequestError(
                    str(exc), provider=self.provider, capability=capability
                ) from exc

    def _prepare(
        self,
        messages: Any,
        *,
        response_format: Any = None,
        structured_output: Any = None,
        reasoning: Any = None,
        include_raw: Any = False,
        **kwargs: Any,
    ) -> Request:
        """Checks everything that can be checked before a request is sent
        (:func:`zerda.llm._request.prepare`, against this interface's row), with the
        response_format and the mode it travels in (DESIGN.md §13), and ``reasoning=``
        against this model's family (DESIGN.md §11)."""
        output = self._output_spec(response_format, structured_output, bool(kwargs.get("tools")))
        req = _request.prepare(
            self.spec,
            self._tool_id,
            messages,
            tool_results=self._tool_results_media(),
            output=output,
            **kwargs,
        )
        if req.hosted:  # each checked once by prepare; here against the row and model
            _request.check_hosted_row(kwargs["tools"], req.hosted, self.spec, self.model)
        # The model's known limits (DESIGN §21): one dict lookup per call.
        _profile.check_limits(self.spec, str(self.model), req.max_tokens, messages)
        plan = self._plan_reasoning(reasoning, req.max_tokens, req.tool_choice)
        if plan is not None:
            req = replace(req, reasoning=plan)
        if include_raw is not False:
            if include_raw is not True:
                raise InvalidRequestError(f"include_raw must be True or False, not {include_raw!r}")
            req = replace(req, include_raw=True)
        return req

    def _with_server_history(self, req: Request) -> Request:
        """The history's hosted-tool turns as this wire takes them (DESIGN §18): its own
        native blocks back (``_replays_hosted``), else their readable text before the
        turn's content, so the conversation continues on any provider."""
        messages = [
            m
            if m["role"] != "assistant" or "server_tool_calls" not in m
            else m
            if self._replays_hosted(m)
            else _as_text(m)
            for m in req.messages
        ]
        return replace(req, messages=messages)

    def _replays_hosted(self, message: dict[str, Any]) -> bool:
        """Whether ``message``'s provider_data holds this wire's native hosted-tool blocks,
        which its assistant mapping sends back; a wire that replays them overrides this."""
        return False

    @property
    def _tool_id(self) -> Callable[[str | None, int, int], str | None]:
        """The row's id rule: ``rule(orig, message_index, call_index)`` is the id sent for
        a history tool call and its result (the function itself, called once per call)."""
        return _ids.ID_RULES[self.traits.tool_id]

    def _tool_results_media(self) -> registry.Media:
        """What this model's tool results carry natively: the row's ``tool_results``
        (a provider whose older models take less narrows it by model)."""
        return self.traits.tool_results

    def _output_spec(self, response_format: Any, mode: Any, has_tools: bool) -> OutputSpec | None:
        """response_format checked, with the mode it travels in (DESIGN.md §13)."""
        spec = _structured.output_spec(response_format)
        if spec is None:
            if mode is not None:
                raise InvalidRequestError("structured_output needs a response_format")
            return None
        model = self.model or ""
        chosen = _structured.choose_mode(spec, mode, self.traits, self.provider, model, has_tools)
        strict = chosen == "native" and _structured.uses_strict(self.traits, model)
        return replace(spec, mode=chosen, strict=strict)

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """The request fields that ask for ``output`` natively (a provider with native
        structured output overrides this)."""
        return {}

    def _native_output(self, req: Request) -> dict[str, Any]:
        """The native structured-output fields of ``req``: empty unless it has a
        response_format sent in native mode."""
        if req.output is None or req.output.mode != "native":
            return {}
        try:
            return self._map_response_format(req.output)
        except ValueError as exc:  # a schema that cannot be made strict: another row may take it
            raise InvalidRequestError(str(exc), provider=self.provider, capability=True) from None

    def _plan_reasoning(self, reasoning: Any, max_tokens: int | None, choice: Any) -> Plan | None:
        """``reasoning=`` checked against this model's family (the row's reasoning mode
        names its table in zerda.llm.reasoning), once for every provider."""
        mode = self.traits.reasoning
        if mode is None and reasoning is not None:
            raise InvalidRequestError(
                f"reasoning: Zerda has no reasoning control for {self.provider}", capability=True
            )
        forced = choice == "required" or isinstance(choice, dict)
        checked = _reasoning.check_reasoning(reasoning)  # its shape: the same on every row
        try:
            return _reasoning.plan_reasoning(
                mode,
                str(self.model),
                checked,
                max_tokens=max_tokens,
                forced_tool_choice=forced,
                forced_with_adaptive=self.traits.forced_tool_with_adaptive,
            )
        except InvalidRequestError as exc:  # what this model's family cannot take
            exc.capability = True
            raise

    def _check_tool_names(self, tools: list[dict[str, Any]] | None) -> None:
        _request.check_tool_names(tools, self.spec)

    def _check_tool_choice(
        self, choice: str | dict[str, str] | None, parallel_tool_calls: bool | None
    ) -> None:
        _request.check_tool_choice(choice, parallel_tool_calls, self.spec)

    def _with_output(
        self, result: dict[str, Any], output: OutputSpec | None, raise_errors: bool | None
    ) -> dict[str, Any]:
        """The result with the structured answer parsed (no-op without response_format);
        an invalid answer raises OutputValidationError when errors are raised."""
        if output is None:
            return result
        result = _structured.apply_output(result, output)
        if "parse_error" in result and (
            self.raise_errors if raise_errors is None else raise_errors
        ):
            raise OutputValidationError(
                result["parse_error"], provider=self.provider, result=result
            )
        return result
