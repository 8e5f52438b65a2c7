"""AWS Bedrock through the Converse API (boto3 ``bedrock-runtime``): ``converse`` and
``converse_stream``.

Bedrock signs requests with the AWS credential chain, so there is no API key: ``region`` (or
``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile's region) and optional explicit
credentials or ``profile``. boto3 has no async client: ``generate_async`` and
``stream_async`` run the blocking calls in a thread pool owned by the interface
(``pool_size`` threads), so the event loop never blocks and concurrency is not capped by
asyncio's default executor. botocore's retries are off: Zerda retries (DESIGN.md §5), as
botocore's standard mode skips 408 and 409. See docs/providers/bedrock.md.
"""

from __future__ import annotations

import base64
import collections
import functools
import hashlib
import itertools
import json
import logging
import marshal
import math
import os
import re
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from zerda.llm._request import split_timeout
from zerda.llm._retry import retry_after_from_headers
from zerda.llm._strict_schema import to_strict_schema
from zerda.llm.base import BaseLLMInterface, Request, Secret, signature_options, tool_output_text
from zerda.llm.batch import BatchStatus, ItemOutcome
from zerda.llm.errors import (
    AuthenticationError,
    ConnectionError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    TimeoutError,
    ZerdaError,
    error_from_status,
    is_retryable_status,
    malformed_response,
)
from zerda.llm.parts import b64decode, is_parts
from zerda.llm.reasoning import Plan
from zerda.llm.tools import parse_bedrock_tool_calls, to_bedrock_tools
from zerda.llm.usage import make_usage, plus
from zerda.llm.wires.bedrock import batch as _batch_bedrock

if TYPE_CHECKING:
    import asyncio

    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec

DEFAULT_POOL_SIZE = 64
# Bedrock generations often run past botocore's 60 s default read timeout.
DEFAULT_READ_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 60.0
# maxTokens sent on top of a thinking budget when the call gives none (the budget must be
# below maxTokens).
DEFAULT_MAX_TOKENS = 4096


_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
}

# botocore ClientError codes (lower-cased: converse-stream's in-stream exceptions are
# camelCase, e.g. "throttlingException") -> error class.
_ERROR_CODES: dict[str, type[ZerdaError]] = {
    "throttlingexception": RateLimitError,
    "toomanyrequestsexception": RateLimitError,
    "servicequotaexceededexception": RateLimitError,
    "validationexception": InvalidRequestError,
    "accessdeniedexception": PermissionDeniedError,
    "resourcenotfoundexception": NotFoundError,
    "modeltimeoutexception": TimeoutError,
    "serviceunavailableexception": ServerError,
    "internalserverexception": ServerError,
    "modelerrorexception": ServerError,
    "modelnotreadyexception": ServerError,
    "modelstreamerrorexception": ServerError,
    "unrecognizedclientexception": AuthenticationError,
    "invalidsignatureexception": AuthenticationError,
    "incompletesignatureexception": AuthenticationError,
    "expiredtokenexception": AuthenticationError,
    "invalidclienttokenid": AuthenticationError,
    "missingauthenticationtokenexception": AuthenticationError,
}


