"""The Responses API's checks of built-in (hosted) tools (DESIGN §18): their declarations in
``tools`` and the hosted items a stateless history sends back in ``input``.

The fields and types are the API reference's
(https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools,
the ``openai`` SDK's ``types/responses/tool_param.py`` and ``response_input_item_param.py``
generated from it); the answers are OpenAI's usual 400 bodies: "Invalid value: ...
Supported values are: ..." (``invalid_value``, see validate.py's ``_supported``),
"Missing required parameter: 'tools[0].vector_store_ids'." (``missing_required_parameter``,
quoted for ``tools[4].name`` in https://github.com/icebear0828/codex-proxy/issues/399),
"Unknown parameter: ..." (``unknown_parameter``), "Invalid type for 'x': expected ..., but
got ... instead." (``invalid_type``) and "Invalid 'x': integer above maximum value. ..."
(``integer_above_max_value``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zerda.testing._script import RecordedRequest
from zerda.testing._validate import Rejection, body_of, dicts
from zerda.testing.wires.openai.validate import reject

# The tool types of the reference's ``tools`` union, in its order.
TOOL_TYPES = (
    "function",
    "file_search",
    "computer",
    "computer_use_preview",
    "web_search",
    "web_search_2025_08_26",
    "mcp",
    "code_interpreter",
    "programmatic_tool_calling",
    "image_generation",
    "local_shell",
    "shell",
    "custom",
    "namespace",
    "tool_search",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "apply_patch",
)
_SEARCH_CONTEXT = ("low", "medium", "high")
_APPROVALS = ("always", "never")


def _missing(param: str) -> Rejection:
    return reject(
        400, f"Missing required parameter: '{param}'.", param, "missing_required_parameter"
    )


def _invalid_type(param: str, expected: str, value: Any) -> Rejection:
    got = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else "null"
    )
    message = f"Invalid type for '{param}': expected {expected}, but got {got} instead."
    return reject(400, message, param, "invalid_type")


def _invalid_value(param: str, value: Any, allowed: tuple[str, ...]) -> Rejection:
    names = [repr(a) for a in allowed]
    listed = f"{', '.join(names[:-1])}, and {names[-1]}" if len(names) > 2 else " and ".join(names)
    message = f"Invalid value: '{value}'. Supported values are: {listed}."
    return reject(400, message, param, "invalid_value")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _web_search(tool: dict[str, Any], at: str) -> Rejection | None:
    """``filters.allowed_domains`` (an array of strings; ``web_search`` only),
    ``user_location`` (``type: "approximate"``), ``search_context_size``."""
    filters = tool.get("filters")
    if filters is not None and str(tool.get("type")).startswith("web_search_preview"):
        return reject(
            400, f"Unknown parameter: '{at}.filters'.", f"{at}.filters", "unknown_parameter"
        )
    domains = filters.get("allowed_domains") if isinstance(filters, dict) else None
    if domains is not None and not _strings(domains):
        return _invalid_type(f"{at}.filters.allowed_domains", "an array of strings", domains)
    location = tool.get("user_location")
    if isinstance(location, dict) and location.get("type", "approximate") != "approximate":
        return _invalid_value(f"{at}.user_location.type", location.get("type"), ("approximate",))
    size = tool.get("search_context_size")
    if size is not None and size not in _SEARCH_CONTEXT:
        return _invalid_value(f"{at}.search_context_size", size, _SEARCH_CONTEXT)
    return None


def _file_search(tool: dict[str, Any], at: str) -> Rejection | None:
    """``vector_store_ids`` required (strings); ``max_num_results`` 1 to 50."""
    ids = tool.get("vector_store_ids")
    if ids is None:
        return _missing(f"{at}.vector_store_ids")
    if not _strings(ids):
        return _invalid_type(f"{at}.vector_store_ids", "an array of strings", ids)
    most = tool.get("max_num_results")
    if isinstance(most, int) and most > 50:
        message = (
            f"Invalid '{at}.max_num_results': integer above maximum value. Expected a value "
            f"<= 50, but got {most} instead."
        )
        return reject(400, message, f"{at}.max_num_results", "integer_above_max_value")
    return None


def _code_interpreter(tool: dict[str, Any], at: str) -> Rejection | None:
    """``container`` required: a container id, or ``{"type": "auto", ...}``."""
    container = tool.get("container")
    if container is None:
        return _missing(f"{at}.container")
    if isinstance(container, dict) and container.get("type") != "auto":
        return _invalid_value(f"{at}.container.type", container.get("type"), ("auto",))
    return None


def _mcp(tool: dict[str, Any], at: str) -> Rejection | None:
    """``server_label`` required; one of ``server_url``, ``connector_id``, ``tunnel_id``;
    ``require_approval`` "always", "never" or a filter object; ``headers`` strings."""
    if not tool.get("server_label"):
        return _missing(f"{at}.server_label")
    if not any(tool.get(k) for k in ("server_url", "connector_id", "tunnel_id")):
        return _missing(f"{at}.server_url")
    approval = tool.get("require_approval")
    if approval is not None and not isinstance(approval, dict) and approval not in _APPROVALS:
        return _invalid_value(f"{at}.require_approval", approval, _APPROVALS)
    headers = tool.get("headers")
    if headers is not None and not (
        isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())
    ):
        return _invalid_type(f"{at}.headers", "an object of strings", headers)
    return None


_TOOL_CHECKS: dict[str, Callable[[dict[str, Any], str], Rejection | None]] = {
    "web_search": _web_search,
    "web_search_2025_08_26": _web_search,
    "web_search_preview": _web_search,
    "web_search_preview_2025_03_11": _web_search,
    "file_search": _file_search,
    "code_interpreter": _code_interpreter,
    "mcp": _mcp,
}


def hosted_tools_valid(req: RecordedRequest) -> Rejection | None:
    """400 for a tool of a type the API does not know, or a built-in tool's declaration it
    refuses (the checks above; the fields of
    https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools)."""
    for index, tool in dicts(body_of(req).get("tools")):
        kind, at = tool.get("type"), f"tools[{index}]"
        if kind not in TOOL_TYPES:
            return _invalid_value(f"{at}.type", kind, TOOL_TYPES)
        check = _TOOL_CHECKS.get(str(kind))
        rejection = check(tool, at) if check else None
        if rejection is not None:
            return rejection
    return None


# A hosted item sent back in ``input``: its required fields (the SDK's input item params;
# a code_interpreter_call's ``code`` and ``outputs`` are required even when null).
_ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "web_search_call": ("id", "action", "status"),
    "file_search_call": ("id", "queries", "status"),
    "code_interpreter_call": ("id", "code", "container_id", "outputs", "status"),
    "mcp_call": ("id", "arguments", "name", "server_label"),
    "mcp_list_tools": ("id", "server_label", "tools"),
    "mcp_approval_request": ("id", "arguments", "name", "server_label"),
    "tool_search_call": ("arguments",),
    "tool_search_output": ("tools",),
    "image_generation_call": ("id", "result", "status"),
}


def hosted_items_complete(req: RecordedRequest) -> Rejection | None:
    """400 "Missing required parameter: 'input[2].outputs'." for a hosted item of a
    stateless history (``store: false``) without a field its input item requires
    (https://platform.openai.com/docs/api-reference/responses/create#responses-create-input,
    the SDK's ``response_input_item_param.py``: ``Required`` fields). Where
    responses are stored (the default), an item may name a stored one by its id alone:
    recording openai-responses/pydantic-ai__test_openai_responses.test_openai_responses_image_generation_with_tool_output__i01
    sends ``{"id": "ig_…", "type": "image_generation_call"}`` and is answered."""
    body = body_of(req)
    if body.get("store") is not False:
        return None
    for index, item in dicts(body.get("input")):
        for field in _ITEM_FIELDS.get(str(item.get("type")), ()):
            if field not in item:
                return _missing(f"input[{index}].{field}")
    return None
