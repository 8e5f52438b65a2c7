"""Failures in Zerda's error shape, with no secret in them.

:meth:`Failures._to_error` maps any exception to a :class:`~zerda.llm.errors.ZerdaError`
(the wire's ``_map_error``, else an SDK's refusal of a ``**native`` keyword, else
``unknown``); :meth:`Failures._fail` logs it and returns the error result or raises it.
Every message and every exception chained to a raised one is scrubbed of the API key and
the row's secret options first.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zerda.llm import _telemetry
from zerda.llm.errors import (
    AuthenticationError,
    InvalidRequestError,
    UnknownError,
    ZerdaError,
    error_result,
)
from zerda.llm.interface._host import Host

if TYPE_CHECKING:
    from zerda.llm._stream import StreamAccumulator

logger = logging.getLogger("zerda")

# An SDK method's own refusal of a keyword it does not take (Python's TypeError for a
# call with an unexpected keyword): the ``**native`` escape hatch reached a wall.
_UNEXPECTED_KEYWORD = re.compile(r"got an unexpected keyword argument '([^']+)'")


# Credentials the SDK looked for and did not find (no key, no profile, no ADC): what to set.
# Matched by class, so that no SDK is imported here.
_AWS_HINT = (
    "AWS credentials were not found: set AWS_PROFILE (a profile that `aws configure` or "
    "`aws sso login` wrote) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass profile= "
    "or aws_access_key_id= and aws_secret_access_key="
)
_GOOGLE_HINT = (
    "Google credentials were not found: run `gcloud auth application-default login`, set "
    "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or pass credentials="
)
_CREDENTIAL_HINTS = {
    ("botocore.exceptions", "NoCredentialsError"): _AWS_HINT,
    ("botocore.exceptions", "PartialCredentialsError"): _AWS_HINT,
    ("botocore.exceptions", "ProfileNotFound"): _AWS_HINT,
    ("google.auth.exceptions", "DefaultCredentialsError"): _GOOGLE_HINT,
}


def _missing_package(exc: BaseException) -> ZerdaError | None:
    """A package an optional feature needs is not installed: the error names the extra that
    installs it (read from zerda-llm's own metadata), never ``unknown``."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    extra, dist = _extra_installing(exc.name.partition(".")[0])
    fix = f'pip install "zerda-llm[{extra}]"' if extra else f"pip install {dist}"
    return InvalidRequestError(f"{exc.name!r} is not installed, and this call needs it: {fix}")


def _extra_installing(module: str) -> tuple[str | None, str]:
    """(the zerda-llm extra that requires the distribution providing ``module``, or None;
    that distribution's name, where the environment knows it, else the module's)."""
    import importlib.metadata as md  # on this error path only

    try:
        owners = md.packages_distributions().get(module) or [module]
        requirements = md.requires("zerda-llm") or []
    except Exception:  # noqa: BLE001 - metadata unreadable: the plain pip hint
        return None, module
    names = {_normal(o) for o in owners}
    extras = []
    for text in requirements:
        name = _normal(re.split(r"[\s\[<>=!~;]", text, maxsplit=1)[0])
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", text)
        if name in names and extra:
            extras.append(extra.group(1))
    # The extra of the feature itself, not one that bundles several (all, demo) or the dev tools.
    own = [e for e in extras if e not in ("all", "demo", "dev")]
    return (own or extras or [None])[0], owners[0]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _with_credentials_hint(err: ZerdaError, exc: BaseException) -> ZerdaError:
    """``err`` as an ``authentication`` error that says what to set, when ``exc`` is an SDK's
    "no credentials" (which no wire maps, or maps without the hint)."""
    hint = next(
        (
            _CREDENTIAL_HINTS[(k.__module__, k.__name__)]
            for k in type(exc).__mro__
            if (k.__module__, k.__name__) in _CREDENTIAL_HINTS
        ),
        None,
    )
    if hint is None:
        return err
    if not isinstance(err, AuthenticationError):
        err = AuthenticationError(err.message, provider=err.provider)
    err.message = f"{err.message} ({hint})"
    return err


class Failures(Host):
    """The error shape of every failure, and redaction."""

    def _map_error(self, exc: BaseException) -> ZerdaError | None:
        """The SDK's exception as a ZerdaError; None when it is not the SDK's."""
        return None

    def _to_error(self, exc: BaseException) -> ZerdaError:
        if isinstance(exc, ZerdaError):
            err = exc
        else:
            try:
                mapped = self._map_error(exc)
            except Exception:  # noqa: BLE001 - a body no mapping foresaw must not escape
                mapped = None
            err = (
                mapped
                or _refused_argument(exc)
                or _missing_package(exc)
                or UnknownError(f"{type(exc).__name__}: {exc}", provider=self.provider)
            )
            err = _with_credentials_hint(err, exc)
        if err.provider is None:
            err.provider = self.provider
        err.message = self._redact(err.message)
        err.args = (err.message,)
        return err

    def _redact(self, text: str) -> str:
        """``text`` without the API key or any secret option of the row (an AWS secret key,
        an access token, the token a google.auth ``credentials`` object holds) in it."""
        options = (self.options.get(o) for o in self.spec.secret_options)
        secrets = [self.api_key, *(_secret_text(v) for v in options)]
        for secret in secrets:
            if isinstance(secret, str) and len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def _fail(
        self,
        exc: BaseException,
        raise_errors: bool | None,
        content: str | None = None,
        reasoning: str | None = None,
    ) -> dict[str, Any]:
        err = self._to_error(exc)
        # WARNING: a failed call must not pass unnoticed (print(result["content"]) shows
        # only None); the message is already scrubbed of secrets.
        logger.warning("%s call failed: %s: %s", self.provider, err.type, err.message)
        if self.raise_errors if raise_errors is None else raise_errors:
            self._scrub_chain(exc)
            if err is exc:
                raise err
            raise err from exc
        return error_result(err, content, reasoning)

    def _stream_failed(
        self, span: Any, exc: BaseException, raise_errors: bool | None, acc: StreamAccumulator
    ) -> dict[str, Any]:
        """:meth:`_fail` for a stream, keeping the text and reasoning received; a raised
        error ends the stream's span first."""
        try:
            return self._fail(exc, raise_errors, acc.content, acc.reasoning_text)
        except ZerdaError as err:
            _telemetry.end_chat(span, None, err)
            raise

    def _scrub_chain(self, exc: BaseException) -> None:
        """Removes secrets from the text of every exception ``exc`` chains to (its
        __cause__ and __context__, theirs...): a provider may echo the key in an error, and
        ``logger.exception`` prints the whole chain."""
        seen: set[int] = set()
        todo: list[BaseException | None] = [exc]
        while todo:
            current = todo.pop()
            if current is None or id(current) in seen:
                continue
            seen.add(id(current))
            _scrub_exception(current, self._redact)
            todo += [current.__cause__, current.__context__]


def _secret_text(value: Any) -> Any:
    """A secret option's text: the option itself, or the access token of a credentials
    object (google.auth credentials keep theirs in ``.token``)."""
    return value if isinstance(value, str) else getattr(value, "token", None)


def _refused_argument(exc: BaseException) -> ZerdaError | None:
    """``**native`` arguments go to the SDK call as they are; when its method refuses one,
    that is the caller's invalid request, naming the argument (never an unknown error)."""
    if not isinstance(exc, TypeError):
        return None
    match = _UNEXPECTED_KEYWORD.search(str(exc))
    if match is None:
        return None
    return InvalidRequestError(
        f"the SDK call refuses the argument {match.group(1)!r} ({exc}); extra keyword "
        "arguments go to it unchanged, so only names it takes can be passed",
        capability=True,  # another row's SDK may take it: a fallback moves on
    )


def _scrub_exception(exc: BaseException, redact: Callable[[str], str]) -> None:
    """``exc``'s args and text attributes (``message``, ``body``, ``error``... which SDK
    exceptions' str and repr show) with secrets replaced by ``***``."""
    try:
        exc.args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)
        for name, value in list(getattr(exc, "__dict__", {}).items()):
            if isinstance(value, str) and redact(value) != value:
                # object.__setattr__: some SDK exceptions are frozen dataclasses (mistralai).
                object.__setattr__(exc, name, redact(value))
    except (AttributeError, TypeError):  # an exception type with read-only fields
        pass
