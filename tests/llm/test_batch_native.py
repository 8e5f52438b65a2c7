"""llm.batch on Mistral, Gemini and Bedrock through their SDKs against MockLLMServer: the exact
native job creation and JSONL lines each sends, the same items as generate would send, sync
and async giving identical results (errors per item included), cancel, the refusals before
anything is sent, and the mock checking what the real APIs check."""

from __future__ import annotations

import asyncio
import base64
import json
import pickle
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.providers.contract import error_result, result, usage
from zerda.llm import InvalidRequestError, create_interface, registry
from zerda.testing import MockLLMServer, RecordedRequest
from zerda.testing._batches import _multipart
from zerda.testing._script import ErrorReply

BATCH_ROWS = [n for n in registry.NAMES if registry.get(n).traits.batch]
ROLE = "arn:aws:iam::123456789012:role/batch"
BEDROCK = {
    "role_arn": ROLE,
    "input_s3_uri": "s3://zerda-in/batches/",
    "output_s3_uri": "s3://zerda-out/results/",
    "job_name": "nightly-7",
}
OPTIONS: dict[str, dict[str, Any]] = {"bedrock": BEDROCK}


def word_count(text: str) -> int:
    """Counts the words of a text.

    Args:
        text: The text.
    """
    return len(text.split())


TWO = [
    {"id": "a", "messages": "hi", "system": "Be brief.", "max_tokens": 5, "tools": [word_count]},
    {"id": "b", "messages": "yo", "temperature": 0.5},
]
HUNDRED = [{"id": f"q-{i}", "messages": f"question {i}", "max_tokens": 50} for i in range(100)]


def _prompt(request: RecordedRequest) -> str:
    last = (request.body.get("messages") or request.body.get("contents"))[-1]
    content = last.get("content", last.get("parts"))
    return content if isinstance(content, str) else content[0]["text"]


def echo_or_refuse(request: RecordedRequest) -> dict[str, Any] | ErrorReply:
    """An answer naming the prompt; every tenth prompt (3, 13, ...) refused with a 429."""
    prompt = _prompt(request)
    if prompt.endswith("3"):
        return ErrorReply(429, "slow down")
    return {"text": f"answer to {prompt}", "usage": {"input_tokens": 4, "output_tokens": 3}}


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _fresh(server: MockLLMServer) -> Iterator[None]:
    server.respond_with(lambda r: {"text": "x"})
    yield
    server.reset()


def make(server: MockLLMServer, provider: str) -> Any:
    return create_interface(provider, model="m", max_retries=0, **server.client_options(provider))


def posts(server: MockLLMServer, pattern: str) -> list[RecordedRequest]:
    return [
        r for r in server.requests if r.method in ("POST", "PUT") and re.fullmatch(pattern, r.path)
    ]


def lines_of(data: bytes) -> list[dict[str, Any]]:
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode().splitlines()]


def generated_body(server: MockLLMServer, llm: Any, request: dict[str, Any]) -> Any:
    """The body generate sends for the request (the reference for a batch item), less the
    ``"stream": false`` the mistralai SDK adds to every ``chat.complete`` body."""
    args = {k: v for k, v in request.items() if k not in ("id", "messages")}
    llm.generate(request["messages"], **args)
    body = server.last_request().body
    return {k: v for k, v in body.items() if (k, v) != ("stream", False)}


TOOL_OPENAI = {
    "type": "function",
    "function": {
        "name": "word_count",
        "description": "Counts the words of a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"description": "The text.", "type": "string"}},
            "required": ["text"],
        },
    },
}


# --- the exact native requests -------------------------------------------------------------


