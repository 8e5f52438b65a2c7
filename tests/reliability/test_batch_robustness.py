"""Batch jobs under faults (issue 34, items 4, 9, 12 and 15), on every row with a batch API
(``traits.batch`` in the registry), through the real SDKs against MockLLMServer:

- 4: a 503 on any batch call (``batch()``'s submission, ``status()``, ``wait()``'s polls,
  ``results()``, ``cancel()``, and their async twins) is retried per ``max_retries`` with
  generate's policy, then raised as the mapped ZerdaError chained from the SDK's exception;
- 9: an error body that echoes the key leaves no trace of it in the exception, its chain or
  its traceback, on every one of those calls;
- 12: ``wait(timeout=)`` is wall-clock time, the status request in flight included, and
  ends a job that never ends even with ``poll_interval=0``;
- 15: a result line the provider broke is that id's error result; the others get their
  answers.
"""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from zerda.llm import ServerError, ZerdaError, create_interface, registry
from zerda.llm.batch import BatchStatus
from zerda.llm.errors import error_result
from zerda.testing import MockLLMServer, RecordedRequest

BATCH_ROWS = [n for n in registry.NAMES if registry.get(n).traits.batch]
# Rows whose results come back in more than one way: each way has its own reader.
READERS = [(p, {}) for p in BATCH_ROWS] + [("gemini", {"input": "file"})]
# Bedrock batch inference reads from and writes to S3 (MockLLMServer emulates both).
OPTIONS: dict[str, dict[str, Any]] = {
    "bedrock": {
        "role_arn": "arn:aws:iam::123456789012:role/batch",
        "input_s3_uri": "s3://zerda-in/batches/",
        "output_s3_uri": "s3://zerda-out/results/",
    }
}
SECRET = "sk-ECHOED-batch-7373"
TOKEN = "FwoGZXIvYXdzEC-batch-session-4141"
REQUESTS = [
    {"id": f"q-{i}", "messages": [{"role": "user", "content": f"question {i}"}], "max_tokens": 50}
    for i in range(3)
]
ANSWERS = {f"q-{i}": f"answer to question {i}" for i in range(3)}
CALLS = ("submit", "status", "wait", "results", "cancel")


def echo(request: RecordedRequest) -> dict[str, Any]:
    """Every item is answered with the prompt it carried: results can be matched."""
    body = request.body
    last = (body.get("messages") or body.get("contents"))[-1]
    content = last.get("content", last.get("parts"))
    text = content if isinstance(content, str) else content[0]["text"]
    return {"text": f"answer to {text}", "usage": {"input_tokens": 4, "output_tokens": 3}}


def credentials(provider: str) -> dict[str, Any]:
    if registry.get(provider).wire == "bedrock":
        return {
            "aws_access_key_id": "AKIDZERDATEST",
            "aws_secret_access_key": SECRET,
            "aws_session_token": TOKEN,
        }
    return {"api_key": SECRET}


@pytest.fixture
def echoing(server: MockLLMServer) -> MockLLMServer:
    server.respond_with(echo)
    return server


@pytest.fixture(scope="module")
def made(module_server: MockLLMServer) -> Iterator[dict[str, Any]]:
    """The interfaces of the module, by provider and options."""
    interfaces: dict[str, Any] = {}
    yield interfaces
    for llm in interfaces.values():
        llm.close()


