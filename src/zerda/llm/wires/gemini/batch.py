"""Gemini Batch Mode (https://ai.google.dev/gemini-api/docs/batch-mode), for ``llm.batch``.

Up to 20 MB, the requests travel inline: ``client.batches.create(model=...,
src=[InlinedRequest...])``, each ``{"contents", "config", "metadata": {"key": caller id}}``;
google-genai turns them into ``POST /v1beta/models/{model}:batchGenerateContent`` with
``batch.inputConfig.requests`` (https://ai.google.dev/api/batch-api#method:-models.batchgeneratecontent),
converting each config as ``generate_content`` would (system instruction, tools and tool
config move into the request). Past 20 MB ("If the total size of your requests exceeds 20MB,
use a JSONL file", https://ai.google.dev/gemini-api/docs/batch-mode#input-file), or with
``input="file"``, they go in a JSONL file uploaded with ``client.files.upload``, one line
``{"key": caller id, "request": GenerateContentRequest}`` per request, and the job names it
(``src="files/..."``); each request is converted by google-genai's own converter of inline
requests (a private function: see ``_rest_request``).

A job is ``JOB_STATE_PENDING`` / ``RUNNING`` until ``SUCCEEDED``, ``FAILED``, ``CANCELLED`` or
``EXPIRED`` (google-genai renames the API's ``BATCH_STATE_*``); a finished job holds its
answers in ``dest.inlined_responses`` (inline input) or in the file ``dest.file_name`` (file
input, read with ``client.files.download``, one line ``{"key", "response"}`` or ``{"key",
"error"}`` per request): per request a ``GenerateContentResponse`` or an ``error`` (a
google.rpc.Status, whose ``code`` is a gRPC code).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from zerda.llm.batch import BatchStatus, ItemOutcome, State, not_ended, read_result_lines
from zerda.llm.errors import InvalidRequestError, error_from_status, malformed_response
from zerda.llm.wires.gemini import sdk as _gemini_sdk
from zerda.llm.wires.openai.batch import jsonl

if TYPE_CHECKING:
    from zerda.llm.base import BaseLLMInterface

# https://ai.google.dev/gemini-api/docs/batch-mode: inline requests up to 20 MB in all.
INLINE_LIMIT = 20_000_000
INPUTS = ("inline", "file")

# google-genai's JobState values (types.JobState).
_STATES: dict[str, State] = {
    "JOB_STATE_SUCCEEDED": "ended",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "ended",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}

# google.rpc.Code -> HTTP status (https://cloud.google.com/apis/design/errors#handling_errors).
_GRPC_STATUS = {
    1: 499,
    2: 500,
    3: 400,
    4: 504,
    5: 404,
    6: 409,
    7: 403,
    8: 429,
    9: 400,
    10: 409,
    11: 400,
    12: 501,
    13: 500,
    14: 503,
    15: 500,
    16: 401,
}


def map_batch_requests(items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The inline requests: each generate_content request, its caller id in ``metadata``."""
    return [
        {
            "contents": native["contents"],
            "config": _map_config(native["config"]),
            "metadata": {"key": cid},
        }
        for cid, native in items
    ]


def uses_file(items: list[tuple[str, dict[str, Any]]], choice: Any) -> bool:
    """Whether the requests go in a JSONL file: as ``input=`` asks, else when inline they
    would pass the 20 MB the API takes inline."""
    if choice is not None and choice not in INPUTS:
        raise InvalidRequestError(
            f"batch: gemini's input= is 'inline' or 'file', not {choice!r}; nothing was sent"
        )
    if choice is not None:
        return bool(choice == "file")
    return _inline_size(items) > INLINE_LIMIT


def _inline_size(items: list[tuple[str, dict[str, Any]]]) -> int:
    """About the bytes of the inline requests (their JSON: contents and config)."""
    return sum(
        _json_size(native["contents"]) + len(native["config"].model_dump_json(exclude_none=True))
        for _, native in items
    )