def test_mistral_uploads_the_jsonl_and_creates_the_job(server: MockLLMServer) -> None:
    llm = make(server, "mistral")
    job = llm.batch(TWO, metadata={"run": "7"})
    [upload] = posts(server, "/v1/files")
    fields = _multipart(upload)
    assert fields["purpose"] == (None, b"batch")
    name, data = fields["file"]
    assert name == "batch.jsonl"
    # https://docs.mistral.ai/capabilities/batch: {"custom_id", "body"}, the model at the job.
    assert lines_of(data) == [
        {
            "custom_id": "a",
            "body": {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "hi"},
                ],
                "tools": [TOOL_OPENAI],
                "max_tokens": 5,
            },
        },
        {
            "custom_id": "b",
            "body": {"messages": [{"role": "user", "content": "yo"}], "temperature": 0.5},
        },
    ]
    [create] = posts(server, "/v1/batch/jobs")
    [file_id] = server._batches.files  # the one file uploaded so far
    assert create.body == {
        "endpoint": "/v1/chat/completions",
        "input_files": [file_id],
        "model": "m",
        "metadata": {"run": "7"},
        "timeout_hours": 24,  # the SDK's default
    }
    job.wait(poll_interval=0)
    items = posts(server, "/v1/chat/completions")
    assert [i.body for i in items] == [generated_body(server, llm, r) for r in TWO]


def test_gemini_creates_one_job_of_inline_requests(server: MockLLMServer) -> None:
    llm = make(server, "gemini")
    job = llm.batch(TWO)
    [create] = posts(server, r"/v1(beta)?/models/m:batchGenerateContent")
    # https://ai.google.dev/api/batch-api: batch.inputConfig.requests.requests[{request, metadata}].
    assert create.body == {
        "batch": {
            "displayName": "zerda batch of 2 requests",
            "inputConfig": {
                "requests": {
                    "requests": [
                        {
                            "request": {
                                "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
                                "systemInstruction": {
                                    "parts": [{"text": "Be brief."}],
                                    "role": "user",
                                },
                                "tools": [
                                    {
                                        "functionDeclarations": [
                                            {
                                                "description": "Counts the words of a text.",
                                                "name": "word_count",
                                                "parameters": {
                                                    "properties": {
                                                        "text": {
                                                            "description": "The text.",
                                                            "type": "STRING",
                                                        }
                                                    },
                                                    "required": ["text"],
                                                    "type": "OBJECT",
                                                },
                                            }
                                        ]
                                    }
                                ],
                                "generationConfig": {"maxOutputTokens": 5},
                            },
                            "metadata": {"key": "a"},
                        },
                        {
                            "request": {
                                "contents": [{"parts": [{"text": "yo"}], "role": "user"}],
                                "generationConfig": {"temperature": 0.5},
                            },
                            "metadata": {"key": "b"},
                        },
                    ]
                }
            },
        }
    }
    job.wait(poll_interval=0)
    items = posts(server, r"/v1(beta)?/models/m:generateContent")
    assert [i.body for i in items] == [generated_body(server, llm, r) for r in TWO]


def test_gemini_file_input_uploads_the_jsonl_and_names_it(server: MockLLMServer) -> None:
    llm = make(server, "gemini")
    job = llm.batch(TWO, input="file")
    start, upload = posts(server, r"/upload/v1(beta)?/files")
    size = len(upload.raw_body)
    display = "zerda batch of 2 requests"
    assert start.body == {
        "file": {"display_name": display, "mime_type": "jsonl", "size_bytes": size}
    }
    [create] = posts(server, r"/v1(beta)?/models/m:batchGenerateContent")
    assert create.body == {
        "batch": {
            "displayName": display,
            "inputConfig": {"fileName": f"files/{upload.query['upload_id']}"},
        }
    }
    results = job.wait(poll_interval=0)
    assert results == {"a": result("x", provider="gemini"), "b": result("x", provider="gemini")}
    # https://ai.google.dev/gemini-api/docs/batch-mode#input-file: {"key", "request"} lines,
    # each request what the inline path sends.
    inline = _inline_requests(server, llm)
    assert lines_of(upload.raw_body) == [
        {"key": "a", "request": inline[0]["request"]},
        {"key": "b", "request": inline[1]["request"]},
    ]


def _inline_requests(server: MockLLMServer, llm: Any) -> list[dict[str, Any]]:
    """The inline requests google-genai sends for TWO (the reference for the file lines)."""
    llm.batch(TWO)
    return server.last_request().body["batch"]["inputConfig"]["requests"]["requests"]


