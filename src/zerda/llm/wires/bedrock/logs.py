"""botocore's log records, with the AWS secrets of live interfaces redacted."""

from __future__ import annotations

import collections
import logging
import threading


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