def _json_size(value: Any) -> int:
    """About the length of ``value`` as JSON, its bytes counted as the base64 they travel as."""
    if isinstance(value, bytes):
        return (len(value) + 2) // 3 * 4
    if isinstance(value, dict):
        members = [len(str(k)) + 4 + _json_size(v) for k, v in value.items()]
        return sum(members) + 2 * max(len(members) - 1, 0) + 2
    if isinstance(value, list):
        return sum(_json_size(v) for v in value) + 2 * max(len(value) - 1, 0) + 2
    return len(str(value)) + 2


def map_batch_file(items: list[tuple[str, dict[str, Any]]], api_client: Any) -> bytes:
    """The JSONL input file: ``{"key", "request"}`` per request."""
    return jsonl(
        {"key": cid, "request": _rest_request(api_client, native)} for cid, native in items
    )


def _rest_request(api_client: Any, native: dict[str, Any]) -> dict[str, Any]:
    """The GenerateContentRequest JSON of one request, converted as google-genai converts an
    inline request (``batches._InlinedRequest_to_mldev``, then the JSON encoding its
    ``_create`` applies): private functions of google-genai, listed in the wire's table
    (``fastpath.BATCH_FILE_NAMES``); without them such a batch is refused before sending."""
    from google.genai import _common, batches, types

    _require_batch_file_names()

    inline = types.InlinedRequest(contents=native["contents"], config=_map_config(native["config"]))
    converted = batches._InlinedRequest_to_mldev(api_client, inline)
    encoded: Any = _common.encode_unserializable_types(_common.convert_to_dict(converted))
    return dict(encoded["request"])


def _require_batch_file_names() -> None:
    from zerda.llm._fastpath import missing
    from zerda.llm.wires.gemini.fastpath import BATCH_FILE_NAMES

    absent = missing(BATCH_FILE_NAMES)
    if absent:
        names = ", ".join(n.qualified for n in absent)
        raise InvalidRequestError(
            f"a Gemini batch over {INLINE_LIMIT // 1_000_000} MB travels as a JSONL file whose "
            f"lines google-genai's own converter writes, and the installed google-genai lacks "
            f"{names}: upgrade google-genai, or send smaller batches (inline)"
        )


def _map_config(config: Any) -> Any:
    """The request's config less ``http_options``: a per-call timeout means nothing to a job."""
    return config.model_copy(update={"http_options": None})


def map_batch_job(
    items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
) -> dict[str, Any]:
    """``batches.create``'s ``config``: the API requires a ``display_name``
    (https://ai.google.dev/api/batch-api#GenerateContentBatch); ``options`` go over it."""
    return {"display_name": f"zerda batch of {len(items)} requests", **options}


def map_upload(config: dict[str, Any]) -> dict[str, Any]:
    """``files.upload``'s config for the input file (its mime type as the batch-mode docs
    give it)."""
    return {"mime_type": "jsonl", "display_name": str(config["display_name"])}


def map_batch_status(job: Any) -> BatchStatus:
    native = str(getattr(job.state, "value", job.state))
    responses = _responses(job)
    failed = sum(1 for r in responses if r.error is not None or r.response is None)
    return BatchStatus(
        id=str(job.name),
        state=_STATES.get(native, "in_progress"),
        native_status=native,
        total=len(responses),
        succeeded=len(responses) - failed,
        failed=failed,
    )


def _responses(job: Any) -> list[Any]:
    dest = job.dest
    return list(getattr(dest, "inlined_responses", None) or [])


def results_file(job: Any) -> str | None:
    """The results file of an ended job of file input (None for inline input); a job not
    ended has no results yet."""
    if map_batch_status(job).state == "in_progress":
        raise not_done(job)
    name = getattr(job.dest, "file_name", None)
    return name if isinstance(name, str) and name else None


def map_batch_output(job: Any, provider: str) -> dict[str, ItemOutcome]:
    """caller id -> the GenerateContentResponse, or the item's error (inline results; an
    item google-genai refused is its own error: :func:`lenient_job`)."""
    outcomes: dict[str, ItemOutcome] = {}
    for entry in _responses(job):
        key = (entry.metadata or {}).get("key")
        broken = getattr(entry, "broken", None)
        if isinstance(key, str) and broken is not None:
            problem = f"the batch result of {key!r} is not the documented shape ({broken})"
            outcomes[key] = ("error", malformed_response(provider, problem))
        elif isinstance(key, str):
            outcomes[key] = _map_entry(entry.response, entry.error, provider)
    return outcomes