class AWSInterface(BaseLLMInterface):
    """AWS Bedrock (Converse). Options beyond the common ones: ``region``,
    ``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``, ``profile``
    and ``pool_size`` (threads for the async methods, default 64)."""

    provider = "bedrock"
    provider = "bedrock"
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
    stream_final_event = "messageStop"
    _live_attributes = (
        *BaseLLMInterface._live_attributes,
        "_session",
        "_pool",
        "_timeout_clients",
        "_service_clients",
    )

    def __init__(
        self,
        model: str | None = None,
        *,
        region: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        profile: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        endpoint_urls: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        if options.get("api_key") is not None:
            raise ValueError(
                "AWSInterface signs requests with AWS credentials, not an api_key: pass "
                "aws_access_key_id/aws_secret_access_key or profile=, or use the AWS "
                "credential chain (a Bedrock API key goes in AWS_BEARER_TOKEN_BEDROCK)"
            )
        if isinstance(pool_size, bool) or not isinstance(pool_size, int):
            raise TypeError(f"pool_size must be an int, not {type(pool_size).__name__}")
        if pool_size < 1:
            raise ValueError("pool_size must be at least 1")
        super().__init__(model, **options)
        self.profile = profile
        self.pool_size = pool_size
        self.endpoint_urls = _check_endpoint_urls(endpoint_urls)
        self._access_key_id = aws_access_key_id
        # Explicit credentials travel in a pickle; the credential chain's are found again
        # by the session rebuilt in the process that loads it.
        self._credentials = tuple(
            Secret(s) if s else None for s in (aws_secret_access_key, aws_session_token)
        )
        self._secrets = [Secret(s) for s in (aws_secret_access_key, aws_session_token) if s]
        for secret in self._secrets:
            _LOG_REDACTOR.add(secret.reveal())
            weakref.finalize(self, _LOG_REDACTOR.discard, secret.reveal())
        self._session: Any = None
        self._timeout_clients: dict[float, Any] = {}  # per-call timeouts, see _client_for
        self._service_clients: dict[str, Any] = {}  # llm.batch's bedrock and s3 clients
        self.region = region or getattr(getattr(self._client, "meta", None), "region_name", None)
        if self._client is None:
            self._session = self._make_session(aws_secret_access_key, aws_session_token)
            self.region = self._resolve_region(region)
        self._pool = self._make_pool()

    def _restore_live(self) -> None:
        super()._restore_live()
        secret, token = (c.reveal() if c else None for c in self._credentials)
        self._session = self._make_session(secret, token)
        self._timeout_clients = {}
        self._service_clients = {}
        self._pool = self._make_pool()

    def _make_pool(self) -> ThreadPoolExecutor:
        # Threads start on the first async call, not here.
        return ThreadPoolExecutor(max_workers=self.pool_size, thread_name_prefix="zerda-bedrock")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, region={self.region!r}, "
            f"base_url={self.base_url!r})"
        )

    __str__ = __repr__

    # --- clients, built once ------------------------------------------------------------

    def _make_session(self, secret_key: str | None, session_token: str | None) -> Any:
        return self.sdk.session.Session(  # type: ignore[union-attr]
            aws_access_key_id=self._access_key_id,
            aws_secret_access_key=secret_key,
            aws_session_token=session_token,
            profile_name=self.profile,
        )

    def _resolve_region(self, region: str | None) -> str:
        """The region option, else AWS_REGION, else AWS_DEFAULT_REGION or the profile's.

        No silent default: a request sent to a region the caller did not choose would be
        billed, and governed, there."""
        found = region or os.environ.get("AWS_REGION") or self._session.region_name
        if not found:
            raise ValueError(
                "AWSInterface needs a region: pass region=..., set AWS_REGION or "
                "AWS_DEFAULT_REGION, or configure one in your AWS profile"
            )
        return str(found)

    def _option_names(self) -> tuple[str, frozenset[str] | None]:
        """Other options go to boto3's ``Session.client()``, less what Zerda passes itself."""
        sdk: Any = self.sdk
        filled = {"service_name", "region_name", "endpoint_url", "aws_access_key_id"}
        filled |= {"aws_secret_access_key", "aws_session_token"}
        return "boto3 Session.client()", signature_options(sdk.session.Session.client, filled)

    def _config(self, timeout: float | None = None) -> Any:
        from botocore.config import Config

        timeout = timeout if timeout is not None else self.timeout
        return Config(
            # One attempt: Zerda retries (see _retry_delay).
            retries={"total_max_attempts": 1, "mode": "standard"},
            read_timeout=timeout if timeout is not None else DEFAULT_READ_TIMEOUT,
            connect_timeout=timeout if timeout is not None else DEFAULT_CONNECT_TIMEOUT,
            # Every thread of the pool may hold a connection at once.
            max_pool_connections=max(10, self.pool_size),
            # The request is Zerda's, built from a checked history: botocore's walk of all
            # of it (half of converse()'s CPU for a long history) is skipped, and what the
            # caller adds is still checked by botocore's validator (_check_native).
            parameter_validation=False,
        )

    def _make_client(self, timeout: float | None = None) -> Any:
        """Other keyword options go to ``session.client(...)``; a botocore ``config=`` is
        merged over Zerda's (its settings win)."""
        extra = dict(self.options)
        config = self._config(timeout)
        if extra.get("config") is not None:
            config = config.merge(extra.pop("config"))
        # botocore's client cannot say whether it validates (meta.config drops the setting).
        self._checks_native = not config.parameter_validation
        client = self._session.client(
            "bedrock-runtime",
            region_name=self.region,
            endpoint_url=self.base_url,
            config=config,
            **extra,
        )
        if self._checks_native:
            _register_prebuilt(client)
        _register_reader(client)
        return client

    def _make_async_client(self) -> Any:
        return self.client

    @property
    def async_client(self) -> Any:
        """The same client: boto3 has no async client, and its clients are thread-safe."""
        return self.client

    def _client_for(self, timeout: float | None) -> Any:
        """The client for a call's timeout. botocore takes timeouts per client, not per
        call (https://docs.aws.amazon.com/botocore/latest/reference/config.html): a client
        built with that read and connect timeout, kept for the next call with the same."""
        if timeout is None or timeout == self.timeout:
            return self.client
        self._check_open()
        with self._lock:
            if timeout not in self._timeout_clients:
                if self._session is None:
                    raise InvalidRequestError(
                        "timeout=: botocore sets timeouts per client, and the client= passed "
                        "in is the caller's; build it with botocore.config.Config(read_timeout=...)"
                    )
                self._timeout_clients[timeout] = self._make_client(timeout)
            return self._timeout_clients[timeout]

    def _close_resources(self) -> None:
        """Closes the per-timeout clients and stops the async methods' thread pool (idle
        threads exit; a call running in one finishes first)."""
        with self._lock:
            clients, self._timeout_clients = list(self._timeout_clients.values()), {}
            clients += self._service_clients.values()
            self._service_clients = {}
        for client in clients:
            client.close()
        self._pool.shutdown(wait=False)

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            value = secret.reveal()
            if len(value) >= 4:
                text = text.replace(value, "***")
        return super()._redact(text)

    # --- request ------------------------------------------------------------------------

    def _build_request(self, req: Request) -> dict[str, Any]:
        messages = _map_messages(req.messages, self.traits.tool_name)
        kwargs: dict[str, Any] = {"modelId": self.model, "messages": messages}
        if req.system:
            kwargs["system"] = _map_system(req)
        inference = _map_options(req)
        if inference:
            kwargs["inferenceConfig"] = inference
        tool_config = _map_tools(req, messages)
        if tool_config and req.cache_tools and req.tools:
            tool_config = {**tool_config, "tools": [*tool_config["tools"], _CACHE_POINT]}
        if tool_config:
            kwargs["toolConfig"] = tool_config
        output = self._native_output(req)
        if output:
            kwargs["outputConfig"] = output
        for key, value in _map_reasoning(req.reasoning).items():
            # outputConfig may hold the structured-output format already: merged.
            kwargs[key] = {**kwargs.get(key, {}), **value}
        kwargs = _merge_native(kwargs, req.native)
        if req.timeout is not None:  # taken out by _call: it picks the client (_client_for)
            kwargs["timeout"] = req.timeout
        return kwargs

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """``outputConfig.textFormat``: the schema as JSON text, closed objects
        (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputFormat.html)."""
        owner = f"response_format {output.name!r}"
        schema = to_strict_schema(output.answer_schema, owner, dialect="anthropic")
        definition: dict[str, Any] = {"name": output.name, "schema": json.dumps(schema)}
        if output.description:
            definition["description"] = output.description
        return {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}}

    # --- calls --------------------------------------------------------------------------

    def _retry_after(self, exc: BaseException) -> float | None:
        return _retry_after(exc)

    def _check_native(self, client: Any, operation: str, kwargs: dict[str, Any]) -> None:
        """What botocore would have checked, on the clients Zerda built without it."""
        if getattr(self, "_checks_native", False):
            _check_native(client, operation, kwargs)

    def _prebuilt(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``converse`` / ``converse_stream``: on the clients Zerda built,
        the history and system blocks JSON-encoded once (:func:`_split_prebuilt`)."""
        return _split_prebuilt(kwargs) if getattr(self, "_checks_native", False) else kwargs

    def _call(self, kwargs: dict[str, Any]) -> Any:
        kwargs, timeout = split_timeout(kwargs)
        client = self._client_for(timeout)
        self._check_native(client, "Converse", kwargs)
        call = self._prebuilt(kwargs)
        return self._retrying(lambda: client.converse(**call))

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        import asyncio  # loaded by now: this runs on an event loop; kept out of import time

        loop = asyncio.get_running_loop()
        kwargs, timeout = split_timeout(kwargs)
        client = self._client_for(timeout)  # built here, once, not in a pool thread
        self._check_native(client, "Converse", kwargs)
        send = functools.partial(client.converse, **self._prebuilt(kwargs))
        # One attempt per pool job: the waits between attempts are awaited, not slept.
        return await self._retrying_async(lambda: loop.run_in_executor(self._pool, send))

    # --- batch (model invocation jobs on S3; see _batch_bedrock) --------------------------

    def _service_client(self, service: str) -> Any:
        """The ``bedrock`` (control plane) or ``s3`` client of ``llm.batch``, built once from
        the interface's session and region, at ``endpoint_urls[service]`` when given (S3
        there in path style, as S3-compatible endpoints expect)."""
        from botocore.config import Config

        self._check_open()
        with self._lock:
            if service not in self._service_clients:
                session = self._session or self.sdk.session.Session()  # type: ignore[union-attr]
                endpoint = self.endpoint_urls.get(service)
                config = Config(
                    retries={"mode": "standard", "total_max_attempts": self.max_retries + 1}
                )
                if service == "s3" and endpoint is not None:
                    config = config.merge(Config(s3={"addressing_style": "path"}))
                self._service_clients[service] = session.client(
                    service, region_name=self.region, endpoint_url=endpoint, config=config
                )
            return self._service_clients[service]

    def _batch_submit(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        own, rest = _batch_bedrock.split_options(options)
        bucket, prefix = _batch_bedrock.s3_location("input_s3_uri", own["input_s3_uri"])
        key = _batch_bedrock.input_key(prefix, own["job_name"])
        body = _batch_bedrock.map_batch_file(items)
        self._service_client("s3").put_object(
            Bucket=bucket, Key=key, Body=body, ContentType="application/jsonl"
        )
        args = _batch_bedrock.map_batch_job(self.model, own, f"s3://{bucket}/{key}", rest)
        job = self._service_client("bedrock").create_model_invocation_job(**args)
        return str(job["jobArn"])

    def _get_job(self, batch_id: str) -> dict[str, Any]:
        bedrock = self._service_client("bedrock")
        return dict(bedrock.get_model_invocation_job(jobIdentifier=batch_id))

    def _batch_poll(self, batch_id: str) -> BatchStatus:
        return _batch_bedrock.map_batch_status(self._get_job(batch_id))

    def _batch_fetch(self, batch_id: str) -> dict[str, ItemOutcome]:
        bucket, prefix = _batch_bedrock.output_prefix(self._get_job(batch_id))
        s3 = self._service_client("s3")
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        texts = [
            s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
            for key in keys
            if _batch_bedrock.is_result_file(key)
        ]
        return _batch_bedrock.map_batch_output("\n".join(texts), self.provider)

    def _batch_cancel(self, batch_id: str) -> BatchStatus:
        self._service_client("bedrock").stop_model_invocation_job(jobIdentifier=batch_id)
        return self._batch_poll(batch_id)

    # boto3 has no async client: the async hooks run the sync ones in the interface's pool.

    async def _in_pool(self, call: Callable[..., T], *args: Any) -> T:
        import asyncio  # loaded by now: this runs on an event loop

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(call, *args))

    async def _batch_submit_async(
        self, items: list[tuple[str, dict[str, Any]]], options: dict[str, Any]
    ) -> str:
        return await self._in_pool(self._batch_submit, items, options)

    async def _batch_poll_async(self, batch_id: str) -> BatchStatus:
        return await self._in_pool(self._batch_poll, batch_id)

    async def _batch_fetch_async(self, batch_id: str) -> dict[str, ItemOutcome]:
        return await self._in_pool(self._batch_fetch, batch_id)

    async def _batch_cancel_async(self, batch_id: str) -> BatchStatus:
        return await self._in_pool(self._batch_cancel, batch_id)

    # --- response -----------------------------------------------------------------------

    def _map_response(self, raw: Any) -> dict[str, Any]:
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("output"), dict)
            or "stopReason" not in raw
        ):
            from botocore.parsers import ResponseParserError

            # botocore turns a body that is not JSON, or is empty, into an empty response
            # rather than an error: raised as the parse error it is (mapped in _map_error).
            raise ResponseParserError("the response has no output or stopReason")
        blocks = (raw["output"].get("message") or {}).get("content") or []
        text = "".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("text"))
        shown = "".join(_reasoning_text(b.get("reasoningContent")) for b in blocks)
        reasoning = [
            r
            for b in blocks
            if "reasoningContent" in b
            if (r := _keep_reasoning(b["reasoningContent"]))
        ]
        provider_data = {"bedrock": {"reasoning": reasoning}} if reasoning else None
        return self._make_result(
            text or None,
            parse_bedrock_tool_calls(blocks),
            raw.get("stopReason"),
            _map_usage(raw.get("usage")),
            provider_data,
            shown,
        )

    def _map_stop_reason(self, native: Any) -> str:
        return _STOP_REASONS.get(native, "other")

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        from botocore import exceptions as bex

        if isinstance(exc, bex.ClientError):
            return _map_client_error(exc)
        return _map_transport_error(exc)

    # --- streaming ----------------------------------------------------------------------

    def _start_stream(self, kwargs: dict[str, Any]) -> _Events:
        """One attempt: the request, then its first event. Until that event arrives nothing
        has reached the caller, so a failure may be retried."""
        kwargs, timeout = split_timeout(kwargs)
        client = self._client_for(timeout)
        self._check_native(client, "ConverseStream", kwargs)
        events = _Events(client.converse_stream(**self._prebuilt(kwargs))["stream"])
        try:
            events.prefetch()
        except BaseException:
            events.close()
            raise
        return events

    def _open_stream(self, kwargs: dict[str, Any]) -> _Events:
        return self._retrying(lambda: self._start_stream(kwargs))

    @asynccontextmanager
    async def _open_stream_async(
        self, kwargs: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """The blocking event stream runs in the pool; its events reach the loop through an
        asyncio queue (``call_soon_threadsafe``), so the loop never waits on a socket."""
        self._client_for(kwargs.get("timeout"))  # built here, once, not in a pool thread
        events = await self._retrying_async(lambda: self._start_stream_async(kwargs))
        pump = _StreamPump()
        pump.start(self._pool, events)
        try:
            yield pump.events()
        finally:
            pump.stop()

    async def _start_stream_async(self, kwargs: dict[str, Any]) -> _Events:
        import asyncio

        job = self._pool.submit(self._start_stream, kwargs)
        try:
            return await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            # The attempt may still be running in its thread: whatever it opens is closed.
            job.add_done_callback(_close_opened)
            raise

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[dict[str, Any]]:
        if "contentBlockDelta" in chunk:
            return _feed_delta(acc, chunk["contentBlockDelta"])
        if "contentBlockStart" in chunk:
            event = chunk["contentBlockStart"]
            use = (event.get("start") or {}).get("toolUse")
            if use:
                return acc.start_call(
                    event.get("contentBlockIndex"), use.get("toolUseId"), use.get("name")
                )
            return []
        if "contentBlockStop" in chunk:
            index = chunk["contentBlockStop"].get("contentBlockIndex")
            _close_reasoning(acc, index)
            return acc.end_call(index)
        if "messageStop" in chunk:
            acc.finished = True
            acc.native_stop = chunk["messageStop"].get("stopReason")
        elif "metadata" in chunk:
            acc.usage = _map_usage(chunk["metadata"].get("usage"))
        return []


# --- messages -------------------------------------------------------------------------


def _map_messages(messages: list[dict[str, Any]], name_pattern: str) -> list[dict[str, Any]]:
    """Converse messages: strict user/assistant alternation (consecutive same-role turns
    merged, tool results in the user turn that follows the calls), no empty blocks."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message["role"] == "assistant" else "user"
        blocks = _map_message(message, name_pattern)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # our own fresh list: no copy per merge
        else:
            out.append({"role": role, "content": blocks})
    if not out:
        raise InvalidRequestError("messages: Bedrock needs at least one non-empty message")
    return out


