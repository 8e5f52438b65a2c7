"""MockLLMServer's model-like answers (``MockLLMServer.answer_like_a_model``): each request
answered as a model would answer it, from what the request offers and asks.

- it offers function tools, tool_choice does not forbid them and its last turn is not a tool
  result: one call to the tool tool_choice names, else the first tool offered, with
  arguments the tool's schema accepts (``_instance.py``);
- its last turn is a tool result and tool_choice still requires a call: a call to the last
  tool offered (where Zerda puts the answer tool of tool-mode structured output); a named
  tool_choice is a call to that tool whatever the last turn;
- it asks for structured output: text that is JSON its schema accepts (``{"answer":
  "Done."}`` for plain JSON mode);
- else the text ``Done.``.

What a request offers and asks is read by each wire's ``view`` module
(``MockWire.view``: ``read(req) -> RequestView``), in that wire's native form; this module
names no wire. The answer is a :class:`Script`, which the server renders for the wire, JSON
or stream alike.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from zerda.llm import registry
from zerda.testing import wires
from zerda.testing._instance import instance
from zerda.testing._script import RecordedRequest, Script, ScriptedCall

__all__ = ["TEXT", "OfferedTool", "RequestView", "answer", "dict_at", "model_like_answer"]

TEXT = "Done."
# Streams carry the answer in a few pieces, as a model's do.
_FRAGMENTS = 3

Choice = Literal["auto", "none", "required", "named"]


@dataclass(frozen=True)
class OfferedTool:
    """A function tool a request offers: its name and its parameters' JSON Schema."""

    name: str
    schema: Any


@dataclass(frozen=True)
class RequestView:
    """What a model reads from a request, whatever the wire (each wire's ``view.read``)."""

    tools: tuple[OfferedTool, ...] = ()  # the function tools offered (hosted ones left out)
    choice: Choice = "auto"  # tool_choice: "required" is OpenAI's, Anthropic's "any"...
    forced: str | None = None  # the tool a "named" choice names
    after_tool_result: bool = False  # the last turn holds a tool's result
    wants_json: bool = False  # structured output (JSON mode, or a schema)
    schema: Any = None  # the structured output's JSON Schema (None: any JSON)


def dict_at(obj: Any, key: str) -> dict[str, Any]:
    """``obj[key]`` when both are JSON objects, else an empty one (the views read bodies
    that a client may have built any way)."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def answer(view: RequestView) -> Script:
    """The model-like answer to a request seen as ``view`` (see the module docstring)."""
    tool = _tool_to_call(view)
    if tool is not None:
        call = ScriptedCall(name=tool.name, arguments=_arguments(tool.schema))
        return Script(tool_calls=[call], fragments=_FRAGMENTS)
    if view.wants_json:
        value = instance(view.schema) if view.schema is not None else {"answer": TEXT}
        return Script(text=json.dumps(value), fragments=_FRAGMENTS)
    return Script(text=TEXT, fragments=_FRAGMENTS)


def _tool_to_call(view: RequestView) -> OfferedTool | None:
    """The tool a model calls now, or None when it answers."""
    if not view.tools or view.choice == "none":
        return None
    if view.choice == "named":
        named = [t for t in view.tools if t.name == view.forced]
        return named[0] if named else None
    if view.after_tool_result:
        return view.tools[-1] if view.choice == "required" else None
    return view.tools[0]


def _arguments(schema: Any) -> dict[str, Any]:
    """Arguments the tool's schema accepts (always an object: a call's arguments are one)."""
    value = instance(schema if isinstance(schema, dict) else {"type": "object"})
    return value if isinstance(value, dict) else {}


def model_like_answer(request: RecordedRequest) -> Script:
    """The model-like answer to ``request`` (``MockLLMServer.answer_like_a_model``), read by
    the view of the wire its provider speaks; a request to a token-counting endpoint gets an
    empty Script (the count of the request itself)."""
    mock_wire = wires.mock_wire(registry.get(request.provider).wire)
    if mock_wire.count_paths is not None and mock_wire.count_paths.fullmatch(request.path):
        return Script()
    if mock_wire.view is None:
        return Script(text=TEXT)
    view: RequestView = importlib.import_module(mock_wire.view).read(request)
    return answer(view)
