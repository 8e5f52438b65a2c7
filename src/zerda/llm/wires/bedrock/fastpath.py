"""Bedrock's fast path (DESIGN §22): the request body encoded once, the validation memo, the
answer and the frequent stream events read without botocore's parser walking their shapes.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from zerda.llm import _exact, _lazy
from zerda.llm._fastpath import PrivateName

if TYPE_CHECKING:
    from botocore import validate as _validate

    from zerda.llm import _body_json
else:  # with the first request (building the client needs neither)
    _validate = _lazy.module("botocore.validate", __name__, "_validate")
    _body_json = _lazy.module("zerda.llm._body_json", __name__, "_body_json")

_READERS = "the compiled readers of the answer and the plain stream events walk the model"
# Every botocore name below that boto3's documentation does not give (DESIGN §22). Missing
# one, the interface sends through converse / converse_stream as documented, with
# botocore's own validation, serializer and parser.
PRIVATE_NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "botocore.validate",
        "validate_parameters",
        "checks what the caller adds to a request sent with parameter_validation=False",
        keywords=("params", "shape"),
    ),
    PrivateName("botocore.client", "ClientMeta.service_model", "the Converse model: " + _READERS),
    PrivateName("botocore.model", "ServiceModel.operation_model", _READERS),
    PrivateName("botocore.model", "OperationModel.input_shape", "the validator's shape"),
    PrivateName("botocore.model", "OperationModel.output_shape", _READERS),
    PrivateName(
        "botocore.model",
        "Shape.__init__",
        _READERS + " (by type, recursive shapes by name)",
        assigns=("name", "type_name"),
    ),
    PrivateName("botocore.model", "Shape.serialization", _READERS + " (wire names, locations)"),
    PrivateName("botocore.model", "StructureShape.members", _READERS),
    PrivateName("botocore.model", "StructureShape.is_document_type", _READERS),
    PrivateName("botocore.model", "StructureShape.is_tagged_union", _READERS),
    PrivateName("botocore.model", "ListShape.member", _READERS),
    PrivateName("botocore.model", "MapShape.key", _READERS),
    PrivateName("botocore.model", "MapShape.value", _READERS),
    PrivateName(
        "botocore.client",
        "BaseClient._make_api_call",
        "emits provide-client-params and before-call with one context, where the prebuilt "
        "body waits to be spliced into the serialized request's 'body'",
    ),
    PrivateName(
        "botocore.endpoint",
        "convert_to_response_dict",
        "before-parse's response_dict: its 'status_code' and 'body' are read",
    ),
    PrivateName(
        "botocore.endpoint",
        "Endpoint._do_get_response",
        "emits before-parse with customized_response_dict, filled with the answer read and "
        "merged by botocore into its own",
    ),
    PrivateName(
        "botocore.eventstream",
        "EventStream.__init__",
        "the stream's frames (read instead of EventStream.__iter__) and the events' shapes",
        assigns=("_event_generator", "_output_shape"),
    ),
    PrivateName(
        "botocore.eventstream",
        "EventStream._parse_event",
        "reads the other events",
        keywords=("event",),
    ),
    PrivateName(
        "botocore.eventstream",
        "EventStreamMessage.__init__",
        "an event's type and JSON",
        assigns=("headers", "payload"),
    ),
)

# A call's own timeout= as its request's read timeout (timeouts.py), on the same client: the
# names botocore reads it through (the per-invocation read timeouts of botocore PR #3770).
# Missing one, a call with its own timeout uses a client built with it (a few kept).
CALL_TIMEOUT_NAMES: tuple[PrivateName, ...] = (
    PrivateName(
        "botocore.httpsession",
        "URLLib3Session._get_request_timeout",
        "sends a request with the read timeout its context holds ('read_timeout')",
        keywords=("request",),
    ),
    PrivateName(
        "botocore.awsrequest",
        "AWSPreparedRequest.__init__",
        "the request carries the context provide-client-params filled",
        keywords=("context",),
        assigns=("context",),
    ),
)

# The fields Zerda builds from the checked history, too long for botocore to walk again.
_ZERDA_BUILT = ("messages", "system")


def _check_native(client: Any, operation: str, kwargs: dict[str, Any]) -> None:
    """For a client built by Zerda (``parameter_validation=False``): the request checked by
    botocore's own validator as ``converse`` would check it, bar the history and system
    blocks Zerda built (one message stands for them): unknown or mistyped fields the
    caller passed are refused with botocore's ParamValidationError, before sending.

    What passed once is not walked again (:data:`_VALIDATED`): an agent loop sends the same
    tools, options and first message every turn, and their walk was a quarter of Zerda's
    own CPU in a short call."""
    shape = client.meta.service_model.operation_model(operation).input_shape
    params = {k: v for k, v in kwargs.items() if k not in _ZERDA_BUILT}
    params["messages"] = sample = kwargs.get("messages", [])[:1]
    key = _fingerprint(params) if _holds_no_blob(sample) else None
    if key is not None and (shape, key) in _VALIDATED:
        return
    _validate.validate_parameters(params, shape)
    if key is not None:
        if len(_VALIDATED) >= _VALIDATED_MAX:
            _VALIDATED.clear()
        _VALIDATED[shape, key] = None


# The (input shape, fingerprint) of the requests botocore's validator passed; bounded.
_VALIDATED: dict[tuple[Any, bytes], None] = {}
_VALIDATED_MAX = 256


def _fingerprint(params: dict[str, Any]) -> bytes | None:
    """A digest telling apart whatever botocore's validator tells apart
    (:func:`zerda.llm._exact.fingerprint`); None for a request holding anything but builtin
    values of exact types: those are validated on every call. Buffers are written as bytes,
    which botocore takes in blob members only: the sample message checked by
    :func:`_holds_no_blob` has none, and no other field of the request does (a canary test
    walks the model), so no request holding a buffer passes and none is remembered."""
    return _exact.fingerprint(params)


# The content blocks with no blob member anywhere below them (checked by a canary test),
# and the toolResult content blocks likewise: media and redacted reasoning hold bytes.
_BLOBLESS_BLOCKS = frozenset({"text", "toolUse", "toolResult", "cachePoint"})
_BLOBLESS_RESULT_BLOCKS = frozenset({"text", "json"})


def _holds_no_blob(messages: Any) -> bool:
    """Whether the messages (the validator's sample) hold only the blocks of
    :data:`_BLOBLESS_BLOCKS`: no bytes to tell apart from other buffers, and none to copy
    (an 8 MiB image is validated instead: its walk does not read the bytes)."""
    for message in messages:
        content = message.get("content") if type(message) is dict else None
        if type(content) is not list:
            return False
        for block in content:
            if type(block) is not dict or not block.keys() <= _BLOBLESS_BLOCKS:
                return False
            result = block.get("toolResult")
            if result is None:
                continue
            inner = result.get("content") if type(result) is dict else None
            if type(inner) is not list or not all(
                type(b) is dict and b.keys() <= _BLOBLESS_RESULT_BLOCKS for b in inner
            ):
                return False
    return True


# --- the body encoded once (the fast path) ------------------------------------------------
#
# botocore's serializer rebuilds every request from its shapes before ``json.dumps``: at
# 1,000 tool round trips that walk costs several times the encoding itself, and even a
# short request's toolConfig costs more to walk than the rest of the call's serialization.
# On the clients Zerda builds the request is checked first (the history by Zerda,
# everything else by botocore's validator: _check_native), and then the walk changes
# nothing json.dumps would not write alike but blobs (raw bytes, sent as base64: only the
# history and system blocks hold any) and inferenceConfig's two floats (botocore writes an
# infinite or NaN one as a string): no other member of the body is a blob, a timestamp, a
# float or renamed (a canary test walks the model). So the body fields are encoded here,
# once, and travel beside the other arguments under _PREBUILT; two handlers of botocore's
# documented event system (https://boto3.amazonaws.com/v1/documentation/api/latest/guide/
# events.html) take them out before serialization and put them at the head of the body
# botocore serialized from the rest (modelId, which goes in the URL, and whatever follows
# an inferenceConfig with an odd float). Endpoint, headers, signing (of the whole body),
# retries, errors, pool and the event-stream decoder stay botocore's.
_PREBUILT = "zerda_prebuilt_json"
_OPERATIONS = ("Converse", "ConverseStream")


class _Blobs:
    """The ``default`` of the prebuilt body's JSON encoder, which calls it for each blob
    (bytes): written as botocore's serializer writes one (``_get_base64``: base64 text).
    The media part's own text, when its :class:`_Source` carries it (found once, at the
    first blob: a history without media costs nothing), is not written by the encoder: a
    placeholder stands for it, and the body is spliced around it (:mod:`zerda.llm._body_json`),
    so no JSON string of the image's text is made and no CPU spent escaping it."""

    def __init__(self, head: dict[str, Any]) -> None:
        self._head = head
        self._texts: dict[int, str] | None = None
        self.found: list[tuple[str, str]] = []

    def __call__(self, value: Any) -> str:
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        if self._texts is None:
            self._texts = _media_texts(self._head)
        text = self._texts.get(id(value))  # the bytes are alive in head: ids are stable
        if text is None:
            return base64.b64encode(value).decode("utf-8")
        self.found.append(("", text))
        return _body_json.PLACEHOLDER