def _map_message(message: dict[str, Any], name_pattern: str) -> list[dict[str, Any]]:
    """The content blocks of one unified message (a cache point after them with
    ``cache=True``)."""
    blocks = _map_blocks(message, name_pattern)
    return [*blocks, _CACHE_POINT] if message.get("cache_after") and blocks else blocks


def _map_blocks(message: dict[str, Any], name_pattern: str) -> list[dict[str, Any]]:
    role = message["role"]
    if role == "tool":
        return _map_tool_blocks(message)
    text = message.get("content")
    if isinstance(text, list):
        return _map_parts(text)
    blocks: list[dict[str, Any]] = (
        [{"text": text}] if isinstance(text, str) and text and not text.isspace() else []
    )
    if role != "assistant":
        return blocks
    name_ok = _name_rule(name_pattern)
    for j, call in enumerate(message["tool_calls"]):
        if not name_ok(call["name"]):
            raise InvalidRequestError(
                f"messages: an assistant message calls a tool named {call['name']!r} "
                f"(tool_calls[{j}]), which bedrock refuses: tool names must match {name_pattern}"
            )
        blocks.append(
            {"toolUse": {"toolUseId": call["id"], "name": call["name"], "input": call["arguments"]}}
        )
    # Signed reasoning goes back first, before the text and toolUse blocks (Claude's
    # extended thinking with tools requires it).
    provider_data = message.get("provider_data")
    return [*_replay_reasoning(provider_data), *blocks] if provider_data else blocks


