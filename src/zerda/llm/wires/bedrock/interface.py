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

import functools
import json
import os
import re
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from zerda.llm import _lazy
from zerda.llm._fastpath import PrivateName
from zerda.llm._signatures import signature_options
from zerda.llm._timeout import split_timeout
from zerda.llm.base import BaseLLMInterface, Secret
from zerda.llm.errors import InvalidRequestError, ZerdaError
from zerda.llm.interface.arguments import check_strings
from zerda.llm.interface.batch import BatchProtocol
from zerda.llm.wires.bedrock import count as _count
from zerda.llm.wires.bedrock import fastpath as _fast
from zerda.llm.wires.bedrock import logs as _logs
from zerda.llm.wires.bedrock import timeouts as _timeouts

if TYPE_CHECKING:
    from zerda.llm import tools
    from zerda.llm._request import Request
    from zerda.llm._stream import StreamAccumulator
    from zerda.llm._structured import OutputSpec
    from zerda.llm.wires.bedrock import hosted as _hosted
    from zerda.llm.wires.bedrock import map as _map
    from zerda.llm.wires.bedrock.stream import _Events

# The request and response mapping (map.py, hosted.py), the stream's (stream.py, pump.py)
# and the error mapping (errors.py) load with the first call that needs them: building an
# interface and its client needs none of them (docs/decisions.md, "Building an interface
# loads only what building needs"). The names below, which tests of the media mapping read
# here (the module they were written against), load on first access.
_MAP = "zerda.llm.wires.bedrock.map"
if not TYPE_CHECKING:  # the modules this one calls into, bound on first use (_lazy.module)
    _map = _lazy.module(_MAP, __name__, "_map")
    _hosted = _lazy.module("zerda.llm.wires.bedrock.hosted", __name__, "_hosted")
    tools = _lazy.module("zerda.llm.tools", __name__, "tools")
__getattr__ = _lazy.attributes(
    __name__,
    {
        "_AUDIO_FORMATS": _MAP,
        "_DOCUMENT_FORMATS": _MAP,
        "_IMAGE_FORMATS": _MAP,
        "DEFAULT_MAX_TOKENS": _MAP,
        "_map_media": _MAP,
    },
)

DEFAULT_POOL_SIZE = 64
# Bedrock generations often run past botocore's 60 s default read timeout.
DEFAULT_READ_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 60.0


