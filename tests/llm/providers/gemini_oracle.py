"""The test oracle of Gemini's fast path (issue 12): the request as Zerda built it before,
in google-genai's SDK form (``generate_content``'s keyword arguments), and the REST body
google-genai's own converters (``models._GenerateContentParameters_to_mldev`` /
``_to_vertex``) make of it: what went on the wire before the fast path. Zerda's REST body
must equal it (tests/llm/providers/test_gemini_rest.py, and every request the tests under
tests/llm build: tests/llm/conftest.py).

The converter functions below are the old ones, kept here only (copied from
src/zerda/llm/wires/gemini/interface.py before the fast path).
"""

from __future__ import annotations

import base64
import binascii
import json
from itertools import groupby
from typing import Any

from zerda.llm.base import Request
from zerda.llm.errors import InvalidRequestError
from zerda.llm.parts import b64decode, is_parts, text_of
from zerda.llm.reasoning import Plan
from zerda.llm.tools import to_gemini_tools

_OPENING = "(conversation continued)"
_PLACEHOLDER_SIGNATURE = base64.urlsafe_b64decode("skip_thought_signature_validator")
_TOOL_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def sdk_request(llm: Any, req: Request) -> dict[str, Any]:
    """``generate_content``'s keyword arguments for ``req``, as Zerda built them before."""
    from google.genai import types

    vertex = bool(llm._api_client().vertexai)
    config = _map_config(req, llm._native_output(req), _hosted_tools(llm, req), not vertex)
    config = _with_timeout(config, req.timeout)
    return {
        "model": llm.model,
        "contents": _map_messages(req.messages, vertex),
        "config": types.GenerateContentConfig.model_validate(config),
    }