@functools.lru_cache(maxsize=8)
def _name_rule(pattern: str) -> Callable[[str], Any]:
    """The row's tool-name rule, compiled once: a name matches it in full or not at all."""
    return re.compile(pattern).fullmatch


def _map_tool_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A toolResult block; a cache point among its parts goes after it (toolResult content
    takes none: ToolResultContentBlock has text, json, image, document, video)."""
    output = message["content"]
    result = _map_tool_result(message)
    cached = (
        isinstance(output, list)
        and any(isinstance(p, dict) and p.get("type") == "cache_point" for p in output)
        and is_parts(output)
    )
    return [result, _CACHE_POINT] if cached else [result]


def _map_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    output = message["content"]
    if isinstance(output, list) and is_parts(output):
        content = _map_parts([p for p in output if p["type"] != "cache_point"])
    else:
        content = [_map_tool_output(output)]
    result: dict[str, Any] = {
        "toolUseId": message["tool_call_id"],
        "content": content or [{"text": "(empty)"}],
    }
    if message.get("is_error"):
        result["status"] = "error"
    return {"toolResult": result}


# --- content parts ----------------------------------------------------------------------

_CACHE_POINT = {"cachePoint": {"type": "default"}}
# ImageFormat, DocumentFormat and AudioFormat of the Converse API
# (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html).
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_AUDIO_FORMATS = {
    "audio/mpeg": "mp3",
    "audio/wav": "wav",
    "audio/flac": "flac",
    "audio/ogg": "ogg",
    "audio/aac": "aac",
    "audio/mp4": "m4a",
    "audio/webm": "webm",
}
# DocumentBlock.name: alphanumerics, single whitespace, hyphens, parentheses, brackets.
_NAME_BAD = re.compile(r"[^a-zA-Z0-9\s\-()\[\]]+")


def _map_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content parts as Converse blocks; nameless documents numbered in order."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        blocks += _map_part(part, sum(1 for b in blocks if "document" in b) + 1)
    return blocks


def _map_part(part: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """One content part as Converse blocks (``n``: the number a nameless document gets)."""
    if part["type"] == "text":
        return [{"text": part["text"]}] if part["text"].strip() else []
    if part["type"] == "cache_point":
        return [_CACHE_POINT]
    return [_map_media(part, n)]


def _map_media(part: dict[str, Any], n: int) -> dict[str, Any]:
    """An image, document or audio block: raw bytes (boto3 base64-encodes them on the
    wire), or an ``s3Location`` for an s3:// file part."""
    if "uri" in part:
        source: dict[str, Any] = {"s3Location": {"uri": part["uri"]}}
    else:
        source = _bytes_source(part["data"])
    media_type = part.get("media_type") or ""
    kind = part["type"] if part["type"] != "file" else _file_kind(media_type)
    formats = {"image": _IMAGE_FORMATS, "audio": _AUDIO_FORMATS}.get(kind, _DOCUMENT_FORMATS)
    if media_type not in formats:
        raise InvalidRequestError(
            f"bedrock takes {kind} parts as {', '.join(formats)}, not {media_type or 'an unknown type'}"
        )
    block: dict[str, Any] = {"format": formats[media_type], "source": source}
    if kind == "document":
        block = {"name": _document_name(part.get("name"), n), **block}
    return {kind: block}