@pytest.fixture
def make(echoing: MockLLMServer, made: dict[str, Any]) -> Callable[..., Any]:
    """Interfaces on the server with the marker secrets, made once per provider and options
    for the module: an interface serves many calls, and building its SDK clients (boto3's
    above all) per test would cost more than the batch calls it makes."""

    def build(provider: str, **options: Any) -> Any:
        key = repr((provider, sorted(options.items())))
        if key not in made:
            options = {**echoing.client_options(provider), **credentials(provider), **options}
            made[key] = create_interface(provider, model="m", **options)
        return made[key]

    return build


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries (generate's policy: ``zerda.llm.base._sleep``), recorded
    instead of slept."""
    from zerda.llm import base

    seen: list[float] = []

    async def record_async(seconds: float) -> None:
        seen.append(seconds)

    monkeypatch.setattr(base, "_sleep", seen.append)
    monkeypatch.setattr(base, "_sleep_async", record_async)
    return seen


def ended_job(llm: Any, provider: str, **options: Any) -> Any:
    """A submitted job polled (``status()``) until it has ended, its results not read."""
    job = llm.batch(REQUESTS, **OPTIONS.get(provider, {}), **options)
    for _ in range(10):
        if job.status().done:
            return job
    raise AssertionError(f"the {provider} job did not end")


def faulted(
    llm: Any, provider: str, call: str, fault: Callable[[], None], *, is_async: bool
) -> Any:
    """Makes ``call`` with ``fault()`` queued just before it (so it hits ``call``'s first
    batch request); returns what the call returned, or raises what it raised."""
    options = OPTIONS.get(provider, {})
    if is_async:
        return asyncio.run(_faulted_async(llm, options, call, fault))
    if call == "submit":
        fault()
        return llm.batch(REQUESTS, **options)
    job = ended_job(llm, provider) if call == "results" else llm.batch(REQUESTS, **options)
    fault()
    if call == "wait":
        return job.wait(poll_interval=0)
    return {"status": job.status, "results": job.results, "cancel": job.cancel}[call]()


async def _faulted_async(
    llm: Any, options: dict[str, Any], call: str, fault: Callable[[], None]
) -> Any:
    if call == "submit":
        fault()
        return await llm.batch_async(REQUESTS, **options)
    job = await llm.batch_async(REQUESTS, **options)
    if call == "results":
        for _ in range(10):
            if (await job.status()).done:
                break
    fault()
    if call == "wait":
        return await job.wait(poll_interval=0)
    return await {"status": job.status, "results": job.results, "cancel": job.cancel}[call]()


def chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is f for f in found):
            continue
        found.append(current)
        todo += [current.__cause__, current.__context__]
    return found


# --- item 4: retries on every batch call ----------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_a_503_on_a_batch_call_is_retried_with_generates_policy(
    echoing: MockLLMServer,
    make: Callable[..., Any],
    waits: list[float],
    provider: str,
    call: str,
    is_async: bool,
) -> None:
    llm = make(provider, max_retries=2)

    def fault() -> None:
        for _ in range(2):  # two 503s: the third attempt (max_retries=2) gets through
            echoing.enqueue_batch_fault(provider, status=503, message="busy", retry_after=0.25)

    outcome = faulted(llm, provider, call, fault, is_async=is_async)

    assert echoing._batches.faults == []  # both 503s were answered
    assert waits == [0.25, 0.25]  # the Retry-After each asked for, as generate waits it
    if call in ("wait", "results"):
        assert {cid: r["content"] for cid, r in outcome.items()} == ANSWERS
    elif call == "submit":
        assert outcome.ids == list(ANSWERS)
    else:
        assert isinstance(outcome, BatchStatus)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_past_max_retries_a_batch_call_raises_the_mapped_zerda_error(
    echoing: MockLLMServer,
    make: Callable[..., Any],
    waits: list[float],
    provider: str,
    call: str,
    is_async: bool,
) -> None:
    llm = make(provider, max_retries=1)

    def fault() -> None:
        for _ in range(2):  # the call and its one retry
            echoing.enqueue_batch_fault(provider, status=503, message="busy")

    with pytest.raises(ServerError) as info:
        faulted(llm, provider, call, fault, is_async=is_async)

    err = info.value
    assert echoing._batches.faults == []  # tried twice: once, and its one retry
    assert len(waits) == 1 and 0 < waits[0] <= 0.5  # backoff: 0.5 s less up to 25% jitter
    assert (err.type, err.status_code, err.provider, err.retryable) == (
        "server",
        503,
        provider,
        True,
    )
    assert "busy" in err.message
    assert err.__cause__ is not None and not isinstance(err.__cause__, ZerdaError)


# --- item 9: no secret in any batch call's exception ----------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_a_key_echoed_in_a_batch_error_is_scrubbed_from_the_whole_chain(
    echoing: MockLLMServer, make: Callable[..., Any], provider: str, call: str, is_async: bool
) -> None:
    llm = make(provider, max_retries=0)
    message = f"Incorrect API key provided: {SECRET}"
    if "aws_session_token" in credentials(provider):
        message += f" (token {TOKEN})"

    def fault() -> None:
        echoing.enqueue_batch_fault(provider, status=401, message=message)

    with pytest.raises(ZerdaError) as info:
        faulted(llm, provider, call, fault, is_async=is_async)

    err = info.value
    assert err.type == "authentication"
    assert "Incorrect API key provided: ***" in err.message
    links = chain(err)
    assert len(links) >= 2  # chained to the SDK's exception, which is kept
    texts = ["".join(traceback.format_exception(err)), str(err), repr(err)]
    texts += [f"{e!s} {e!r} {e.args!r} {getattr(e, 'message', '')}" for e in links]
    for text in texts:
        assert SECRET not in text and TOKEN not in text, text[:400]


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_a_key_echoed_in_an_items_error_or_a_broken_line_is_scrubbed_from_the_results(
    echoing: MockLLMServer, make: Callable[..., Any], provider: str
) -> None:
    llm = make(provider, max_retries=0)
    echoing.enqueue_error(401, provider, message=f"Incorrect API key provided: {SECRET}")
    job = ended_job(llm, provider)  # the first item was refused, echoing the key
    break_results(echoing, "q-1", _broken_with_the_key)

    results = job.results()

    assert results["q-0"]["error"]["message"] == "Incorrect API key provided: ***"
    assert results["q-1"]["error"]["type"] == "server"
    assert results["q-2"]["content"] == ANSWERS["q-2"]
    assert SECRET not in json.dumps(results)


def _broken_with_the_key(entry: dict[str, Any]) -> Any:
    """A result line that quotes the key and is not JSON (inline results, JSON by nature:
    a usage that is the key, not an object)."""
    for name in _ID_FIELDS:
        if name in entry:
            return json.dumps({name: entry[name]})[:-1] + f', "oops": "{SECRET}'
    return {"metadata": entry["metadata"], "response": {"usageMetadata": SECRET}}


# --- item 12: wait's timeout is wall-clock time -----------------------------------------------


class _NeverEnds:
    """A row's own batch protocol, whose jobs never end: every poll really goes to the
    mock, and is reported in progress."""

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol
        self.polls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.protocol, name)

    def poll(self, batch_id: str) -> BatchStatus:
        self.polls += 1
        return _in_progress(self.protocol.poll(batch_id))

    async def poll_async(self, batch_id: str) -> BatchStatus:
        self.polls += 1
        return _in_progress(await self.protocol.poll_async(batch_id))


def _in_progress(status: BatchStatus) -> BatchStatus:
    return BatchStatus(status.id, "in_progress", "in_progress", status.total, 0, 0)


def never_ending(monkeypatch: pytest.MonkeyPatch, llm: Any) -> _NeverEnds:
    protocol = _NeverEnds(llm._batch_protocol())
    monkeypatch.setattr(type(llm), "_batch_protocol", lambda self: protocol)
    return protocol


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_wait_with_poll_interval_0_ends_a_job_that_never_ends(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    llm = make(provider, max_retries=0)
    job = llm.batch(REQUESTS, **OPTIONS.get(provider, {}))
    protocol = never_ending(monkeypatch, llm)
    started = time.monotonic()

    def sleep(seconds: float) -> None:  # the old loop counted sleeps of 0 s: forever
        if time.monotonic() - started > 15:
            raise AssertionError("wait(timeout=0.3) still polling after 15 s")

    with pytest.raises(TimeoutError, match=r"not done after 0\.3 s of waiting"):
        job.wait(poll_interval=0, timeout=0.3, sleep=sleep)
    assert protocol.polls >= 1
    assert time.monotonic() - started < 10  # 0.3 s, with room for a busy machine


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_async_wait_with_poll_interval_0_ends_a_job_that_never_ends(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    llm = make(provider, max_retries=0)

    async def main() -> None:
        job = await llm.batch_async(REQUESTS, **OPTIONS.get(provider, {}))
        never_ending(monkeypatch, llm)
        # The old loop never ended: the outer 15 s bound would raise its own TimeoutError,
        # without the message.
        await asyncio.wait_for(job.wait(poll_interval=0, timeout=0.3), 15)

    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"not done after 0\.3 s of waiting"):
        asyncio.run(main())
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_the_status_request_in_flight_counts_toward_waits_timeout(
    echoing: MockLLMServer, make: Callable[..., Any], provider: str, is_async: bool
) -> None:
    llm = make(provider, max_retries=0)
    options = OPTIONS.get(provider, {})

    def slow_statuses() -> None:
        for _ in range(3):  # each status answer takes 5 s
            echoing.enqueue_batch_fault(provider, delay=5.0)

    async def main() -> None:
        job = await llm.batch_async(REQUESTS, **options)
        slow_statuses()
        await job.wait(poll_interval=0.1, timeout=0.5)

    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"not done after 0\.5 s of waiting"):
        if is_async:
            asyncio.run(main())
        else:
            job = llm.batch(REQUESTS, **options)
            slow_statuses()
            job.wait(poll_interval=0.1, timeout=0.5)
    # 0.5 s; not the 5 s the first status answer takes (nor the old 6 polls: 30 s).
    assert time.monotonic() - started < 4.0


def test_wait_without_timeout_sleeps_the_poll_interval(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = make(BATCH_ROWS[0], max_retries=0)
    job = llm.batch(REQUESTS)
    slept: list[float] = []
    protocol = never_ending(monkeypatch, llm)

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 3:
            raise KeyboardInterrupt  # the caller stops waiting

    with pytest.raises(KeyboardInterrupt):
        job.wait(poll_interval=7.0, sleep=sleep)
    assert slept == [7.0, 7.0, 7.0] and protocol.polls == 3


def test_wait_sleeps_no_longer_than_the_time_left(
    make: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = make(BATCH_ROWS[0], max_retries=0)
    job = llm.batch(REQUESTS)
    never_ending(monkeypatch, llm)
    slept: list[float] = []

    with pytest.raises(TimeoutError):
        job.wait(poll_interval=3600, timeout=0.2, sleep=lambda s: (slept.append(s), time.sleep(s)))
    assert slept and all(s <= 0.2 for s in slept)


# --- item 15: a broken result line is its own id's error --------------------------------------

_ID_FIELDS = ("custom_id", "recordId", "key")


_RESULT_FIELDS = ("response", "error", "modelOutput", "result")


def _line_id(entry: Any) -> Any:
    """The caller id of a result line (None for any other line: an input file's)."""
    if not isinstance(entry, dict) or not any(f in entry for f in _RESULT_FIELDS):
        return None
    for name in _ID_FIELDS:
        if name in entry:
            return entry[name]
    return (entry.get("metadata") or {}).get("key")


def _id_only(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k in (*_ID_FIELDS, "metadata")}


def _wrong_type(entry: dict[str, Any]) -> dict[str, Any]:
    """The line with a field of another type than the provider documents, per the shape of
    the line: a string status_code (OpenAI's and Mistral's lines), a redactedContent that is
    not base64 (Bedrock), a Message that is a string (Anthropic), candidates that are a
    string (Gemini)."""
    entry = json.loads(json.dumps(entry))
    if isinstance(entry.get("response"), dict) and "status_code" in entry["response"]:
        entry["response"]["status_code"] = "200"
    elif "modelOutput" in entry:
        content = entry["modelOutput"]["output"]["message"]["content"]
        content.insert(0, {"reasoningContent": {"redactedContent": "%% not base64 %%"}})
    elif "result" in entry:
        entry["result"]["message"] = "a message"
    else:
        entry["response"]["usageMetadata"] = "many"
    return entry


BREAKS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "not_json": lambda e: json.dumps(e)[: len(json.dumps(e)) // 2],
    "missing_fields": _id_only,
    "wrong_type": _wrong_type,
}


def break_results(server: MockLLMServer, cid: str, broken: Callable[[dict[str, Any]], Any]) -> int:
    """Replaces the result line of ``cid`` wherever the mock keeps results (result files, S3
    objects, inline results, Anthropic's lines) by ``broken(entry)`` (text: the line as it
    is; a dict: as JSON), and adds a line that is not JSON at all; returns how many."""
    store = server._batches
    count = 0
    with store.lock:
        for name, (meta, content) in list(store.files.items()):
            new = _broken_text(content, cid, broken)
            count += new != content
            store.files[name] = (meta, new)
        for key, content in list(store.objects.items()):
            new = _broken_text(content, cid, broken)
            count += new != content
            store.objects[key] = new
        jobs = list(store.jobs.values())
    for job in jobs:
        count += _break_job(server, job, cid, broken)
    return count


def _broken_text(content: bytes, cid: str, broken: Callable[[dict[str, Any]], Any]) -> bytes:
    lines = content.decode().splitlines()
    entries = [_parsed(line) for line in lines]
    if not any(_line_id(e) == cid for e in entries):
        return content
    out = ["not a JSON line at all"]
    for line, entry in zip(lines, entries, strict=True):
        if _line_id(entry) == cid:
            made = broken(entry)
            line = made if isinstance(made, str) else json.dumps(made)
        out.append(line)
    return ("\n".join(out) + "\n").encode()


def _parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _break_job(
    server: MockLLMServer, job: Any, cid: str, broken: Callable[[dict[str, Any]], Any]
) -> int:
    """Results the mock keeps in the job: inline responses in its JSON, or lines it writes
    on request (served broken through a batch fault on its results path)."""
    output = job.native.get("output") if isinstance(job.native, dict) else None
    inline = ((output or {}).get("inlinedResponses") or {}).get("inlinedResponses")
    if inline:
        for index, entry in enumerate(inline):
            if _line_id(entry) == cid:
                made = broken(entry)
                if not isinstance(made, dict):
                    pytest.skip("inline results are one JSON document: no line to break")
                inline[index] = made
                return 1
    if job.results and "custom_id" in job.results[0]:
        text = _broken_text(
            "".join(json.dumps(r) + "\n" for r in job.results).encode(), cid, broken
        )
        server.enqueue_batch_fault(job.provider, path="/results$", body=text)
        return 1
    return 0


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("broken", list(BREAKS))
@pytest.mark.parametrize(("provider", "options"), READERS)
def test_a_broken_result_line_is_that_ids_error_and_the_others_answer(
    echoing: MockLLMServer,
    make: Callable[..., Any],
    provider: str,
    options: dict[str, Any],
    broken: str,
    is_async: bool,
) -> None:
    llm = make(provider, max_retries=0)
    job = ended_job(llm, provider, **options)
    assert break_results(echoing, "q-1", BREAKS[broken]) >= 1
    assert job.status().done  # the job's status is still read

    if is_async:
        from zerda.llm.batch import AsyncBatchJob

        async def main() -> dict[str, dict[str, Any]]:
            return await AsyncBatchJob(llm, job.id, job.ids).results()

        results = asyncio.run(main())
    else:
        results = job.results()

    assert list(results) == ["q-0", "q-1", "q-2"]
    assert {cid: results[cid]["content"] for cid in ("q-0", "q-2")} == {
        "q-0": ANSWERS["q-0"],
        "q-2": ANSWERS["q-2"],
    }
    error = results["q-1"].pop("error")
    standard = error_result(ServerError("x"))  # the error result's shape (DESIGN §5)
    assert results["q-1"] == {k: v for k, v in standard.items() if k != "error"}
    assert set(error) == set(standard["error"])
    assert error["provider"] == provider
    assert error["type"] in ("server", "unknown")
    if broken == "not_json":
        assert "not JSON" in error["message"]


def test_off_the_fast_path_a_gemini_job_google_genai_refuses_stays_refused(
    echoing: MockLLMServer, make: Callable[..., Any]
) -> None:
    """Reading the job's JSON again needs the client's private API client (the fast path's
    table, docs/scale.md): with ``fast_path=False`` google-genai's refusal is the error."""
    llm = make("gemini", max_retries=0, fast_path=False)
    job = ended_job(llm, "gemini")
    break_results(echoing, "q-1", _wrong_type)

    with pytest.raises(ServerError, match="malformed response"):
        job.results()


def test_the_mocks_batch_faults_wait_for_their_path(echoing: MockLLMServer) -> None:
    """``enqueue_batch_fault(path=)`` leaves the requests it does not match alone."""
    import openai

    client = openai.OpenAI(**echoing.sdk_client_kwargs("openai"), max_retries=0)
    echoing.enqueue_batch_fault("openai", status=503, message="later", path="/batches/")
    file = client.files.create(file=("x.jsonl", b"{}\n"), purpose="batch")  # not matched
    assert file.purpose == "batch" and len(echoing._batches.faults) == 1
    with pytest.raises(openai.InternalServerError, match="later"):
        client.batches.retrieve("batch_x")
    assert echoing._batches.faults == []