# --- a job google-genai refuses whole ---------------------------------------------------------
#
# batches.get checks the whole job, its inline results included, against google-genai's
# models: one result of another type than documented fails the job's status and every
# result. The job is then read again as JSON, each result checked on its own.


@dataclass
class _Inlined:
    """One inline result of a job read as JSON: what ``map_batch_output`` reads of
    google-genai's InlinedResponse, and why google-genai refused it (``broken``)."""

    metadata: dict[str, Any] | None
    response: Any = None
    error: Any = None
    broken: str | None = None


def lenient_job(data: Any, types: Any) -> SimpleNamespace:
    """A job's JSON (the Operation ``batches.get`` reads) as what :func:`map_batch_status`,
    :func:`results_file` and :func:`map_batch_output` read of a BatchJob: its name, its
    state (google-genai's name: ``BATCH_STATE_*`` is ``JOB_STATE_*``), its results file or
    its inline results, each checked on its own."""
    data = data if isinstance(data, dict) else {}
    meta = _object(data.get("metadata"))
    output = _object(meta.get("output"))
    inline = output.get("inlinedResponses")
    items = inline.get("inlinedResponses") if isinstance(inline, dict) else None
    dest = SimpleNamespace(
        file_name=output.get("responsesFile"),
        inlined_responses=[_inlined(i, types) for i in items or [] if isinstance(i, dict)],
    )
    state = str(meta.get("state") or "")
    name = data.get("name") or meta.get("name")
    return SimpleNamespace(name=name, state=state.replace("BATCH_STATE_", "JOB_STATE_"), dest=dest)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _inlined(item: dict[str, Any], types: Any) -> _Inlined:
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else None
    try:
        response, error = _validated(item, types)
    except ValueError as exc:  # pydantic's ValidationError
        return _Inlined(metadata, broken=str(exc).splitlines()[0])
    return _Inlined(metadata, response, error)


def _validated(entry: dict[str, Any], types: Any) -> tuple[Any, Any]:
    """(the GenerateContentResponse, the JobError) of a result in the API's JSON, checked
    by google-genai's types (a ValueError when a field is not of its type)."""
    raw, raw_error = entry.get("response"), entry.get("error")
    response = None if raw is None else types.GenerateContentResponse.model_validate(raw)
    error = None if raw_error is None else types.JobError.model_validate(raw_error)
    return response, error


def refused_by_models(exc: BaseException) -> bool:
    """Whether ``exc`` is google-genai's models refusing an answer (pydantic's error)."""
    from pydantic import ValidationError  # google-genai's own dependency, loaded by now

    return isinstance(exc, ValidationError)


def job_path(batch_id: str) -> str:
    """The job's path under the API's version (``batches/{id}``, as batches.get builds it)."""
    return batch_id if batch_id.startswith("batches/") else f"batches/{batch_id}"


def map_batch_file_output(text: str, types: Any, provider: str) -> dict[str, ItemOutcome]:
    """caller id -> the response, or the item's error, from a results file (``types``:
    google.genai.types, which reads the API's camelCase JSON); a broken line is its own
    id's error (:func:`zerda.llm.batch.read_result_lines`)."""
    return read_result_lines(text, "key", provider, lambda e: _map_file_entry(e, types, provider))


def _map_file_entry(entry: dict[str, Any], types: Any, provider: str) -> ItemOutcome:
    """One line, ``{"key", "response"}`` or ``{"key", "error"}``."""
    return _map_entry(*_validated(entry, types), provider)


def _map_entry(response: Any, error: Any, provider: str) -> ItemOutcome:
    if error is None and response is not None:
        return ("ok", response)
    status = _GRPC_STATUS.get(getattr(error, "code", None) or 2, 500)
    message = str(getattr(error, "message", None) or "the batch returned no response")
    return ("error", error_from_status(status, message, provider))


def not_done(job: Any) -> InvalidRequestError:
    return not_ended(str(job.name), str(getattr(job.state, "value", job.state)))


# --- the native calls (BatchProtocol), over an interface's SDK clients ---------------------