class _Source(dict):  # type: ignore[type-arg]
    """A media block's ``{"bytes": ...}`` source, as boto3 takes it, that also keeps the
    part's base64 text (``text``): the prebuilt body (:class:`_Blobs`) writes that text
    instead of encoding the bytes a second time. A dict in every other respect, so the
    native request stays the one boto3's ``converse()`` documents and accepts."""

    __slots__ = ("text",)
    text: str


def _bytes_source(data: str) -> dict[str, Any]:
    """``{"bytes": ...}``: the caller's own bytes when Zerda encoded them (no decoded
    copy), their base64 text kept beside them when it is the very text botocore would
    write for them."""
    raw = b64decode(data)
    if not _is_botocores_text(data, raw):
        return {"bytes": raw}
    source = _Source(bytes=raw)
    source.text = data
    return source


def _is_botocores_text(text: str, raw: bytes) -> bool:
    """Whether ``text`` is exactly ``base64.b64encode(raw)``, as botocore's serializer
    writes a blob (``_get_base64``: standard alphabet, padded). Zerda's own encoding always
    is; base64 text the caller gave may differ only where a decoder does not look: the
    unused bits of its last character before the padding (``QR==`` and ``QQ==`` both decode
    to ``A``), or characters it skips, which make the text longer. So the length and the
    last four characters settle it (every full group of four maps one-to-one to 3 bytes)."""
    if len(text) != 4 * -(-len(raw) // 3) or not raw:
        return False
    tail = raw[-(len(raw) % 3 or 3) :]
    return base64.b64encode(tail).decode("ascii") == text[-4:]


def _file_kind(media_type: str) -> str:
    major = media_type.partition("/")[0]
    return major if major in ("image", "audio") else "document"


def _document_name(name: str | None, n: int) -> str:
    """A DocumentBlock name Bedrock accepts: the file name without its extension, its other
    characters replaced, whitespace single; "Document n" when nothing is left."""
    stem = (name or "").rsplit(".", 1)[0] if name and "." in name[1:] else (name or "")
    cleaned = " ".join(_NAME_BAD.sub(" ", stem).split())[:200]
    return cleaned or f"Document {n}"


def _map_system(req: Request) -> list[dict[str, Any]]:
    """SystemContentBlocks: text, and cachePoint blocks where the system holds them."""
    if not req.system_parts:
        return [{"text": req.system}]
    return _map_parts(req.system_parts)


def _map_tool_output(output: Any) -> dict[str, Any]:
    """One ToolResultContentBlock. Bedrock's ``json`` must be an object: a list is wrapped
    as {"result": [...]}; an empty text block is refused, so empty output is "(empty)"."""
    if isinstance(output, dict):
        return {"json": output}
    if isinstance(output, list):
        return {"json": {"result": output}}
    text = tool_output_text(output)
    return {"text": text if text.strip() else "(empty)"}


def _replay_reasoning(provider_data: dict[str, Any] | None) -> list[dict[str, Any]]:
    reasoning = ((provider_data or {}).get("bedrock") or {}).get("reasoning") or []
    out = []
    for entry in reasoning:
        if not isinstance(entry, dict):
            continue
        if "redactedContent" in entry:  # kept as base64 text; botocore sends bytes
            entry = {"redactedContent": base64.b64decode(entry["redactedContent"])}
        out.append({"reasoningContent": entry})
    return out


# --- tools and options ----------------------------------------------------------------


def _map_tools(req: Request, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """toolConfig. Converse has no tool_choice "none": the tools are left out, unless the
    history holds toolUse/toolResult blocks, which Bedrock refuses without a toolConfig;
    then the tools named in the history are declared (never a made-up dummy tool)."""
    choice = req.tool_choice
    if req.tools and choice != "none":
        config = to_bedrock_tools(req.tools) or {}
        native_choice = _map_tool_choice(choice)
        return {**config, "toolChoice": native_choice} if native_choice else config
    names = _history_tool_names(messages)
    if not names:
        return None
    return {
        "tools": [
            {"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object"}}}} for n in names
        ]
    }


