"""AWS secrets stay out of every log record (issue 34, items 3 and 11).

Item 3: at DEBUG, botocore logs each request it signs (the canonical request and the
headers, ``X-Amz-Security-Token`` included) and the SDKs log their requests and answers.
No record of any logger, botocore's, anthropic's and httpx's included, may carry the AWS
session token, the secret access key or a Bedrock API key, whatever the credentials come
from: the environment (Lambda, ECS), a profile or ``credential_process`` of the credential
chain (SSO and the like), the constructor, and in an interface unpickled in a worker process.

Item 11: a credential that is not a string (bytes) is refused at construction with a
``TypeError``, as ``api_key`` is, and never reaches the log scrubbing that every Bedrock
interface of the process shares.

Every row signing with AWS credentials is found through the registry; every call runs
against MockLLMServer on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import subprocess
import sys
import textwrap
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import BaseLLMInterface, create_interface, registry
from zerda.testing import MockLLMServer

KEY_ID = "AKIDZERDAMARKER1"
SECRET = "zerdaSECRETmarker/0123456789abcdefghijklmn"
TOKEN = "FwoGZXIvYXdzEZERDAtokenMARKER//////////wEaDExample+session/token=="
API_KEY = "ABSKzerdaBEDROCKapiKEYmarker0123456789"
MARKERS = (SECRET, TOKEN, API_KEY)

# The options each AWS-signing wire names its credentials with (the rows' own spellings).
CREDENTIAL_OPTIONS = {
    "bedrock": ("aws_access_key_id", "aws_secret_access_key", "aws_session_token"),
    "anthropic-bedrock": ("aws_access_key", "aws_secret_key", "aws_session_token"),
}
ROWS = [name for name in registry.NAMES if registry.get(name).wire in CREDENTIAL_OPTIONS]
ENVIRONMENT = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


@pytest.fixture(autouse=True)
def _fresh_markers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Markers of this test only: an interface of an earlier test, still alive, watches its
    own, and would hide a leak of the same value here."""
    tag = uuid.uuid4().hex[:10].upper()
    names = {
        "SECRET": f"zerdaSECRET{tag}/0123456789abcdefghij",
        "TOKEN": f"FwoGZXIvYXdzE{tag}tokenMARKER//////////wEaDExample+session/token==",
        "API_KEY": f"ABSKzerdaBEDROCK{tag}apiKEYmarker",
    }
    for name, value in names.items():
        monkeypatch.setitem(globals(), name, value)
    monkeypatch.setitem(globals(), "MARKERS", tuple(names.values()))
    # The anthropic SDK keeps one boto3 session per set of arguments (an lru_cache in its
    # private _auth module), whose credentials botocore caches: without this, a later test
    # would sign with an earlier test's chain credentials.
    auth = sys.modules.get("anthropic.lib.aws._auth")
    getattr(getattr(auth, "_get_session", None), "cache_clear", lambda: None)()


def test_the_aws_rows_are_found() -> None:
    assert {registry.get(name).wire for name in ROWS} == set(CREDENTIAL_OPTIONS)


# --- capturing every record ---------------------------------------------------------------


class Everything(logging.Handler):
    """Every record that reaches the root logger, as every text a handler could write."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self.names: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.names.append(record.name)
        self.texts += [record.getMessage(), str(record.msg), repr(record.args)]
        if record.exc_info:
            self.texts.append("".join(traceback.format_exception(*record.exc_info)))


@pytest.fixture
def logs() -> Iterator[Everything]:
    """Every logger of the process at DEBUG (the SDKs' own, present and future), captured."""
    manager = logging.root.manager
    names = [n for n, v in manager.loggerDict.items() if isinstance(v, logging.Logger)]
    saved = {n: logging.getLogger(n).level for n in names}
    saved[""] = logging.root.level
    handler = Everything()
    logging.root.addHandler(handler)
    logging.root.setLevel(logging.DEBUG)
    for name in names:
        logging.getLogger(name).setLevel(logging.DEBUG)
    yield handler
    logging.root.removeHandler(handler)
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)
    for name, logger in manager.loggerDict.items():  # created during the test
        if isinstance(logger, logging.Logger) and name not in saved:
            logger.setLevel(logging.NOTSET)