class AWSInterface(BaseLLMInterface):
    """AWS Bedrock (Converse). Options beyond the common ones: ``region``,
    ``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``, ``profile``
    and ``pool_size`` (threads for the async methods, default 64)."""

    provider = "bedrock"
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
    stream_final_event = "messageStop"
    # The fast path's private SDK names (DESIGN §22), checked once by the shared base.
    fast_path_wire: ClassVar[str] = "bedrock"
    fast_path_names: ClassVar[tuple[PrivateName, ...]] = _fast.PRIVATE_NAMES
    # llm.count_tokens: CountTokens with the Converse input (count.py).
    token_counter = _count.CountTokensCounter
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
        credentials = {
            "aws_access_key_id": aws_access_key_id,
            "aws_secret_access_key": aws_secret_access_key,
            "aws_session_token": aws_session_token,
        }
        check_strings(type(self).__name__, {"region": region, "profile": profile, **credentials})
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
        self._watch_secrets()
        self._session: Any = None
        # Per-call timeouts on an older botocore (see _client_for): a few clients, kept.
        self._timeout_clients = _timeouts.TimeoutClients()
        self._service_clients: dict[str, Any] = {}  # llm.batch's bedrock and s3 clients
        self.region = region or getattr(getattr(self._client, "meta", None), "region_name", None)
        if self._client is None:
            self._session = self._make_session(aws_secret_access_key, aws_session_token)
            self.region = self._resolve_region(region)
        self._pool = self._make_pool()

    def _restore_live(self) -> None:
        super()._restore_live()
        self._watch_secrets()  # in the process that loads the pickle, too
        secret, token = (c.reveal() if c else None for c in self._credentials)
        self._session = self._make_session(secret, token)
        self._timeout_clients = _timeouts.TimeoutClients()
        self._service_clients = {}
        self._pool = self._make_pool()

    def _limit_scope(self) -> tuple[str, ...]:
        """The limiter's account (rate_limit=): Bedrock's quotas are per account and
        region (https://docs.aws.amazon.com/bedrock/latest/userguide/quotas.html); the
        access key id and profile name (given, else from the environment) are hashed."""
        from zerda.llm._ratelimit import account_digest

        key_id = self._access_key_id or os.environ.get("AWS_ACCESS_KEY_ID")
        profile = self.profile or os.environ.get("AWS_PROFILE")
        return str(self.region), account_digest(key_id, profile)

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
            # The request is Zerda's, built from a checked history: on the fast path
            # botocore's walk of all of it (half of converse()'s CPU for a long history) is
            # skipped, and what the caller adds is still checked by botocore's validator
            # (fastpath._check_native).
            parameter_validation=not self._fast,
        )

    def _make_client(self, timeout: float | None = None) -> Any:
        """Other keyword options go to ``session.client(...)``; a botocore ``config=`` is
        merged over Zerda's (its settings win)."""
        extra = dict(self.options)
        config = self._config(timeout)
        if extra.get("config") is not None:
            config = config.merge(extra.pop("config"))
        # botocore's client cannot say whether it validates (meta.config drops the setting).
        self._checks_native = self._fast and not config.parameter_validation
        client = self._session.client(
            "bedrock-runtime",
            region_name=self.region,
            endpoint_url=self.base_url,
            config=config,
            **extra,
        )
        self._register_handlers(client)
        return client

    def _register_handlers(self, client: Any) -> None:
        """The handlers Zerda registers on a client it built (botocore's event system)."""
        if self._checks_native:
            _fast._register_prebuilt(client)
        if self._fast:
            _fast._register_reader(client)
        if _timeouts.per_request_timeouts():
            _timeouts.register(client)
        _logs.watch_sent(self, client)
        _logs.install()  # on the loggers botocore created since

    def _make_async_client(self) -> Any:
        return self.client

    @property
    def async_client(self) -> Any:
        """The same client: boto3 has no async client, and its clients are thread-safe."""
        return self.client

    def _sender(self, kwargs: dict[str, Any], operation: str) -> tuple[Any, dict[str, Any]]:
        """The client a call goes through and the arguments it sends: checked, prebuilt,
        with the call's own timeout (see :mod:`timeouts`)."""
        kwargs, timeout = split_timeout(kwargs)
        client, sent = self._client_for(timeout)
        self._check_native(client, operation, kwargs)
        call = self._prebuilt(kwargs)
        return client, call if sent is None else _timeouts.with_timeout(call, sent)

    def _client_for(self, timeout: float | None) -> tuple[Any, float | None]:
        """The client for a call's timeout, and the timeout to send with the request: the
        interface's client sends it as that request's read timeout (timeouts.py); on an
        older botocore, a client built with it (the last few kept) needs none."""
        if timeout is None or timeout == self.timeout:
            return self.client, None
        if self._session is None:
            raise InvalidRequestError(
                "timeout=: botocore sets timeouts per client, and the client= passed "
                "in is the caller's; build it with botocore.config.Config(read_timeout=...)"
            )
        if _timeouts.per_request_timeouts():
            return self.client, timeout
        self._check_open()
        with self._lock:
            return self._timeout_clients.get(timeout, self._make_client), None

    def _close_resources(self) -> None:
        """Closes the per-timeout clients and stops the async methods' thread pool (idle
        threads exit; a call running in one finishes first)."""
        with self._lock:
            clients = self._timeout_clients.take_all()
            clients += self._service_clients.values()
            self._service_clients = {}
        for client in clients:
            client.close()
        self._pool.shutdown(wait=False)

    def _watch_secrets(self) -> None:
        """The AWS secrets given, and the environment's, out of every log record
        (logs.py); those of the credential chain are watched as requests carry them."""
        given = [secret.reveal() for secret in self._secrets]
        _logs.watch(self, [*given, *_logs.environment_secrets()])
        _logs.install()  # the tokens in botocore's records, whatever their source

    def _redact(self, text: str) -> str:
        """Also every AWS secret watched (logs.py): those the credential chain found, that
        a request carried, included."""
        return super()._redact(_logs.redact(self, text))

    # --- request ------------------------------------------------------------------------

    def _build_request(self, req: Request) -> dict[str, Any]:
        messages = _map._map_messages(req.messages, self.traits.tool_name, self._replays_hosted)
        kwargs: dict[str, Any] = {"modelId": self.model, "messages": messages}
        if req.system:
            kwargs["system"] = _map._map_system(req)
        inference = _map._map_options(req)
        if inference:
            kwargs["inferenceConfig"] = inference
        natives = {kind: h.native for kind, h in self.traits.hosted.items()}
        tool_config = _map._map_tools(req, messages, natives)
        if tool_config and req.cache_tools and req.tools:
            tool_config = {**tool_config, "tools": [*tool_config["tools"], _map._CACHE_POINT]}
        if tool_config:
            kwargs["toolConfig"] = tool_config
        output = self._native_output(req)
        if output:
            kwargs["outputConfig"] = output
        for key, value in _map._map_reasoning(req.reasoning).items():
            # outputConfig may hold the structured-output format already: merged.
            kwargs[key] = {**kwargs.get(key, {}), **value}
        kwargs = _map._merge_native(kwargs, req.native)
        if req.timeout is not None:  # taken out by _call: it picks the client (_client_for)
            kwargs["timeout"] = req.timeout
        return kwargs

    def _map_response_format(self, output: OutputSpec) -> dict[str, Any]:
        """``outputConfig.textFormat``: the schema as JSON text, closed objects
        (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputFormat.html)."""
        from zerda.llm._strict_schema import to_strict_schema

        owner = f"response_format {output.name!r}"
        schema = to_strict_schema(output.answer_schema, owner, dialect="anthropic")
        definition: dict[str, Any] = {"name": output.name, "schema": json.dumps(schema)}
        if output.description:
            definition["description"] = output.description
        return {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}}

    # --- calls --------------------------------------------------------------------------

    def _retry_after(self, exc: BaseException) -> float | None:
        from zerda.llm.wires.bedrock.errors import _retry_after

        return _retry_after(exc)

    def _check_native(self, client: Any, operation: str, kwargs: dict[str, Any]) -> None:
        """What botocore would have checked, on the clients Zerda built without it."""
        if getattr(self, "_checks_native", False):
            _fast._check_native(client, operation, kwargs)

    def _prebuilt(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``converse`` / ``converse_stream``: on the clients Zerda built,
        the history and system blocks JSON-encoded once (:func:`fastpath._split_prebuilt`)."""
        return _fast._split_prebuilt(kwargs) if getattr(self, "_checks_native", False) else kwargs

    def _call(self, kwargs: dict[str, Any]) -> Any:
        client, call = self._sender(kwargs, "Converse")
        return self._retrying(lambda: client.converse(**call))

    async def _call_async(self, kwargs: dict[str, Any]) -> Any:
        import asyncio  # loaded by now: this runs on an event loop; kept out of import time

        loop = asyncio.get_running_loop()
        client, call = self._sender(kwargs, "Converse")  # built here, not in a pool thread
        send = functools.partial(client.converse, **call)
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
                    # One attempt: llm.batch's calls are retried by Zerda (_batch_call).
                    retries={"mode": "standard", "total_max_attempts": 1}
                )
                if service == "s3" and endpoint is not None:
                    config = config.merge(Config(s3={"addressing_style": "path"}))
                client = session.client(
                    service, region_name=self.region, endpoint_url=endpoint, config=config
                )
                _logs.watch_sent(self, client)
                self._service_clients[service] = client
            return self._service_clients[service]

    def _batch_protocol(self) -> BatchProtocol:
        # Imported here: building an interface (import + client, benchmarks/bench_imports.py)
        # does not load the batch machinery (zerda.llm.batch, the JSONL writer).
        from zerda.llm.wires.bedrock.batch import BedrockBatch

        return BedrockBatch(self)

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
        # Text blocks and citationsContent text, server calls, citations (hosted.py).
        keep = _map._keep_reasoning
        text, hosted = _hosted.read_blocks(blocks, self._hosted_kinds(), keep)
        shown = "".join(_map._reasoning_text(b.get("reasoningContent")) for b in blocks)
        reasoning = [
            r for b in blocks if "reasoningContent" in b if (r := keep(b["reasoningContent"]))
        ]
        data: dict[str, Any] = {"reasoning": reasoning} if reasoning else {}
        content = _hosted.provider_content(hosted)
        if content is not None:
            data["content"] = content
        return self._make_result(
            text or None,
            tools.parse_bedrock_tool_calls([b for b in blocks if not _hosted.is_server_use(b)]),
            raw.get("stopReason"),
            _map._map_usage(raw.get("usage")),
            {"bedrock": data} if data else None,
            shown,
            server_tool_calls=hosted.calls or None,
            citations=hosted.citations or None,
        )

    def _raw_json(self, raw: Any) -> Any:
        """include_raw=True: the body Bedrock sent (botocore's dict, less its
        ResponseMetadata, blobs as base64 text); a stream's events as botocore yields them."""
        from zerda.llm.wires.bedrock.hosted import body_json

        return body_json(raw) if isinstance(raw, dict) else super()._raw_json(raw)

    def _hosted_kinds(self) -> dict[str, str]:
        """Native system tool name -> unified hosted type (the registry row's traits), built
        once (a stream asks for it on every event)."""
        kinds: dict[str, str] | None = self.__dict__.get("_kinds")
        if kinds is None:
            kinds = {h.native: kind for kind, h in self.traits.hosted.items()}
            self.__dict__["_kinds"] = kinds
        return kinds

    def _replays_hosted(self, message: dict[str, Any]) -> bool:
        """Whether an assistant message's kept answer blocks (server calls, their results,
        citations) go back as they came (hosted.replay_content): when it holds them and
        this model runs each system tool they call (Nova's blocks are not sent to Claude on
        this row: another model gets their readable text, as another provider does)."""
        content = _hosted.native_content(message.get("provider_data"))
        if content is None:
            return False
        runs = {h.native: h.models for h in self.traits.hosted.values()}
        return all(
            not runs.get(name) or re.search(runs[name], str(self.model))
            for name in _hosted.server_names(content)
        )

    def _map_stop_reason(self, native: Any) -> str:
        return _map._STOP_REASONS.get(native, "other")

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        from botocore import exceptions as bex

        from zerda.llm.wires.bedrock.errors import _map_client_error, _map_transport_error

        if isinstance(exc, bex.ClientError):
            return _map_client_error(exc)
        return _map_transport_error(exc)

    # --- streaming ----------------------------------------------------------------------

    def _start_stream(self, client: Any, call: dict[str, Any]) -> _Events:
        """One attempt: the request, then its first event. Until that event arrives nothing
        has reached the caller, so a failure may be retried."""
        from zerda.llm.wires.bedrock.stream import _Events

        stream = client.converse_stream(**call)["stream"]
        events = _Events(stream, fast=self._fast)
        try:
            events.prefetch()
        except BaseException:
            events.close()
            raise
        return events

    def _open_stream(self, kwargs: dict[str, Any]) -> _Events:
        client, call = self._sender(kwargs, "ConverseStream")
        return self._retrying(lambda: self._start_stream(client, call))

    @asynccontextmanager
    async def _open_stream_async(
        self, kwargs: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """The blocking event stream runs in the pool; its events reach the loop through an
        asyncio queue (``call_soon_threadsafe``), so the loop never waits on a socket."""
        client, call = self._sender(kwargs, "ConverseStream")  # built here, not in a pool thread
        events = await self._retrying_async(lambda: self._start_stream_async(client, call))
        from zerda.llm.wires.bedrock.pump import _StreamPump

        pump = _StreamPump()
        pump.start(self._pool, events)
        try:
            yield pump.events()
        finally:
            pump.stop()

    async def _start_stream_async(self, client: Any, call: dict[str, Any]) -> _Events:
        import asyncio

        job = self._pool.submit(self._start_stream, client, call)
        try:
            return await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            # The attempt may still be running in its thread: whatever it opens is closed.
            from zerda.llm.wires.bedrock.stream import _close_opened

            job.add_done_callback(_close_opened)
            raise

    def _feed(self, acc: StreamAccumulator, chunk: Any) -> list[dict[str, Any]]:
        feed = self.__dict__.get("_feed_chunk")
        if feed is None:  # the first chunk of the first stream: stream.py, kept (as _kinds)
            from zerda.llm.wires.bedrock import stream

            feed = self.__dict__["_feed_chunk"] = stream.feed
        result: list[dict[str, Any]] = feed(acc, chunk, self._hosted_kinds())
        return result


# --- batch ----------------------------------------------------------------------------

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