def _map_tool_choice(choice: str | dict[str, str] | None) -> dict[str, Any] | None:
    if choice == "auto":
        return {"auto": {}}
    if choice == "required":
        return {"any": {}}
    if isinstance(choice, dict):
        return {"tool": {"name": choice["name"]}}
    return None  # None: the model's default (auto)


def _history_tool_names(messages: list[dict[str, Any]]) -> list[str]:
    """The tools the history calls, in order of first use (every toolResult answers one of
    these calls: resolve_tool_ids refuses orphan results)."""
    names = [b["toolUse"]["name"] for m in messages for b in m["content"] if "toolUse" in b]
    return list(dict.fromkeys(names))


def _map_options(req: Request) -> dict[str, Any]:
    """inferenceConfig, with only what the caller set (and maxTokens above a thinking
    budget, which Claude requires)."""
    max_tokens = req.max_tokens
    if max_tokens is None and req.reasoning and req.reasoning.on and req.reasoning.budget:
        max_tokens = req.reasoning.budget + DEFAULT_MAX_TOKENS
    fields = {
        "maxTokens": max_tokens,
        "temperature": req.temperature,
        "topP": req.top_p,
        "stopSequences": req.stop,
    }
    return {k: v for k, v in fields.items() if v is not None}


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
    from botocore.validate import validate_parameters

    shape = client.meta.service_model.operation_model(operation).input_shape
    params = {k: v for k, v in kwargs.items() if k not in _ZERDA_BUILT}
    params["messages"] = sample = kwargs.get("messages", [])[:1]
    key = _fingerprint(params) if _holds_no_blob(sample) else None
    if key is not None and (shape, key) in _VALIDATED:
        return
    validate_parameters(params, shape)
    if key is not None:
        if len(_VALIDATED) >= _VALIDATED_MAX:
            _VALIDATED.clear()
        _VALIDATED[shape, key] = None


# The (input shape, fingerprint) of the requests botocore's validator passed; bounded.
_VALIDATED: dict[tuple[Any, bytes], None] = {}
_VALIDATED_MAX = 256