def _media_texts(head: dict[str, Any]) -> dict[int, str]:
    """``id(bytes)`` -> base64 text for each :class:`_Source` of Zerda's blocks: media
    blocks sit in a message's content, a toolResult's content and the system blocks."""
    from zerda.llm.wires.bedrock.map import _Source  # loaded by the request mapping

    todo = [b for m in head.get("messages") or () for b in m.get("content") or ()]
    todo += head.get("system") or ()
    texts: dict[int, str] = {}
    while todo:
        block = todo.pop()
        if not isinstance(block, dict):
            continue
        result = block.get("toolResult")
        if isinstance(result, dict):
            todo += result.get("content") or ()
        for value in block.values():
            source = value.get("source") if isinstance(value, dict) else None
            if isinstance(source, _Source):
                texts[id(source["bytes"])] = source.text
    return texts


def _split_prebuilt(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` (checked) with the body fields replaced by their JSON text, as botocore's
    serializer and ``json.dumps`` write them: the fields in their order up to an
    inferenceConfig whose floats botocore would rewrite; ``kwargs`` as they are when no
    field leads the body (modelId, the URL's, aside) or one is not plain JSON."""
    head: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key != "modelId" and all(k == "modelId" for k in rest) and _writes_alike(key, value):
            head[key] = value
        else:
            rest[key] = value
    if not head:
        return kwargs
    blobs = _Blobs(head)
    try:
        # botocore's json.dumps settings (the defaults); no circular check: the request
        # was checked (a circular value fails botocore's validator first). ASCII only
        # (ensure_ascii), so the bytes are the text's.
        encoder = json.JSONEncoder(default=blobs, check_circular=False)
        written = encoder.encode(head).encode("ascii")
    except (TypeError, ValueError):  # not plain JSON: botocore serializes it all
        return kwargs
    pieces = _body_json.splice_payloads(written, blobs.found)
    if pieces is None:  # a text held the placeholder: botocore serializes it all
        return kwargs
    rest[_PREBUILT] = pieces
    return rest


def _writes_alike(key: str, value: Any) -> bool:
    """Whether json.dumps writes the field as botocore's serializer does: all do but an
    inferenceConfig holding a temperature or topP that is not a finite float or int
    (botocore writes ``Infinity`` and ``NaN`` as strings, a Decimal as a float)."""
    if key != "inferenceConfig" or not isinstance(value, dict):
        return True
    return all(
        type(value[k]) in (int, float) and math.isfinite(value[k])
        for k in ("temperature", "topP")
        if k in value
    )


def _take_prebuilt(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    """``provide-client-params``: the prebuilt text kept in the call's context, out of the
    parameters botocore serializes."""
    text = params.pop(_PREBUILT, None)
    if text is not None:
        context[_PREBUILT] = text


def _splice_prebuilt(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    """``before-call``: the prebuilt fields at the head of the serialized body (both are
    ``json.dumps`` objects: the result is the text of one dict holding both)."""
    head = context.pop(_PREBUILT, None)
    if head is None:
        return
    body = params.get("body") or b"{}"
    if body != b"{}":
        *before, last = head.pieces
        head = _body_json.Body(
            [*before, last[:-1], b", ", body[1:]]
        )  # the last piece is bytes: "...}"
    # Written a slice at a time into one buffer: an image's text is never held twice.
    params["body"] = head.joined()


def _register_prebuilt(client: Any) -> None:
    events = client.meta.events
    for operation in _OPERATIONS:
        events.register(f"provide-client-params.bedrock-runtime.{operation}", _take_prebuilt)
        events.register(f"before-call.bedrock-runtime.{operation}", _splice_prebuilt)


# --- the response read once ---------------------------------------------------------------
#
# botocore's rest-json parser walks a Converse answer member by member against its shapes
# after json.loads: for a short answer that walk costs six times the decoding. On the
# clients Zerda builds, a ``before-parse`` handler (botocore's event system, as above)
# decodes a 200 answer's body itself and builds from it, with readers compiled once from
# the same output shape, the very dicts botocore's parser returns (members in the model's
# order, null and unknown keys left out, integers, booleans and floats as its handlers
# make them, documents as they are); they go in the customized response botocore merges
# into its own, and the body it then parses is empty (its ResponseMetadata is still its
# own). An answer holding anything those readers leave to botocore (a blob, a timestamp,
# a value of another type than the member's, a union that is not one known member, a body
# that is not a JSON object) is parsed by botocore as it was, errors included.


class _NotPlain(Exception):
    """A value the compiled readers leave to botocore's parser."""


_Reader = Callable[[Any], Any]


def _read_integer(value: Any) -> Any:
    if type(value) is not int:  # botocore's int() of a string, a float or a bool
        raise _NotPlain
    return value


def _read_boolean(value: Any) -> Any:
    if type(value) is not bool:  # botocore's ensure_boolean of a string
        raise _NotPlain
    return value


def _read_float(value: Any) -> Any:
    if type(value) is not float and type(value) is not int:
        raise _NotPlain
    try:
        return float(value)  # as botocore's _handle_float: an int becomes a float
    except OverflowError:  # an int beyond a float: botocore's to raise
        raise _NotPlain from None


def _read_other(value: Any) -> Any:
    raise _NotPlain  # blobs (base64-decoded) and timestamps: botocore's


def _compile_reader(shape: Any, memo: dict[str, Any]) -> _Reader | None:
    """The reader of ``shape``'s values, as botocore's RestJSONParser reads them; None for
    a value botocore returns as it is (strings, documents)."""
    kind = shape.type_name
    if kind == "string":
        return _read_other if shape.serialization.get("jsonvalue") else None
    if kind in ("integer", "long"):
        return _read_integer
    if kind == "boolean":
        return _read_boolean
    if kind in ("float", "double"):
        return _read_float
    if kind == "list":
        return _list_reader(_compile_reader(shape.member, memo))
    if kind == "map":
        key, value = _compile_reader(shape.key, memo), _compile_reader(shape.value, memo)
        return _read_other if key is not None else _map_reader(value)
    if kind != "structure":
        return _read_other
    if shape.is_document_type:
        return None
    if shape.name in memo:  # a recursive shape: read through its cell
        cell = memo[shape.name]
        return lambda value: cell[0](value)
    memo[shape.name] = cell = []
    members = tuple(
        (member.serialization.get("name", name), name, _compile_reader(member, memo))
        for name, member in shape.members.items()
    )
    reader = _union_reader(members) if shape.is_tagged_union else _structure_reader(members)
    cell.append(reader)
    return reader


def _list_reader(item: _Reader | None) -> _Reader:
    def read(value: Any) -> Any:
        if type(value) is not list:
            raise _NotPlain
        if item is None:
            return list(value)
        return [None if v is None else item(v) for v in value]

    return read


def _map_reader(item: _Reader | None) -> _Reader:
    def read(value: Any) -> Any:
        if type(value) is not dict:
            raise _NotPlain
        return {k: v if item is None else item(v) for k, v in value.items()}

    return read


_Members = tuple[tuple[str, str, "_Reader | None"], ...]


def _structure_reader(members: _Members) -> _Reader:
    def read(value: Any) -> Any:
        if type(value) is not dict:
            raise _NotPlain
        out = {}
        for key, name, reader in members:
            v = value.get(key)
            if v is not None:
                out[name] = v if reader is None else reader(v)
        return out

    return read


def _union_reader(members: _Members) -> _Reader:
    """A tagged union: one known member set (anything else is botocore's to refuse or to
    report as SDK_UNKNOWN_MEMBER), read as the structure it also is."""
    by_key = {key: (name, reader) for key, name, reader in members}

    def read(value: Any) -> Any:
        if type(value) is not dict:
            raise _NotPlain
        tags = [k for k, v in value.items() if v is not None and k != "__type"]
        if len(tags) != 1 or tags[0] not in by_key:
            raise _NotPlain
        name, reader = by_key[tags[0]]
        v = value[tags[0]]
        return {name: v if reader is None else reader(v)}

    return read


def _response_reader(shape: Any) -> _Reader:
    """The reader of a whole answer: botocore reads members located in headers or the
    status code apart from the body (Converse's have none; if one appears, botocore
    reads it all)."""
    if any(m.serialization.get("location") for m in shape.members.values()):
        return _read_other
    reader = _compile_reader(shape, {})
    assert reader is not None  # a structure
    return reader


def _read_response(
    reader: _Reader,
    response_dict: dict[str, Any],
    customized_response_dict: dict[str, Any],
    **_: Any,
) -> None:
    """``before-parse``: a 200 answer's members read from its JSON (see above)."""
    body = response_dict.get("body")
    if response_dict.get("status_code") != 200 or type(body) is not bytes or not body:
        return
    try:  # decoded as botocore's _parse_body_as_json decodes it
        parsed = reader(json.loads(body.decode("utf-8")))
    except Exception:  # noqa: BLE001 - not plain, undecodable, too deep, a float too big: botocore's
        return
    customized_response_dict.update(parsed)
    response_dict["body"] = b""


def _register_reader(client: Any) -> None:
    """The answer reader of ``converse``, compiled once per client from its model, on the
    client's first answer: compiling walks the ~280 shapes of the output, which building
    the client (import + client, benchmarks/bench_imports.py) need not pay."""
    model = client.meta.service_model
    compiled: list[_Reader] = []

    def handler(
        response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **kwargs: Any
    ) -> None:
        if not compiled:  # two threads may both compile: the same reader, harmless
            compiled.append(_response_reader(model.operation_model("Converse").output_shape))
        _read_response(compiled[0], response_dict, customized_response_dict, **kwargs)

    client.meta.events.register("before-parse.bedrock-runtime.Converse", handler)


def _read_events(stream: Any) -> Iterator[dict[str, Any]]:
    """The events of botocore's ``EventStream``, as its ``__iter__`` yields them: botocore
    still reads and checks every frame (prelude, headers, CRCs), but the frequent small
    events (:data:`_PLAIN_EVENTS`: 19 of a short answer's 22) skip its parser's walk of
    their shapes, a tenth of a stream's CPU; any other message (exceptions included) is
    botocore's own ``_parse_event``. A stream without those private members (another
    botocore, a stand-in) is iterated as it is."""
    frames = getattr(stream, "_event_generator", None)
    parse = getattr(stream, "_parse_event", None)
    shape = getattr(stream, "_output_shape", None)
    if frames is None or parse is None or shape is None:
        yield from stream
        return
    readers = _event_readers(shape)
    for message in frames:
        event = _plain_event(message, readers)
        if event is None:
            event = parse(message)
        if event:
            yield event


# The events read without botocore's parser: the frequent ones of a short answer.
_PLAIN_EVENTS = ("messageStart", "contentBlockDelta", "contentBlockStop")
_EVENT_READERS: dict[int, tuple[Any, dict[str, _Reader]]] = {}
_EVENT_READERS_MAX = 16


def _event_readers(shape: Any) -> dict[str, _Reader]:
    """The readers of :data:`_PLAIN_EVENTS`' payloads (the answer's readers,
    :func:`_compile_reader`, for their shapes), compiled once per stream shape; an event
    with a member botocore reads from a header or as the raw payload has none."""
    entry = _EVENT_READERS.get(id(shape))
    if entry is not None and entry[0] is shape:
        return entry[1]
    readers: dict[str, _Reader] = {}
    for name in _PLAIN_EVENTS:
        event = shape.members.get(name)
        if event is None or any(m.serialization for m in event.members.values()):
            continue
        reader = _compile_reader(event, {})
        if reader is not None:
            readers[name] = reader
    if len(_EVENT_READERS) >= _EVENT_READERS_MAX:
        _EVENT_READERS.clear()
    _EVENT_READERS[id(shape)] = (shape, readers)
    return readers


def _plain_event(message: Any, readers: dict[str, _Reader]) -> dict[str, Any] | None:
    """The event botocore's parser makes of a plain event message (``{"contentBlockDelta":
    {"delta": {"text": "Hi"}, "contentBlockIndex": 0}}``); None for any other message, or
    one whose payload the readers leave to botocore (as the answer's: members in the
    model's order, nulls and keys outside the model, Bedrock's "p" padding, left out)."""
    headers = message.headers
    name = headers.get(":event-type")
    reader = readers.get(name)
    if reader is None or headers.get(":message-type") != "event":
        return None
    try:  # decoded as botocore does (_parse_body_as_json), never as UTF-16 or -32
        return {name: reader(json.loads(message.payload.decode("utf-8")))}
    except (ValueError, RecursionError, _NotPlain):
        return None