def job_parts(
    items: list[tuple[str, dict[str, Any]]], options: dict[str, Any], api_client: Any
) -> tuple[Any, Any, Any]:
    """(the job's config, its source, the upload config) for ``batches.create``: the inline
    requests and no upload, or the JSONL file's bytes and the config to upload them with."""
    options = dict(options)
    items = sdk_items(items)
    use_file = uses_file(items, options.pop("input", None))
    config = map_batch_job(items, options)
    if not use_file:
        return config, map_batch_requests(items), None
    data = map_batch_file(items, api_client)
    return config, data, map_upload(config)


def sdk_items(items: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """Batch requests as ``generate_content``'s keyword arguments (Batch Mode goes through
    the SDK's own batch converters); a request built off the fast path already is."""
    return [
        (
            cid,
            _gemini_sdk.sdk_kwargs(native["model"], native["body"]) if "body" in native else native,
        )
        for cid, native in items
    ]


class GeminiBatch:
    """Batch Mode's calls (``files``, ``batches``) for a Gemini interface: its
    :class:`~zerda.llm.interface.batch.BatchProtocol`."""

    def __init__(self, llm: BaseLLMInterface) -> None:
        self.llm = llm

    def submit(self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]) -> str:
        client = self.llm.client
        config, src, upload = job_parts(items, options, client._api_client)
        if upload is not None:
            src = client.files.upload(file=io.BytesIO(src), config=upload).name
        return str(client.batches.create(model=self.llm.model, src=src, config=config).name)

    async def submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        client = self.llm.async_client
        config, src, upload = job_parts(items, options, client._api_client)
        if upload is not None:
            src = (await client.files.upload(file=io.BytesIO(src), config=upload)).name
        job = await client.batches.create(model=self.llm.model, src=src, config=config)
        return str(job.name)

    def _job(self, batch_id: str) -> Any:
        """The job, as batches.get reads it, else (a result google-genai refuses) as
        :func:`lenient_job` reads its JSON, fetched with the client's own API client: a
        private name of the fast path's table; off the fast path the refusal stands."""
        client = self.llm.client
        try:
            return client.batches.get(name=batch_id)
        except ValueError as exc:
            if not (self.llm._fast and refused_by_models(exc)):
                raise
        answer = client._api_client.request("get", job_path(batch_id), {}, None)
        return lenient_job(json.loads(answer.body or "{}"), self.llm.sdk.types)  # type: ignore[union-attr]

    async def _job_async(self, batch_id: str) -> Any:
        client = self.llm.async_client
        try:
            return await client.batches.get(name=batch_id)
        except ValueError as exc:
            if not (self.llm._fast and refused_by_models(exc)):
                raise
        answer = await client._api_client.async_request("get", job_path(batch_id), {}, None)
        return lenient_job(json.loads(answer.body or "{}"), self.llm.sdk.types)  # type: ignore[union-attr]

    def poll(self, batch_id: str) -> BatchStatus:
        return map_batch_status(self._job(batch_id))

    async def poll_async(self, batch_id: str) -> BatchStatus:
        return map_batch_status(await self._job_async(batch_id))

    def fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        job = self._job(batch_id)
        name = results_file(job)
        if name is None:
            return map_batch_output(job, self.llm.provider)
        text = self.llm.client.files.download(file=name).decode("utf-8", "replace")
        return map_batch_file_output(text, self.llm.sdk.types, self.llm.provider)  # type: ignore[union-attr]

    async def fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        job = await self._job_async(batch_id)
        name = results_file(job)
        if name is None:
            return map_batch_output(job, self.llm.provider)
        data = await self.llm.async_client.files.download(file=name)
        text = data.decode("utf-8", "replace")
        return map_batch_file_output(text, self.llm.sdk.types, self.llm.provider)  # type: ignore[union-attr]

    def cancel(self, batch_id: str) -> BatchStatus:
        self.llm.client.batches.cancel(name=batch_id)  # answers nothing: the job says where it is
        return self.poll(batch_id)

    async def cancel_async(self, batch_id: str) -> BatchStatus:
        await self.llm.async_client.batches.cancel(name=batch_id)
        return await self.poll_async(batch_id)