def _fingerprint(params: dict[str, Any]) -> bytes | None:
    """A digest telling apart whatever botocore's validator tells apart: the ``marshal``
    text (format 2, which writes no back-references, so equal values always write alike)
    of a request made of builtin values of exact types, which it writes with their types
    (a tuple and a list, ``1``, ``1.0``, ``True`` and ``"1"``, as values and as keys);
    None for a request holding anything else (a subclass, a Decimal, an object): those are
    validated on every call. marshal writes every buffer (bytes, bytearray, memoryview) as
    bytes, which botocore takes in blob members only: the sample message checked by
    :func:`_holds_no_blob` has none, and no other field of the request does (a canary test
    walks the model), so no request holding a buffer passes and none is remembered.
    Five times cheaper than the JSON text and ``repr`` it replaces."""
    try:
        text = marshal.dumps(params, 2)
    except ValueError:  # not a builtin value of an exact type, or nested too deep
        return None
    return hashlib.blake2b(text, digest_size=16).digest()


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
    (bytes): written as botocore's serializer writes one (``_get_base64``: base64 text),
    the media part's own text reused when its :class:`_Source` carries it (found once, at
    the first blob: a history without media costs nothing)."""

    def __init__(self, head: dict[str, Any]) -> None:
        self._head = head
        self._texts: dict[int, str] | None = None

    def __call__(self, value: Any) -> str:
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        if self._texts is None:
            self._texts = _media_texts(self._head)
        text = self._texts.get(id(value))  # the bytes are alive in head: ids are stable
        return text if text is not None else base64.b64encode(value).decode("utf-8")


def _media_texts(head: dict[str, Any]) -> dict[int, str]:
    """``id(bytes)`` -> base64 text for each :class:`_Source` of Zerda's blocks: media
    blocks sit in a message's content, a toolResult's content and the system blocks."""
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
    try:
        # botocore's json.dumps settings (the defaults); no circular check: the request
        # was checked (a circular value fails botocore's validator first).
        encoder = json.JSONEncoder(default=_Blobs(head), check_circular=False)
        rest[_PREBUILT] = encoder.encode(head)
    except (TypeError, ValueError):  # not plain JSON: botocore serializes it all
        return kwargs
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
    text = context.pop(_PREBUILT, None)
    if text is None:
        return
    head = text.encode("utf-8")
    body = params.get("body") or b"{}"
    params["body"] = head if body == b"{}" else b"".join([head[:-1], b", ", body[1:]])


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
    """The answer reader of ``converse``, compiled once per client from its model."""
    shape = client.meta.service_model.operation_model("Converse").output_shape
    handler = functools.partial(_read_response, _response_reader(shape))
    client.meta.events.register("before-parse.bedrock-runtime.Converse", handler)


def _map_reasoning(plan: Plan | None) -> dict[str, Any]:
    """Reasoning per model family (the family's row in zerda.llm.reasoning.TABLE):
    Claude's ``thinking`` in ``additionalModelRequestFields`` (a budget, or adaptive with
    Converse's ``outputConfig.effort``), Amazon Nova 2's ``reasoningConfig``, gpt-oss's
    ``reasoning_effort``: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-reasoning.html"""
    if plan is None:
        return {}
    style = plan.family.style
    if not plan.on:
        key = "reasoningConfig" if style == "nova" else "thinking"
        return {"additionalModelRequestFields": {key: dict(plan.off)}}
    if style == "nova":
        config = {"type": "enabled", "maxReasoningEffort": plan.effort}
        return {"additionalModelRequestFields": {"reasoningConfig": config}}
    if style == "reasoning_effort":
        return {"additionalModelRequestFields": {"reasoning_effort": plan.effort}}
    if style not in ("budget", "adaptive"):
        return {}  # a family that reasons with no switch (DeepSeek-R1)
    thinking: dict[str, Any] = (
        {"type": "enabled", "budget_tokens": plan.budget}
        if plan.budget is not None
        else {"type": "adaptive"}
    )
    native: dict[str, Any] = {"additionalModelRequestFields": {"thinking": thinking}}
    if plan.effort is not None:
        native["outputConfig"] = {"effort": plan.effort}
    return native


def _merge_native(kwargs: dict[str, Any], native: dict[str, Any]) -> dict[str, Any]:
    """``**native`` passed through; a dict given for a field Zerda also fills
    (inferenceConfig, toolConfig) is merged into it, the caller's keys winning."""
    out = dict(kwargs)
    for key, value in native.items():
        mine = out.get(key)
        out[key] = (
            {**mine, **value} if isinstance(mine, dict) and isinstance(value, dict) else value
        )
    return out


# --- response pieces ------------------------------------------------------------------


def _map_usage(usage: Any) -> dict[str, Any] | None:
    """DESIGN.md §12: ``inputTokens`` leaves out the cache reads and writes (``totalTokens``
    is all four), so they are added; Converse does not report reasoning tokens:
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html"""
    if not usage:
        return None
    read = usage.get("cacheReadInputTokens", usage.get("cacheReadInputTokenCount"))
    write = usage.get("cacheWriteInputTokens", usage.get("cacheWriteInputTokenCount"))
    return make_usage(
        plus(usage.get("inputTokens"), read, write),
        usage.get("outputTokens"),
        cache_read=read,
        cache_write=write,
    )


def _reasoning_text(block: Any) -> str:
    """The shown text of a reasoningContent block ("" for redacted reasoning)."""
    text = (block or {}).get("reasoningText") if isinstance(block, dict) else None
    value = text.get("text") if isinstance(text, dict) else None
    return value if isinstance(value, str) else ""


def _keep_reasoning(block: dict[str, Any]) -> dict[str, Any] | None:
    """A reasoningContent block worth sending back: signed reasoning text or redacted
    content (base64 text, so results stay JSON). Unsigned reasoning is dropped: it is not
    content, and no model needs it back."""
    if block.get("redactedContent") is not None:
        return {"redactedContent": _b64(block["redactedContent"])}
    text = block.get("reasoningText") or {}
    if not text.get("signature"):
        return None
    return {"reasoningText": {"text": text.get("text", ""), "signature": text["signature"]}}


def _b64(data: Any) -> str:
    raw = data if isinstance(data, bytes) else str(data).encode("utf-8")
    return base64.b64encode(raw).decode("ascii")


# --- batch ----------------------------------------------------------------------------

T = TypeVar("T")
_SERVICES = ("bedrock", "s3")


def _check_endpoint_urls(endpoint_urls: Mapping[str, str] | None) -> dict[str, str]:
    """``endpoint_urls``: the endpoints of the other AWS services ``llm.batch`` calls
    (``bedrock``, the control plane, and ``s3``); ``base_url`` is bedrock-runtime's only."""
    urls = dict(endpoint_urls or {})
    unknown = sorted(set(urls) - set(_SERVICES))
    if unknown:
        raise ValueError(
            f"endpoint_urls: unknown service(s) {', '.join(map(repr, unknown))}; "
            f"expected {' and '.join(map(repr, _SERVICES))}"
        )
    return urls


# --- errors ---------------------------------------------------------------------------


def _map_client_error(exc: Any) -> ZerdaError:
    error = exc.response.get("Error") or {}
    status = (exc.response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    code = str(error.get("Code") or "")
    text = str(error.get("Message") or exc)
    # With no error type header, botocore reports the HTTP status as the code.
    message = f"{code}: {text}" if code and not code.isdigit() else text
    cls = _ERROR_CODES.get(code.lower())
    if cls is None:
        return error_from_status(status, message, "bedrock")
    # The status decides what is retried (DESIGN.md §5), whatever the code: a 424
    # ModelErrorException is a server error, but not a retried one. In-stream exceptions
    # carry no status: their type decides.
    retryable = is_retryable_status(status) if status is not None else None
    return cls(message, status_code=status, provider="bedrock", retryable=retryable)


def _retry_after(exc: BaseException) -> float | None:
    """Bedrock's ``x-amz-retry-after`` (milliseconds), else ``Retry-After``."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    headers = (response.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
    headers = {str(k).lower(): v for k, v in headers.items()}  # botocore's are lower-case
    try:
        return float(headers["x-amz-retry-after"]) / 1000
    except (KeyError, TypeError, ValueError):
        return retry_after_from_headers(headers)


def _raised_in_parser(exc: BaseException) -> bool:
    """Whether ``exc`` came from botocore's response parsers, which fail with a bare
    AttributeError or TypeError on a body of the wrong shape (``[]``, ``null``)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__") == "botocore.parsers"


def _map_transport_error(exc: BaseException) -> ZerdaError | None:
    from botocore import exceptions as bex
    from urllib3 import exceptions as uex

    if isinstance(exc, (AttributeError, TypeError, KeyError)) and _raised_in_parser(exc):
        return malformed_response("bedrock", f"it does not have the Converse shape: {exc}")

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (bex.ReadTimeoutError, bex.ConnectTimeoutError, uex.ReadTimeoutError)):
        return TimeoutError(text, provider="bedrock")
    if isinstance(
        exc, (bex.ConnectionError, bex.HTTPClientError, uex.ProtocolError, uex.HTTPError)
    ):
        return ConnectionError(text, provider="bedrock")
    if isinstance(
        exc, (bex.NoCredentialsError, bex.PartialCredentialsError, bex.CredentialRetrievalError)
    ):
        return AuthenticationError(text, provider="bedrock")
    if isinstance(exc, (bex.TokenRetrievalError, bex.ProfileNotFound)):
        return AuthenticationError(text, provider="bedrock")
    if isinstance(exc, bex.ParamValidationError):
        return InvalidRequestError(text, provider="bedrock")
    from botocore.eventstream import ParserError
    from botocore.parsers import ResponseParserError

    if isinstance(exc, ParserError):  # an event stream whose framing or checksums are broken
        return malformed_response("bedrock", f"its event stream could not be read: {exc}")
    if isinstance(exc, ResponseParserError):
        return malformed_response("bedrock", f"it could not be parsed: {exc}")
    return None


# --- streaming pieces -----------------------------------------------------------------


class _Events:
    """A converse-stream's events; closing it (or leaving its ``with``) closes the HTTP
    response. (A stream that ends before ``messageStop`` is reported by the base class.)"""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._events = _read_events(stream)
        self._first: list[dict[str, Any]] = []

    def prefetch(self) -> None:
        """Reads the first event now (it is still yielded first); none if it is empty."""
        self._first = list(itertools.islice(self._events, 1))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        first, self._first = self._first, []
        yield from first
        yield from self._events

    def __enter__(self) -> _Events:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._stream.close()


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


def _close_opened(job: Future[_Events]) -> None:
    """Closes the stream a cancelled attempt opened after all."""
    if not job.cancelled() and job.exception() is None:
        job.result().close()


def _feed_delta(acc: StreamAccumulator, event: dict[str, Any]) -> list[dict[str, Any]]:
    delta = event.get("delta") or {}
    index = event.get("contentBlockIndex")
    if "text" in delta:
        return acc.text(delta["text"])
    if "toolUse" in delta:
        return acc.add_arguments(index, (delta["toolUse"] or {}).get("input"))
    if "reasoningContent" in delta:
        content = delta["reasoningContent"] or {}
        _add_reasoning(acc, index, content)
        return acc.reasoning(content.get("text"))
    return []


def _open_reasoning(acc: StreamAccumulator) -> dict[Any, dict[str, Any]]:
    # StreamAccumulator has no slot for per-block reasoning; keep it beside its state.
    state: dict[Any, dict[str, Any]] = acc.scratch.setdefault("bedrock_reasoning", {})
    return state


def _add_reasoning(acc: StreamAccumulator, index: Any, delta: dict[str, Any]) -> None:
    block = _open_reasoning(acc).setdefault(
        index, {"text": [], "signature": None, "redacted": None}
    )
    if delta.get("text"):
        block["text"].append(delta["text"])
    if delta.get("signature"):
        block["signature"] = delta["signature"]
    if delta.get("redactedContent") is not None:
        block["redacted"] = delta["redactedContent"]


def _close_reasoning(acc: StreamAccumulator, index: Any) -> None:
    block = _open_reasoning(acc).pop(index, None)
    if block is None:
        return
    if block["redacted"] is not None:
        native: dict[str, Any] = {"redactedContent": block["redacted"]}
    else:
        native = {
            "reasoningText": {"text": "".join(block["text"]), "signature": block["signature"]}
        }
    kept = _keep_reasoning(native)
    if kept:
        acc.provider_data.setdefault("bedrock", {"reasoning": []})["reasoning"].append(kept)


class _StreamPump:
    """Runs a blocking event stream in a pool thread and hands its events to the loop."""

    def __init__(self) -> None:
        import asyncio  # created on the running loop

        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._stopped = threading.Event()

    def start(self, pool: ThreadPoolExecutor, events: _Events) -> None:
        pool.submit(self._run, events)

    def _put(self, kind: str, item: Any) -> None:
        if self._stopped.is_set():
            return
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (kind, item))
        except RuntimeError:  # the loop closed while the stream was still running
            self._stopped.set()

    def _run(self, events: _Events) -> None:
        try:
            with events:
                for event in events:
                    if self._stopped.is_set():
                        return
                    self._put("event", event)
        except BaseException as exc:  # noqa: BLE001 - handed over to the loop, raised there
            self._put("error", exc)
        else:
            self._put("end", None)

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            kind, item = await self._queue.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item

    def stop(self) -> None:
        """Stops the pump: at its next event the pool thread leaves the stream's ``with``,
        which closes the HTTP response. Closing it from here instead would block the loop:
        the reader thread holds the response's buffer lock while it waits for data."""
        self._stopped.set()