def test_canary_google_genai_converts_file_lines_as_inline_requests(
    server: MockLLMServer,
) -> None:
    # _batch_gemini._rest_request relies on google-genai's private
    # batches._InlinedRequest_to_mldev and _common helpers: each file line's request must be
    # what the public inline path sends.
    from zerda.llm.wires.gemini import batch as _batch_gemini

    llm = make(server, "gemini")
    items = [
        (
            r["id"],
            llm._native_request(
                r["messages"], {k: v for k, v in r.items() if k not in ("id", "messages")}
            ),
        )
        for r in TWO
    ]
    items = _batch_gemini.sdk_items(
        items
    )  # the REST bodies as Batch Mode takes them (the fast path)
    lines = lines_of(_batch_gemini.map_batch_file(items, llm.client._api_client))
    inline = _inline_requests(server, llm)
    assert [line["request"] for line in lines] == [r["request"] for r in inline]


def test_gemini_goes_to_a_file_past_the_inline_limit(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zerda.llm.wires.gemini import batch as _batch_gemini

    monkeypatch.setattr(_batch_gemini, "INLINE_LIMIT", 100)  # bytes; the API's is 20 MB
    results = make(server, "gemini").batch(TWO).wait(poll_interval=0)
    assert len(posts(server, r"/upload/v1(beta)?/files")) == 2  # start, then the bytes
    assert results["b"] == result("x", provider="gemini")


def test_gemini_input_must_be_inline_or_file(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError, match=r"input= is 'inline' or 'file', not 'gcs'"):
        make(server, "gemini").batch(TWO, input="gcs")
    assert server.requests == []


def test_gemini_options_go_to_the_job_config(server: MockLLMServer) -> None:
    make(server, "gemini").batch(TWO[:1], display_name="nightly")
    [create] = posts(server, r"/v1(beta)?/models/m:batchGenerateContent")
    assert create.body["batch"]["displayName"] == "nightly"


def test_bedrock_writes_the_jsonl_to_s3_and_creates_a_converse_job(server: MockLLMServer) -> None:
    llm = make(server, "bedrock")
    job = llm.batch(TWO, **BEDROCK, timeoutDurationInHours=48)
    [put] = posts(server, "/s3/zerda-in/batches/nightly-7.jsonl")
    # https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html:
    # {"recordId", "modelInput"}, modelInput the Converse request body (Converse-type job).
    assert lines_of(put.raw_body) == [
        {
            "recordId": "a",
            "modelInput": {
                "messages": [{"role": "user", "content": [{"text": "hi"}]}],
                "system": [{"text": "Be brief."}],
                "inferenceConfig": {"maxTokens": 5},
                "toolConfig": {
                    "tools": [
                        {
                            "toolSpec": {
                                "name": "word_count",
                                "description": "Counts the words of a text.",
                                "inputSchema": {
                                    "json": {
                                        "type": "object",
                                        "properties": {
                                            "text": {"description": "The text.", "type": "string"}
                                        },
                                        "required": ["text"],
                                    }
                                },
                            }
                        }
                    ]
                },
            },
        },
        {
            "recordId": "b",
            "modelInput": {
                "messages": [{"role": "user", "content": [{"text": "yo"}]}],
                "inferenceConfig": {"temperature": 0.5},
            },
        },
    ]
    [create] = posts(server, "/model-invocation-job")
    assert create.body == {
        "clientRequestToken": create.body["clientRequestToken"],  # boto3's idempotency token
        "jobName": "nightly-7",
        "roleArn": ROLE,
        "modelId": "m",
        "modelInvocationType": "Converse",
        "inputDataConfig": {
            "s3InputDataConfig": {
                "s3Uri": "s3://zerda-in/batches/nightly-7.jsonl",
                "s3InputFormat": "JSONL",
            }
        },
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://zerda-out/results/"}},
        "timeoutDurationInHours": 48,
    }
    assert re.fullmatch(
        r"arn:aws:bedrock:us-east-1:\d{12}:model-invocation-job/[a-z0-9]{12}", job.id
    )
    job.wait(poll_interval=0)
    items = posts(server, "/model/m/converse")
    assert [i.body for i in items] == [generated_body(server, llm, r) for r in TWO]


def test_bedrock_results_are_read_from_the_job_folder(server: MockLLMServer) -> None:
    server.respond_with(echo_or_refuse)
    job = make(server, "bedrock").batch(HUNDRED[:4], **BEDROCK)
    results = job.wait(poll_interval=0)
    job_id = job.id.rsplit("/", 1)[1]
    store = server._batches.objects
    out = lines_of(store[("zerda-out", f"results/{job_id}/nightly-7.jsonl.out")])
    assert [line["recordId"] for line in out] == ["q-0", "q-1", "q-2", "q-3"]
    assert out[3] == {
        "recordId": "q-3",
        "modelInput": {
            "messages": [{"role": "user", "content": [{"text": "question 3"}]}],
            "inferenceConfig": {"maxTokens": 50},
        },
        "error": {"errorCode": 429, "errorMessage": "slow down"},
    }
    manifest = json.loads(store[("zerda-out", f"results/{job_id}/manifest.json.out")])
    assert manifest["successRecordCount"] == 3 and manifest["errorRecordCount"] == 1
    assert results["q-0"]["content"] == "answer to question 0"


def test_bedrock_media_bytes_travel_as_base64(server: MockLLMServer) -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "media_type": "image/png"}
    message = {"role": "user", "content": [{"type": "text", "text": "what?"}, image]}
    make(server, "bedrock").batch([{"id": "img", "messages": [message]}], **BEDROCK)
    [put] = posts(server, "/s3/zerda-in/batches/nightly-7.jsonl")
    [line] = lines_of(put.raw_body)
    blocks = line["modelInput"]["messages"][0]["content"]
    assert blocks[1] == {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}