def sdk_body(api_client: Any, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(model path, REST body) google-genai's ``generate_content`` makes of ``kwargs``."""
    from google.genai import _common, models, types

    params = types._GenerateContentParameters(**kwargs)
    convert = (
        models._GenerateContentParameters_to_vertex
        if api_client.vertexai
        else models._GenerateContentParameters_to_mldev
    )
    body = convert(api_client, params, None, params)
    path = body.pop("_url")["model"]
    body.pop("config", None)
    body = _common.encode_unserializable_types(_common.convert_to_dict(body))
    return path, body


def canonical(body: Any) -> str:
    """JSON text that tells 1 from 1.0 and True from 1, keys sorted."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _map_messages(messages: list[dict[str, Any]], vertex: bool = False) -> list[dict[str, Any]]:
    """Unified history -> Gemini contents: each run of tool results is one ``user`` content;
    consecutive contents of one role are merged; messages without parts are dropped."""
    contents: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for is_result, group in groupby(messages, key=lambda m: m["role"] == "tool"):
        batch = list(group)
        if is_result:
            _append(contents, "user", _map_tool_results(batch, calls))
            continue
        for message in batch:
            if message["role"] == "assistant":
                calls = message["tool_calls"]
            _append(contents, *_map_message(message, vertex))
    if not contents:
        # Checked here, as google-genai's own check is a bare ValueError.
        raise InvalidRequestError("messages: Gemini needs at least one non-empty message")
    if contents[0]["role"] == "model":
        # "Please ensure that function call turn comes immediately after a user turn or
        # after a function response turn" (https://ai.google.dev/gemini-api/docs/function-calling):
        # a history that starts with the model (a conversation continued from another
        # provider, a summary put first) gets a user turn before it (docs/decisions.md).
        contents.insert(0, {"role": "user", "parts": [{"text": _OPENING}]})
    return contents


def _append(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if not parts:
        return
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)  # our own list, built in _map_messages
    else:
        contents.append({"role": role, "parts": list(parts)})


def _map_message(message: dict[str, Any], vertex: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """A user or assistant message -> its Gemini role and parts."""
    if message["role"] == "assistant":
        kept = _kept_parts(message, vertex)
        if kept is not None:
            return "model", kept
        return "model", _text_parts(message["content"]) + _map_call_parts(message)
    content = message["content"]
    if isinstance(content, list):
        return "user", [_map_part(p) for p in content if p["type"] != "text" or p["text"]]
    return "user", _text_parts(content)


def _map_part(part: dict[str, Any]) -> dict[str, Any]:
    """One content part: text, ``inline_data`` (bytes: the SDK base64-encodes them) or
    ``file_data`` for a URL or a gs:// / Files API URI
    (https://ai.google.dev/gemini-api/docs/file-input-methods)."""
    if part["type"] == "text":
        return {"text": part["text"]}
    if "data" in part:
        return {"inline_data": {"mime_type": part["media_type"], "data": b64decode(part["data"])}}
    uri = part.get("url") or part["uri"]
    if not part.get("media_type"):
        raise InvalidRequestError(
            f"Gemini needs the media_type of {uri!r} (file_data.mime_type): add 'media_type'"
        )
    return {"file_data": {"file_uri": uri, "mime_type": part["media_type"]}}


def _kept_parts(message: dict[str, Any], vertex: bool) -> list[dict[str, Any]] | None:
    """A turn that ran server-side tools (DESIGN §18): its kept parts in their order, the
    function calls where they were, signatures as bytes; an edited text replaces the kept
    texts. Vertex AI takes no toolCall / toolResponse parts: such a turn is not replayed."""
    gemini = (message.get("provider_data") or {}).get("gemini") or {}
    kept = gemini.get("parts")
    if not kept or (vertex and any("toolCall" in p or "toolResponse" in p for p in kept)):
        return None  # Vertex AI: the turn as text (its calls' text before it) and calls
    calls = iter(_map_call_parts(message))
    text = message["content"] or ""
    edited = "".join(p.get("text") or "" for p in kept) != text
    out: list[dict[str, Any]] = [{"text": text}] if edited and text else []
    for part in kept:
        if "functionCall" in part:
            out += [c for c in [next(calls, None)] if c is not None]
        elif set(part) <= {"text", "thoughtSignature"}:
            out += [] if edited else [_with_bytes(part)]
        else:
            out.append(_with_bytes(part))
    return out + list(calls)


def _with_bytes(part: dict[str, Any]) -> dict[str, Any]:
    out = dict(part)
    if "thoughtSignature" in out:
        out["thoughtSignature"] = _decode_signature(0, out["thoughtSignature"])
    return out


def _hosted_tools(llm: Any, req: Request) -> list[dict[str, Any]]:
    """The unified hosted tools as google-genai Tool dicts: the row's native names and the
    options' fields."""
    out = []
    for tool in req.hosted:
        if tool["type"] == "native":
            continue  # sent as given, after the converted tools (check)
        fields: dict[str, Any] = {}
        if "blocked_domains" in tool:
            fields["exclude_domains"] = tool["blocked_domains"]
        if "vector_store_ids" in tool:
            fields["file_search_store_names"] = tool["vector_store_ids"]
        if "max_num_results" in tool:
            fields["top_k"] = tool["max_num_results"]
        out.append({llm.spec.traits.hosted[tool["type"]].native: fields})
    return out


def _text_parts(text: str | None) -> list[dict[str, Any]]:
    return [{"text": text}] if text else []


def _map_call_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message["tool_calls"]
    signatures = _signatures(message.get("provider_data"), len(calls))
    if calls and not any(signatures):
        signatures[0] = _PLACEHOLDER_SIGNATURE  # Gemini 3 needs one on the turn's first call
    parts = []
    for call, signature in zip(calls, signatures, strict=True):
        function_call: dict[str, Any] = {"name": call["name"], "args": call["arguments"]}
        if call["id"]:
            function_call["id"] = call["id"]
        part: dict[str, Any] = {"function_call": function_call}
        if signature:
            part["thought_signature"] = signature
        parts.append(part)
    return parts


def _signatures(provider_data: Any, count: int) -> list[bytes | None]:
    """The calls' thought signatures as bytes (None where a call has none)."""
    gemini = (provider_data or {}).get("gemini") if isinstance(provider_data, dict) else None
    texts = gemini.get("thought_signatures") if isinstance(gemini, dict) else None
    texts = list(texts) if isinstance(texts, list) else []
    texts = (texts + [None] * count)[:count]
    return [_decode_signature(j, t) for j, t in enumerate(texts)]


def _decode_signature(j: int, text: Any) -> bytes | None:
    if not text:
        return None
    if not isinstance(text, str):
        raise InvalidRequestError(f"provider_data gemini thought_signatures[{j}] must be text")
    try:
        # Standard or URL-safe alphabet, padding optional.
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequestError(
            f"provider_data gemini thought_signatures[{j}] is not base64: {text[:20]!r}"
        ) from None


def _map_tool_results(
    results: list[dict[str, Any]], calls: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One turn's results as function_response parts, in the order of their calls (the base
    class paired each result with its call: by id, else by position)."""
    order = {c["id"]: i for i, c in enumerate(calls) if c["id"]}
    ranked = sorted(
        enumerate(results), key=lambda item: order.get(item[1]["tool_call_id"], item[0])
    )
    return [_map_tool_result(result) for _, result in ranked]


def _map_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    output = message["content"]
    media: list[dict[str, Any]] = []
    if is_parts(output):
        # Media travel as FunctionResponse.parts, the text as the response
        # (https://ai.google.dev/gemini-api/docs/function-calling#multimodal).
        media = [_map_part(p) for p in output if p["type"] not in ("text", "cache_point")]
        text = text_of(output)
        output = text if text or not media else None
    if message["is_error"]:
        response = {"error": output}
    elif isinstance(output, dict):
        response = output
    else:
        response = {} if output is None else {"result": output}
    function_response: dict[str, Any] = {"name": message["name"], "response": response}
    if message["tool_call_id"]:
        function_response["id"] = message["tool_call_id"]
    if media:
        function_response["parts"] = media
    return {"function_response": function_response}


# --- tools, tool_choice, options -------------------------------------------------------


def _map_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    return to_gemini_tools(tools) if tools else None


def _map_tool_choice(choice: str | dict[str, str] | None) -> dict[str, Any] | None:
    """DESIGN.md §6: mode AUTO / NONE / ANY; a named tool is ANY + allowed_function_names."""
    if choice is None:
        return None
    if isinstance(choice, dict):
        config: dict[str, Any] = {"mode": "ANY", "allowed_function_names": [choice["name"]]}
    else:
        config = {"mode": _TOOL_MODES[choice]}
    return {"function_calling_config": config}


def _map_options(req: Request) -> dict[str, Any]:
    # parallel_tool_calls: Gemini has no such switch; it is ignored.
    options = {
        "max_output_tokens": req.max_tokens,
        "temperature": req.temperature,
        "top_p": req.top_p,
        "stop_sequences": list(req.stop) if req.stop else None,
    }
    return {k: v for k, v in options.items() if v is not None}


def _map_reasoning(plan: Plan | None) -> dict[str, Any] | None:
    """``thinking_config``: ``thinking_level`` (Gemini 3) or ``thinking_budget`` (2.5, or a
    budget the caller gave), with ``include_thoughts`` so the thought parts come back:
    https://ai.google.dev/gemini-api/docs/thinking"""
    if plan is None:
        return None
    if not plan.on:
        return {"thinking_budget": plan.off}
    config: dict[str, Any] = {"include_thoughts": plan.summary}
    if plan.budget is not None:
        config["thinking_budget"] = plan.budget
    elif plan.effort is not None:
        config["thinking_level"] = plan.effort
    return config


def _map_config(
    req: Request,
    output: dict[str, Any] | None = None,
    hosted: list[dict[str, Any]] | None = None,
    combines: bool = False,
) -> dict[str, Any]:
    """The GenerateContentConfig fields (``output``: the structured-output ones; ``hosted``:
    the hosted tools, after the functions); ``**native`` merged over them."""
    output = output or {}
    config: dict[str, Any] = {}
    if req.system:
        config["system_instruction"] = req.system
    tools = (_map_tools(req.tools) or []) + (hosted or [])
    if tools:
        config["tools"] = tools
    if req.tools:
        tool_config = _map_tool_choice(req.tool_choice) or {}
        if combines and req.hosted:
            tool_config["include_server_side_tool_invocations"] = True
        if tool_config:
            config["tool_config"] = tool_config
    config.update(_map_options(req))
    config.update(output)
    thinking = _map_reasoning(req.reasoning)
    if thinking:
        config["thinking_config"] = thinking
    # Zerda passes declarations, never Python callables: the SDK's automatic function
    # calling has nothing to run, so its loop is skipped.
    config["automatic_function_calling"] = {"disable": True}
    return {**config, **req.native}


def _with_timeout(config: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """A per-call timeout: google-genai takes per-request ``http_options`` in the config
    (https://googleapis.github.io/python-genai/#per-request-http-options), in milliseconds;
    merged over any ``http_options`` the caller gave."""
    if timeout is None:
        return config
    given = config.get("http_options") or {}
    options = given.model_dump(exclude_none=True) if hasattr(given, "model_dump") else dict(given)
    return {**config, "http_options": {**options, "timeout": int(timeout * 1000)}}


def urlsafe_blobs(value: Any) -> Any:
    """``value`` with every blob's base64 in the URL-safe alphabet google-genai writes: Zerda
    sends the part's standard base64 as it is, which the API's protobuf JSON takes as the
    same bytes (https://protobuf.dev/programming-guides/json/, ``bytes``)."""
    if isinstance(value, list):
        return [urlsafe_blobs(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: urlsafe_blobs(v) for k, v in value.items()}
    for key in ("inlineData", "inline_data"):
        blob = out.get(key)
        if isinstance(blob, dict) and isinstance(blob.get("data"), str):
            out[key] = {**blob, "data": blob["data"].replace("+", "-").replace("/", "_")}
    return out


def check(llm: Any, req: Request, native: dict[str, Any]) -> None:
    """Zerda's request (``native``: model, REST body, http_options) is what google-genai's
    ``generate_content`` put on the wire for the old SDK-form request: the same model path,
    the same JSON body, the same per-call http_options."""
    from google.genai import _transformers, types

    api_client = llm._api_client()
    path, body = sdk_body(api_client, sdk_request(llm, req))
    natives = [t["tool"] for t in req.hosted if t["type"] == "native"]
    if natives and "tools" not in req.native:  # native hosted tools go as they are
        body["tools"] = [*body.get("tools", ()), *natives]
    assert _transformers.t_model(api_client, native["model"]) == path
    assert canonical(urlsafe_blobs(native["body"])) == canonical(body)
    old = sdk_request(llm, req)["config"].http_options
    new = native["http_options"]
    assert (None if new is None else types.HttpOptions.model_validate(new)) == old