def assert_no_secret(texts: list[str], where: str) -> None:
    for text in texts:
        for marker in MARKERS:
            assert marker not in text, f"{where}: a secret in {text[:400]!r}"


# --- where the credentials come from ------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_ambient_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials or profile of the machine running the tests, no metadata endpoint."""
    for name in (*ENVIRONMENT, "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Lambda's and ECS's way: the three variables."""
    for name, value in zip(ENVIRONMENT, (KEY_ID, SECRET, TOKEN), strict=True):
        monkeypatch.setenv(name, value)


def profile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The shared credentials file, through AWS_PROFILE."""
    path = tmp_path / "credentials"
    path.write_text(
        f"[zerda]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
        f"aws_session_token = {TOKEN}\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(path))
    monkeypatch.setenv("AWS_PROFILE", "zerda")


def credential_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A provider of the chain that returns temporary, refreshable credentials (as SSO and
    the container provider do): botocore runs the configured command."""
    answer = {
        "Version": 1,
        "AccessKeyId": KEY_ID,
        "SecretAccessKey": SECRET,
        "SessionToken": TOKEN,
        "Expiration": "2999-01-01T00:00:00Z",
    }
    script = tmp_path / "creds.py"
    script.write_text(f"import json\nprint(json.dumps({answer!r}))\n")
    config = tmp_path / "config"
    config.write_text(f"[profile zerda]\ncredential_process = {sys.executable} {script}\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_PROFILE", "zerda")


SOURCES = {"environment": environment, "profile": profile, "credential_process": credential_process}


def options(server: MockLLMServer, name: str, given: bool) -> dict[str, Any]:
    """The server's options for ``name`` without its credentials; the marker ones when
    ``given`` (constructor credentials)."""
    names = CREDENTIAL_OPTIONS[registry.get(name).wire]
    settings = {k: v for k, v in server.client_options(name).items() if k not in names}
    if given:
        settings.update(zip(names, (KEY_ID, SECRET, TOKEN), strict=True))
    return {"max_retries": 1, "timeout": 10.0, **settings}


# --- the calls ----------------------------------------------------------------------------


def every_call(
    llm: BaseLLMInterface,
    server: MockLLMServer,
    name: str,
    echoed: tuple[str, ...] | None = None,
) -> list[str]:
    """generate, stream and their async twins, a retried 500, and an error whose message
    echoes the interface's secrets (as some providers' 4xx bodies echo what they were
    sent): the texts of their results and exceptions."""
    server.set_default(text="Done.")
    texts = [json.dumps(llm.generate("hi"))]
    texts.append(json.dumps(list(llm.stream("hi"))))

    async def both() -> None:
        texts.append(json.dumps(await llm.generate_async("hi")))
        texts.append(json.dumps([e async for e in llm.stream_async("hi")]))

    asyncio.run(both())
    server.enqueue_error(500, name, retry_after=0.01)
    texts.append(json.dumps(llm.generate("hi")))
    echo = " ".join(echoed or (TOKEN, SECRET))
    echo = f"The security token included in the request is invalid: {echo}"
    for _ in range(2):
        server.enqueue_error(403, name, message=echo, error_type="UnrecognizedClientException")
    texts.append(json.dumps(llm.generate("hi")))
    try:
        llm.generate("hi", raise_errors=True)
    except Exception as exc:  # noqa: BLE001 - searched below
        texts.append("".join(traceback.format_exception(exc)))
    return texts


def assert_signed_with_the_token(server: MockLLMServer, name: str, logs: Everything) -> None:
    """The checks prove something only if the token really was sent and signed at DEBUG."""
    sent = server.requests_for(name)
    assert sent and all("x-amz-security-token" in r.headers for r in sent)
    assert "botocore.auth" in logs.names


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("name", ROWS)
def test_chain_credentials_reach_no_log(
    server: MockLLMServer,
    logs: Everything,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    source: str,
) -> None:
    SOURCES[source](monkeypatch, tmp_path)
    llm = create_interface(name, model="m", **options(server, name, given=False))
    # What a request carries can be echoed back; a chain's secret key never leaves here.
    echoed = (TOKEN, SECRET) if source == "environment" else (TOKEN,)
    texts = every_call(llm, server, name, echoed)
    llm.close()
    assert_signed_with_the_token(server, name, logs)
    assert_no_secret(logs.texts, f"{name}, {source}: the logs")
    assert_no_secret(texts, f"{name}, {source}: results and exceptions")


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("name", ROWS)
def test_constructor_credentials_reach_no_log(
    server: MockLLMServer, logs: Everything, name: str
) -> None:
    llm = create_interface(name, model="m", **options(server, name, given=True))
    texts = every_call(llm, server, name)
    llm.close()
    assert_signed_with_the_token(server, name, logs)
    assert_no_secret(logs.texts, f"{name}, constructor: the logs")
    assert_no_secret(texts, f"{name}, constructor: results and exceptions")


API_KEY_ROWS = [name for name in ROWS if registry.get(name).wire == "anthropic-bedrock"]


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("given", [True, False], ids=["api_key", "environment"])
@pytest.mark.parametrize("name", API_KEY_ROWS)
def test_a_bedrock_api_key_reaches_no_log(
    server: MockLLMServer,
    logs: Everything,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    given: bool,
) -> None:
    """A Bedrock API key (a bearer token), as ``api_key=`` or AWS_BEARER_TOKEN_BEDROCK, on
    the row whose SDK sends it over plain HTTP (botocore sends a bearer token only over
    HTTPS: the bedrock row's is checked on botocore's log records below)."""
    settings = options(server, name, given=False)
    if given:
        settings["api_key"] = API_KEY
    else:
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", API_KEY)
    llm = create_interface(name, model="m", **settings)
    texts = every_call(llm, server, name, echoed=(API_KEY,))
    llm.close()
    assert "authorization" in server.requests_for(name)[0].headers
    assert_no_secret(texts, f"{name}, API key: results and exceptions")
    assert_no_secret(logs.texts, f"{name}, API key: the logs")


BOTOCORE_RECORDS = [
    (
        "botocore.endpoint",
        "Sending http request: <AWSPreparedRequest headers={{'Authorization': b'Bearer {}'}}>",
    ),
    (
        "botocore.endpoint",
        "Sending http request: <AWSPreparedRequest headers={{'X-Amz-Security-Token': b'{}'}}>",
    ),
    ("botocore.auth", "CanonicalRequest:\nPOST\n/\n\nhost:x\nx-amz-security-token:{}\n"),
    ("botocore.auth", "presigned https://x/?X-Amz-Security-Token={}&X-Amz-Signature=ab"),
]


@pytest.mark.parametrize(("logger", "template"), BOTOCORE_RECORDS)
def test_botocores_records_of_any_token_are_scrubbed(
    server: MockLLMServer,
    logs: Everything,
    monkeypatch: pytest.MonkeyPatch,
    logger: str,
    template: str,
) -> None:
    """The places botocore writes a token it signs with, whatever token it is (one the
    chain refreshed since, one no interface was given): a Bedrock interface of the process
    scrubs them from botocore's records."""
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", API_KEY)
    llm = create_interface("bedrock", model="m", **options(server, "bedrock", given=True))
    assert llm.client is not None  # built: what it signs with is known
    other = "IQoJb3JpZ2luX2VjEOTHERtoken/abc+def=="
    logging.getLogger(logger).debug(template.format(other))
    logging.getLogger(logger).debug(template.format(API_KEY))
    llm.close()
    assert_no_secret(logs.texts, "botocore's records")
    assert not any(other in text for text in logs.texts), logs.texts[-3:]


# --- an interface unpickled in a worker ---------------------------------------------------

WORKER = textwrap.dedent(
    r"""
    import asyncio, json, logging, pickle, sys, traceback

    texts = []


    class Everything(logging.Handler):
        def emit(self, record):
            texts.extend([record.getMessage(), str(record.msg), repr(record.args)])
            if record.exc_info:
                texts.append("".join(traceback.format_exception(*record.exc_info)))


    logging.root.addHandler(Everything(logging.DEBUG))
    logging.root.setLevel(logging.DEBUG)
    llm = pickle.loads(sys.stdin.buffer.read())
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            logger.setLevel(logging.DEBUG)
    results = [llm.generate("hi"), list(llm.stream("hi"))]


    async def both():
        results.append(await llm.generate_async("hi"))
        results.append([e async for e in llm.stream_async("hi")])


    asyncio.run(both())
    results.append(llm.generate("hi"))  # the server echoes the secrets in this one's error
    llm.close()
    print(json.dumps({"texts": texts, "results": results}))
    """
)


@pytest.mark.parametrize("source", ["constructor", "environment"])
@pytest.mark.parametrize("name", ROWS)
def test_an_interface_unpickled_in_a_worker_logs_no_secret(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch, name: str, source: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    if source == "environment":
        env.update(zip(ENVIRONMENT, (KEY_ID, SECRET, TOKEN), strict=True))
    llm = create_interface(name, model="m", **options(server, name, source == "constructor"))
    data = pickle.dumps(llm)
    llm.close()
    server.set_default(text="Done.")
    for _ in range(4):
        server.enqueue(name, text="Done.")
    echo = f"The security token included in the request is invalid: {TOKEN} {SECRET}"
    for _ in range(2):
        server.enqueue_error(403, name, message=echo, error_type="UnrecognizedClientException")
    worker = subprocess.run(
        [sys.executable, "-c", WORKER],
        input=data,
        capture_output=True,
        env=env,
        timeout=110,
        check=False,
    )
    assert worker.returncode == 0, worker.stderr.decode()[-2000:]
    report = json.loads(worker.stdout)
    assert report["results"][0]["content"] == "Done."
    assert report["results"][-1]["error"]["type"] in ("authentication", "permission")
    assert all("x-amz-security-token" in r.headers for r in server.requests_for(name))
    assert any("CanonicalRequest" in t for t in report["texts"]), "botocore.auth not at DEBUG"
    assert_no_secret(report["texts"], f"{name}, unpickled ({source}): the worker's logs")
    assert_no_secret([json.dumps(report["results"])], f"{name}, unpickled: results")
    assert_no_secret([worker.stderr.decode()], f"{name}, unpickled: stderr")


# --- item 11: credentials that are not strings --------------------------------------------


@pytest.mark.parametrize(
    ("name", "option"),
    [(name, option) for name in ROWS for option in CREDENTIAL_OPTIONS[registry.get(name).wire]],
)
@pytest.mark.parametrize("value", [SECRET.encode(), 12345], ids=["bytes", "int"])
def test_a_credential_that_is_not_a_string_is_refused_at_construction(
    server: MockLLMServer, name: str, option: str, value: Any
) -> None:
    settings = options(server, name, given=True)
    settings[option] = value
    with pytest.raises(TypeError) as info:
        create_interface(name, model="m", **settings)
    message = str(info.value)
    assert option in message and type(value).__name__ in message, message
    assert SECRET not in message and "0123456789" not in message and "12345" not in message


@pytest.mark.parametrize("name", ROWS)
def test_a_refused_credential_leaves_other_interfaces_logging(
    server: MockLLMServer, logs: Everything, name: str
) -> None:
    """The refused value never reaches the scrubbing every AWS interface shares: the other
    interfaces of the process keep working with DEBUG on."""
    option = CREDENTIAL_OPTIONS[registry.get(name).wire][1]
    with pytest.raises(TypeError, match=option):
        create_interface(name, model="m", **{**options(server, name, True), option: b"xyzw1234"})
    server.set_default(text="Done.")
    for other in ROWS:
        llm = create_interface(other, model="m", **options(server, other, given=True))
        assert llm.generate("hi")["content"] == "Done."
        llm.close()
    assert "botocore.auth" in logs.names