def test_bedrock_output_blobs_map_as_a_converse_response_does(server: MockLLMServer) -> None:
    from zerda.llm.wires.bedrock import batch as _batch_bedrock

    llm = make(server, "bedrock")
    response = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"redactedContent": b"\x00secret"}},
                    {"text": "ok"},
                ],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
    }
    as_json = json.loads(json.dumps(response, default=lambda b: base64.b64encode(b).decode()))
    line = json.dumps({"recordId": "r", "modelInput": {}, "modelOutput": as_json})
    [(kind, output)] = _batch_bedrock.map_batch_output(line, "bedrock").values()
    assert kind == "ok"
    assert llm._map_response(output) == llm._map_response(response)


@pytest.mark.parametrize(
    ("provider", "path", "field"),
    [
        ("mistral", "/v1/files", "timeout_ms"),
        ("gemini", r"/v1(beta)?/models/m:batchGenerateContent", "httpOptions"),
        ("bedrock", "/s3/zerda-in/batches/nightly-7.jsonl", "timeout"),
    ],
)
def test_a_timeout_is_the_calls_not_an_items(
    server: MockLLMServer, provider: str, path: str, field: str
) -> None:
    make(server, provider).batch([{**TWO[1], "timeout": 5}], **OPTIONS.get(provider, {}))
    [sent] = posts(server, path)
    assert field.encode() not in sent.raw_body
    assert b"yo" in sent.raw_body


# --- 100 requests, sync and async --------------------------------------------------------------


def _expected(provider: str, i: int) -> dict[str, Any]:
    if i % 10 == 3:
        return error_result(
            "rate_limit", "slow down", provider=provider, status=429, retryable=True
        )
    return result(f"answer to question {i}", usage=usage(4, 3), provider=provider)


SYNC_ASYNC = [(p, OPTIONS.get(p, {})) for p in BATCH_ROWS] + [("gemini", {"input": "file"})]


@pytest.mark.parametrize(
    ("provider", "options"), SYNC_ASYNC, ids=[f"{p}-{o.get('input', '')}" for p, o in SYNC_ASYNC]
)
def test_sync_and_async_batches_give_identical_results(
    server: MockLLMServer, provider: str, options: dict[str, Any]
) -> None:
    server.respond_with(echo_or_refuse)
    llm = make(server, provider)
    synced = llm.batch(HUNDRED, **options).wait(poll_interval=0)

    async def main() -> dict[str, dict[str, Any]]:
        job = await llm.batch_async(HUNDRED, **options)
        return await job.wait(poll_interval=0)

    awaited = asyncio.run(main())
    assert synced == awaited
    assert synced == {f"q-{i}": _expected(provider, i) for i in range(100)}


@pytest.mark.parametrize("provider", ["mistral", "gemini", "bedrock"])
def test_status_counts_the_items(server: MockLLMServer, provider: str) -> None:
    server.respond_with(echo_or_refuse)
    job = make(server, provider).batch(HUNDRED[:20], **OPTIONS.get(provider, {}))
    job.wait(poll_interval=0)
    status = job.status()
    assert (status.state, status.total, status.succeeded, status.failed) == ("ended", 20, 18, 2)


