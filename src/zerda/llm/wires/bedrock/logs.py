"""The SDKs' log records with AWS secrets redacted: the AWS rows' (Bedrock's, and Claude on
Bedrock's, whose SDK signs with botocore too).

At DEBUG botocore logs each request whole: ``botocore.auth`` the canonical request it signs
(an ``x-amz-security-token:`` line, the session token) and ``botocore.endpoint`` the
prepared request (its ``X-Amz-Security-Token`` header, or a Bedrock API key's
``Authorization: Bearer``); ``botocore.parsers`` logs the answers, which may echo what was
sent. Two redactions, in one filter on those loggers:

- **every token botocore writes in a header or a signed line**, whatever credentials it
  came from (the environment, a profile, SSO, a container or instance role, one refreshed
  since), by its place in the text (:data:`_TOKEN_PLACES`);
- **the secrets interfaces hold** (given to the constructor, read from the environment, or
  seen in a request an interface sent), anywhere in a record, as long as that interface
  lives (:meth:`_LogRedactor.watch`).

A logger filter sees only the records of its own logger, so the filter sits on every
logger of the SDKs involved, those created later included (:meth:`_LogRedactor.install`
runs again whenever an AWS interface is built or unpickled, builds a boto3 client, or
watches a new secret). Filters run only for records a logger emits: nothing is formatted
unless DEBUG is on; a filter that fails lets the record through unchanged, never raises.
"""

from __future__ import annotations

import collections
import logging
import os
import re
import threading
import weakref
from collections.abc import Iterable
from typing import Any

# The loggers of the SDKs an AWS call goes through, and their HTTP layers (Zerda's own log
# only what each interface's _redact scrubbed).
_PREFIXES = (
    "botocore",
    "boto3",
    "s3transfer",
    "urllib3",
    "anthropic",
    "httpx",
    "httpcore",
)
# Created here when absent, so that they have the filter before the first record.
_LOGGERS = (
    "botocore.auth",
    "botocore.endpoint",
    "botocore.httpsession",
    "botocore.hooks",
    "botocore.parsers",
    "botocore.retryhandler",
    "botocore.credentials",
    "botocore.utils",
    "botocore.awsrequest",
    "urllib3.connectionpool",
)

# Where botocore writes a token: the header in a request's repr ('X-Amz-Security-Token':
# b'...'), its canonical-request line (x-amz-security-token:...), a presigned URL's query
# (X-Amz-Security-Token=...), and a bearer Authorization header (a Bedrock API key, sent as
# "Authorization: Bearer <key>": https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html).
_TOKEN_PLACES = re.compile(
    r"""(?ix)
    ( x-amz-security-token ['"]? [ \t]* [:=] [ \t]* b?['"]?
    | authorization ['"]? [ \t]* [:=] [ \t]* b?['"]? bearer [ \t]+ )
    [^'"\s&,;}>]+
    """
)
_MIN_LENGTH = 4  # shorter strings are no credential, and would blank unrelated text