# --- botocore's logs --------------------------------------------------------------------


class _LogRedactor(logging.Filter):
    """Replaces the AWS secrets given to live interfaces with ``***`` in botocore's log
    records. At DEBUG botocore logs each request whole, the ``X-Amz-Security-Token``
    header (the session token) included, from ``botocore.endpoint`` and ``botocore.auth``
    (the canonical request it signs). Filters run only for records a logger emits, so
    nothing is formatted unless DEBUG is on."""

    LOGGERS = (
        "botocore.auth",
        "botocore.endpoint",
        "botocore.httpsession",
        "botocore.hooks",
        "botocore.parsers",
        "botocore.retryhandler",
        "botocore.credentials",
    )

    def __init__(self) -> None:
        super().__init__()
        self._secrets: collections.Counter[str] = collections.Counter()
        self._installed = False
        self._lock = threading.Lock()

    def add(self, secret: str) -> None:
        if len(secret) < 4:
            return
        with self._lock:
            self._secrets[secret] += 1
            if not self._installed:
                for name in self.LOGGERS:
                    logging.getLogger(name).addFilter(self)
                self._installed = True

    def discard(self, secret: str) -> None:
        with self._lock:
            self._secrets[secret] -= 1
            if self._secrets[secret] <= 0:
                del self._secrets[secret]

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = list(self._secrets)
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left alone
            return True
        redacted = message
        for secret in secrets:
            redacted = redacted.replace(secret, "***")
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_LOG_REDACTOR = _LogRedactor()