# --- cancel -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "cancelling", "cancelled"),
    [
        ("mistral", "CANCELLATION_REQUESTED", "CANCELLED"),
        ("gemini", "JOB_STATE_CANCELLED", "JOB_STATE_CANCELLED"),
        ("bedrock", "Stopped", "Stopped"),  # cancel's status request moves it on
    ],
)
def test_a_cancelled_batch_gives_each_item_an_error(
    server: MockLLMServer, provider: str, cancelling: str, cancelled: str
) -> None:
    job = make(server, provider).batch(HUNDRED[:2], **OPTIONS.get(provider, {}))
    assert job.cancel().native_status == cancelling
    seen: list[str] = []
    results = job.wait(poll_interval=0, on_progress=lambda s: seen.append(s.native_status))
    assert seen[-1] == cancelled
    assert job.status().state == "cancelled"
    message = f"the {provider} batch returned no result for request 'q-0'"
    assert results["q-0"] == error_result("unknown", message, provider=provider, retryable=False)


# --- refused before anything is sent ------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, r"bedrock needs role_arn="),
        ({**BEDROCK, "output_s3_uri": None}, r"bedrock needs output_s3_uri="),
        (
            {**BEDROCK, "input_s3_uri": "zerda-in/x"},
            r"input_s3_uri='zerda-in/x' is not an S3 location",
        ),
        ({**BEDROCK, "job_name": "no spaces"}, r"bedrock refuses the job_name 'no spaces'"),
    ],
)
def test_bedrock_batch_options_are_checked_before_sending(
    server: MockLLMServer, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        make(server, "bedrock").batch(TWO, **options)
    assert server.requests == []


def test_an_unknown_endpoint_service_is_refused() -> None:
    with pytest.raises(ValueError, match=r"endpoint_urls: unknown service\(s\) 'sqs'"):
        create_interface("bedrock", model="m", region="us-east-1", endpoint_urls={"sqs": "x"})


def test_a_bedrock_interface_pickles_with_its_endpoint_urls(server: MockLLMServer) -> None:
    copy = pickle.loads(pickle.dumps(make(server, "bedrock")))
    assert copy.endpoint_urls == server.client_options("bedrock")["endpoint_urls"]
    results = copy.batch(TWO, **BEDROCK).wait(poll_interval=0)
    assert results["b"] == result("x", provider="bedrock")


# --- the mock checks what the APIs check ----------------------------------------------------


def test_mock_fails_a_mistral_job_whose_lines_break_the_rules(server: MockLLMServer) -> None:
    from mistralai.client import Mistral

    client = Mistral(**server.sdk_client_kwargs("mistral"))
    data = b'{"custom_id": "a", "body": {}}\n{"custom_id": "a", "body": {}}\nnot json\n'
    file = client.files.upload(file={"file_name": "in.jsonl", "content": data}, purpose="batch")
    job = client.batch.jobs.create(
        input_files=[file.id], endpoint="/v1/chat/completions", model="m"
    )
    assert job.status == "FAILED"
    assert [(e.message, e.count) for e in job.errors] == [
        ("Line 2: custom_id 'a' is not unique", 1),
        ("Line 3 is not valid JSON", 1),
    ]


def test_mock_answers_an_invalid_mistral_item_with_the_apis_error(server: MockLLMServer) -> None:
    from mistralai.client import Mistral

    client = Mistral(**server.sdk_client_kwargs("mistral"))
    data = b'{"custom_id": "a", "body": {"messages": []}}\n'
    file = client.files.upload(file={"file_name": "in.jsonl", "content": data}, purpose="batch")
    job = client.batch.jobs.create(
        input_files=[file.id], endpoint="/v1/chat/completions", model="m"
    )
    while client.batch.jobs.get(job_id=job.id).status != "SUCCESS":
        pass
    done = client.batch.jobs.get(job_id=job.id)
    assert (done.succeeded_requests, done.failed_requests, done.output_file) == (0, 1, None)
    [line] = lines_of(client.files.download(file_id=done.error_file).read())
    assert line["custom_id"] == "a" and line["response"]["status_code"] == 422


def test_mock_requires_a_gemini_display_name(server: MockLLMServer) -> None:
    from google import genai

    client = genai.Client(**server.sdk_client_kwargs("gemini"))
    src = [{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}]
    with pytest.raises(genai.errors.ClientError, match="display_name: required"):
        client.batches.create(model="m", src=src)


def test_mock_runs_only_converse_bedrock_jobs_and_checks_the_names(server: MockLLMServer) -> None:
    import boto3
    from botocore.exceptions import ClientError

    kwargs = {**server.sdk_client_kwargs("bedrock"), "service_name": "bedrock"}
    bedrock = boto3.client(**kwargs)
    job = {
        "jobName": "j",
        "roleArn": ROLE,
        "modelId": "m",
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": "s3://zerda-in/none/"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": "s3://zerda-out/x/"}},
    }
    with pytest.raises(ClientError, match="only Converse-type batch jobs"):
        bedrock.create_model_invocation_job(**job)
    with pytest.raises(ClientError, match="at 'roleArn' failed to satisfy constraint"):
        bedrock.create_model_invocation_job(**{**job, "roleArn": "role"})
    with pytest.raises(ClientError, match="holds no file"):
        bedrock.create_model_invocation_job(**job, modelInvocationType="Converse")


def test_mock_s3_answers_a_missing_key_as_s3_does(server: MockLLMServer) -> None:
    llm = make(server, "bedrock")
    s3 = llm._service_client("s3")
    s3.put_object(Bucket="zerda-in", Key="a/b c.txt", Body=b"data")
    assert s3.get_object(Bucket="zerda-in", Key="a/b c.txt")["Body"].read() == b"data"
    listed = s3.list_objects_v2(Bucket="zerda-in", Prefix="a/")
    assert [o["Key"] for o in listed["Contents"]] == ["a/b c.txt"]
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object(Bucket="zerda-in", Key="missing")


def test_mock_answers_an_invalid_gemini_item_with_the_apis_error(server: MockLLMServer) -> None:
    from google import genai

    client = genai.Client(**server.sdk_client_kwargs("gemini"))
    src = [{"contents": [{"role": "robot", "parts": [{"text": "hi"}]}], "metadata": {"key": "x"}}]
    job = client.batches.create(model="m", src=src, config={"display_name": "bad"})
    while not client.batches.get(name=job.name).done:
        pass
    [entry] = client.batches.get(name=job.name).dest.inlined_responses
    assert entry.response is None and entry.metadata == {"key": "x"}
    assert (entry.error.code, entry.error.message) == (3, "Please use a valid role: user, model.")
    assert server.requests[-2].rejected_by is not None  # the item, refused by the validator


def test_mock_answers_an_invalid_bedrock_record_with_the_apis_error(server: MockLLMServer) -> None:
    llm = make(server, "bedrock")
    bad = {"messages": [{"role": "assistant", "content": [{"text": "first"}]}]}
    body = json.dumps({"recordId": "r1", "modelInput": bad}).encode() + b"\n"
    llm._service_client("s3").put_object(Bucket="zerda-in", Key="raw/in.jsonl", Body=body)
    job = llm._service_client("bedrock").create_model_invocation_job(
        jobName="raw",
        roleArn=ROLE,
        modelId="m",
        modelInvocationType="Converse",
        inputDataConfig={"s3InputDataConfig": {"s3Uri": "s3://zerda-in/raw/in.jsonl"}},
        outputDataConfig={"s3OutputDataConfig": {"s3Uri": "s3://zerda-out/raw/"}},
    )
    from zerda.llm.batch import BatchJob

    results = BatchJob(llm, job["jobArn"], ["r1"]).wait(poll_interval=0)
    assert results["r1"]["error"]["type"] == "invalid_request"
    assert results["r1"]["error"]["status_code"] == 400


def test_gemini_counts_media_bytes_as_base64_toward_the_inline_limit() -> None:
    from zerda.llm.wires.gemini import batch as _batch_gemini

    assert _batch_gemini._json_size(b"x" * 300) == 400
    assert _batch_gemini._json_size({"parts": [{"text": "hi"}]}) == len(
        '{"parts": [{"text": "hi"}]}'
    )