class _LogRedactor(logging.Filter):
    """The one filter on the SDKs' loggers (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._counts: collections.Counter[str] = collections.Counter()
        self._secrets: tuple[str, ...] = ()  # read by filter() without the lock
        self._owners: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self._filtered: set[str] = set()
        self._gone: collections.deque[str] = collections.deque()  # see _discard
        self._lock = threading.Lock()

    def watch(self, owner: Any, secrets: Iterable[Any]) -> None:
        """Redacts ``secrets`` (strings; anything else is no secret of a record's text)
        while ``owner`` lives, and puts the filter on the SDKs' loggers."""
        wanted = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_LENGTH}
        # Every request of a client is seen here (watch_sent): most carry no secret, or the
        # ones already watched, and return before the lock.
        known = self._owners.get(owner)
        if not wanted or (known is not None and wanted <= known):
            return
        with self._lock:
            held = self._owners.setdefault(owner, set())
            new = wanted - held
            for secret in new:
                held.add(secret)
                self._counts[secret] += 1
                weakref.finalize(owner, self._discard, secret)
            if new:
                self._publish()
        if new:
            self.install()

    def _discard(self, secret: str) -> None:
        """An owner was collected. A finalizer runs wherever the garbage collector does,
        maybe while this thread holds the lock: the secret is only queued (an atomic
        append), and dropped by the next :meth:`_publish` (it is scrubbed meanwhile)."""
        self._gone.append(secret)

    def _publish(self) -> None:
        """Under the lock: the secrets of the owners collected since go, and the tuple
        filter() reads is made again, longest first (a secret holding another one is
        replaced whole)."""
        while self._gone:
            secret = self._gone.popleft()
            self._counts[secret] -= 1
            if self._counts[secret] <= 0:
                del self._counts[secret]
        self._secrets = tuple(sorted(list(self._counts), key=len, reverse=True))

    def install(self) -> None:
        """Puts the filter on every logger of :data:`_PREFIXES` not yet filtered."""
        names = [*_LOGGERS, *logging.root.manager.loggerDict.copy()]  # a copy: atomic
        for name in names:
            if name not in self._filtered and name.split(".")[0].startswith(_PREFIXES):
                logging.getLogger(name).addFilter(self)
                self._filtered.add(name)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
            redacted = self.redact(message)
        except Exception:  # noqa: BLE001 - a filter must never fail the caller's logging call
            return True
        if redacted != message:
            record.msg, record.args = redacted, None
        return True

    def redact(self, text: str, owner: Any = None) -> str:
        """``text`` with every token in :data:`_TOKEN_PLACES` and every watched secret
        (``owner``'s only, when given) replaced by ``***``."""
        text = _TOKEN_PLACES.sub(r"\1***", text)
        secrets = self._secrets if owner is None else self._owned(owner)
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    def _owned(self, owner: Any) -> list[str]:
        with self._lock:
            return sorted(self._owners.get(owner, ()), key=len, reverse=True)


_LOG_REDACTOR = _LogRedactor()


def watch(owner: Any, secrets: Iterable[Any]) -> None:
    """See :meth:`_LogRedactor.watch`."""
    _LOG_REDACTOR.watch(owner, secrets)


def redact(owner: Any, text: str) -> str:
    """``text`` without any token in a header or signed line, or any secret watched for
    ``owner`` (an interface's error messages: another's short secret must not blank them)."""
    return _LOG_REDACTOR.redact(text, owner)


# --- the secrets of the environment, and those a request carries ----------------------------

# The variables botocore (and the anthropic SDK's Bedrock client) read credentials from
# (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html;
# AWS_SECURITY_TOKEN is botocore's older name of the session token).
_ENVIRONMENT = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
)


def environment_secrets() -> list[str]:
    """The AWS secrets in this process's environment (Lambda's and ECS's way to pass them)."""
    return [os.environ[name] for name in _ENVIRONMENT if os.environ.get(name)]


def install() -> None:
    """The filter on the SDKs' loggers created since (an interface builds a client)."""
    _LOG_REDACTOR.install()


def watch_sent(owner: Any, client: Any) -> None:
    """On ``client`` (a boto3 client Zerda built): the session token, or a Bedrock API key,
    of each request it sends is watched for ``owner``, however botocore found it (the
    environment, a profile, SSO, a role, a refresh), so that an answer echoing it is
    scrubbed too. ``before-send`` is botocore's event for a signed request about to go
    (https://boto3.amazonaws.com/v1/documentation/api/latest/guide/events.html)."""
    ref = weakref.ref(owner)

    def seen(request: Any, **_: Any) -> None:
        target = ref()
        if target is not None:
            watch_headers(target, request.headers)

    client.meta.events.register("before-send", seen)


def watch_headers(owner: Any, headers: Any) -> None:
    """The session token, or a Bedrock API key, in a signed request's ``headers`` (any
    mapping with a case-insensitive ``get``: botocore's, httpx's), watched for ``owner``."""
    token = _header_text(headers.get("X-Amz-Security-Token"))
    scheme, _space, bearer = (_header_text(headers.get("Authorization")) or "").partition(" ")
    watch(owner, [token, bearer if scheme.lower() == "bearer" else None])


def _header_text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None
