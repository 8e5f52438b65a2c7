"""llm.batch / batch_async through the real SDKs against MockLLMServer's batch APIs
(OpenAI files + /v1/batches, Anthropic Message Batches): 100 requests, results matched to
their caller ids, per-item errors, status transitions, and refusals before sending."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from zerda.llm import InvalidRequestError, create_interface, registry
from zerda.llm.batch import BatchStatus
from zerda.testing import MockLLMServer, RecordedRequest

BATCH_ROWS = [n for n in registry.NAMES if registry.get(n).traits.batch]
NO_BATCH_ROWS = [n for n in registry.NAMES if not registry.get(n).traits.batch]
CHAT = re.compile(
    r"(/openai)?/v1/chat/completions|/v1/messages|/v1(beta)?/models/[^/:]+:generateContent"
    r"|/model/[^/]+/converse"
)
# Bedrock batch inference reads from and writes to S3 (MockLLMServer emulates both).
OPTIONS: dict[str, dict[str, Any]] = {
    "bedrock": {
        "role_arn": "arn:aws:iam::123456789012:role/batch",
        "input_s3_uri": "s3://zerda-in/batches/",
        "output_s3_uri": "s3://zerda-out/results/",
    }
}
REQUESTS = [
    {"id": f"q-{i}", "messages": [{"role": "user", "content": f"question {i}"}], "max_tokens": 50}
    for i in range(100)
]


def _last_text(request: RecordedRequest) -> str:
    """The last message's text, on every wire (Gemini: ``contents`` of ``parts``)."""
    last = (request.body.get("messages") or request.body.get("contents"))[-1]
    content = last.get("content", last.get("parts"))
    return content if isinstance(content, str) else content[0]["text"]


def echo(request: RecordedRequest) -> dict[str, Any]:
    """Every item is answered with the prompt it carried: results can be matched."""
    return {
        "text": f"answer to {_last_text(request)}",
        "usage": {"input_tokens": 4, "output_tokens": 3},
    }


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _echo(server: MockLLMServer) -> Iterator[None]:
    server.respond_with(echo)
    yield
    server.reset()


def make(server: MockLLMServer, provider: str) -> Any:
    return create_interface(provider, model="m", max_retries=0, **server.client_options(provider))


def expected_result(llm: Any, i: int) -> dict[str, Any]:
    text = f"answer to question {i}"
    usage = llm.generate(f"question {i}")["usage"]  # the same wire answer, outside a batch
    return {
        "content": text,
        "tool_calls": [],
        "stop_reason": "end_turn",
        "usage": usage,
        "reasoning": None,
        "message": {"role": "assistant", "content": text, "tool_calls": []},
        "cost": None,  # the model "m" has no price
    }


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_a_batch_of_100_round_trips_matched_to_caller_ids(
    server: MockLLMServer, provider: str
) -> None:
    llm = make(server, provider)
    reference = expected_result(llm, 0)
    server.reset()
    server.respond_with(echo)
    job = llm.batch(REQUESTS, **OPTIONS.get(provider, {}))
    seen: list[BatchStatus] = []
    results = job.wait(poll_interval=0, on_progress=seen.append)
    assert list(results) == [r["id"] for r in REQUESTS]
    for i, (cid, result) in enumerate(results.items()):
        assert cid == f"q-{i}"
        assert result == {
            **reference,
            "content": f"answer to question {i}",
            "message": {**reference["message"], "content": f"answer to question {i}"},
        }
    assert seen[-1].state == "ended" and seen[-1].done
    assert (seen[-1].total, seen[-1].succeeded, seen[-1].failed) == (100, 100, 0)
    assert [s.state for s in seen[:-1]] == ["in_progress"] * (len(seen) - 1)
    # Each item reached the mock as a request to the chat endpoint; where the native request
    # is the body, as the one generate would send (Gemini's and Bedrock's bodies are asserted
    # in test_batch_native.py).
    items = [r for r in server.requests if CHAT.fullmatch(r.path)]
    assert len(items) == 100
    if registry.get(provider).wire not in ("gemini", "bedrock"):
        assert items[7].body == _native(llm, REQUESTS[7])


def _native(llm: Any, request: dict[str, Any]) -> dict[str, Any]:
    args = {k: v for k, v in request.items() if k not in ("id", "messages")}
    return json.loads(json.dumps(llm._native_request(request["messages"], args)))


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_batch_async_round_trips(server: MockLLMServer, provider: str) -> None:
    llm = make(server, provider)

    async def main() -> dict[str, dict[str, Any]]:
        job = await llm.batch_async(REQUESTS[:10], **OPTIONS.get(provider, {}))
        assert (await job.status()).state == "in_progress"
        return await job.wait(poll_interval=0)

    results = asyncio.run(main())
    assert {cid: r["content"] for cid, r in results.items()} == {
        f"q-{i}": f"answer to question {i}" for i in range(10)
    }


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_an_item_the_provider_refuses_is_that_items_error(
    server: MockLLMServer, provider: str
) -> None:
    server.reset()
    server.enqueue_error(429, provider, message="slow down")  # answers the first item
    server.respond_with(echo)
    llm = make(server, provider)
    results = llm.batch(REQUESTS[:3], **OPTIONS.get(provider, {})).wait(poll_interval=0)
    assert results["q-0"]["error"]["type"] == "rate_limit"
    assert results["q-0"]["error"]["message"] == "slow down"
    assert results["q-0"]["content"] is None
    assert [results[f"q-{i}"]["content"] for i in (1, 2)] == [
        "answer to question 1",
        "answer to question 2",
    ]


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_results_before_the_job_ended_are_refused(server: MockLLMServer, provider: str) -> None:
    job = make(server, provider).batch(REQUESTS[:2], **OPTIONS.get(provider, {}))
    with pytest.raises(InvalidRequestError, match=r"results exist once it has ended"):
        job.results()  # its status request moves the job on, but not to its end
    assert job.wait(poll_interval=0)["q-1"]["content"] == "answer to question 1"


def test_wait_polls_with_the_given_interval_and_reports_progress(server: MockLLMServer) -> None:
    slept: list[float] = []
    statuses: list[str] = []
    job = make(server, "openai").batch(REQUESTS[:4])
    job.wait(
        poll_interval=5.0,
        sleep=slept.append,
        on_progress=lambda s: statuses.append(s.native_status),
    )
    assert statuses == ["in_progress", "completed"]
    assert slept == [5.0]


@pytest.mark.parametrize("provider", NO_BATCH_ROWS)
def test_a_provider_without_a_batch_api_says_so_before_sending(
    server: MockLLMServer, provider: str
) -> None:
    llm = make(server, provider)
    with pytest.raises(
        InvalidRequestError,
        match=rf"batch: Zerda maps no batch API for {provider} \(providers with one: openai, groq, mistral, anthropic, bedrock, gemini\); nothing was sent",
    ):
        llm.batch(REQUESTS[:1])
    assert server.requests == []


@pytest.mark.parametrize(
    ("requests", "message"),
    [
        ([], "batch: requests is empty"),
        ([{"messages": "hi"}], r"batch requests\[0\] needs an 'id': a non-empty string"),
        (
            [{"id": "a", "messages": "hi"}, {"id": "a", "messages": "x"}],
            r"batch requests\[1\]: duplicate id 'a'",
        ),
        ([{"id": "a"}], r"batch requests\[0\] \(id 'a'\) needs 'messages'"),
        (
            [
                {"id": "a", "messages": "hi"},
                {"id": "b", "messages": [{"role": "robot", "content": "x"}]},
            ],
            r"batch requests\[1\] \(id 'b'\): messages\[0\]",
        ),
        ([{"id": "a", "messages": "hi", "stream": True}], r"'stream' has no meaning in a batch"),
    ],
)
def test_bad_requests_are_refused_before_sending(
    server: MockLLMServer, requests: list[Any], message: str
) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        make(server, "openai").batch(requests)
    assert server.requests == []


def test_anthropic_ids_follow_its_rule_before_sending(server: MockLLMServer) -> None:
    with pytest.raises(InvalidRequestError, match=r"anthropic refuses the id 'a b'"):
        make(server, "anthropic").batch([{"id": "a b", "messages": "hi"}])
    assert server.requests == []


def test_a_cancelled_anthropic_batch_reports_each_item(server: MockLLMServer) -> None:
    job = make(server, "anthropic").batch(REQUESTS[:2])
    assert job.cancel().native_status == "canceling"
    results = job.wait(poll_interval=0)
    assert [r["error"]["message"] for r in results.values()] == [
        "the batch was canceled before this request was processed"
    ] * 2


def test_mock_refuses_a_batch_file_without_batch_purpose(server: MockLLMServer) -> None:
    import openai

    client = openai.OpenAI(**server.sdk_client_kwargs("openai"), max_retries=0)
    file = client.files.create(file=("x.jsonl", b"{}\n"), purpose="user_data")
    with pytest.raises(openai.BadRequestError, match="was not uploaded with purpose 'batch'"):
        client.batches.create(
            input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h"
        )


def test_mock_fails_a_job_whose_lines_break_the_rules(server: MockLLMServer) -> None:
    import openai

    client = openai.OpenAI(**server.sdk_client_kwargs("openai"), max_retries=0)
    lines = [
        {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}},
        {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}},
        {"custom_id": "b", "method": "POST", "url": "/v1/embeddings", "body": {}},
    ]
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    file = client.files.create(file=("in.jsonl", data), purpose="batch")
    batch = client.batches.create(
        input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert batch.status == "failed"
    assert [(e.code, e.line) for e in batch.errors.data] == [
        ("duplicate_custom_id", 2),
        ("mismatched_url", 3),
    ]


def test_mock_answers_an_invalid_item_with_the_apis_error(server: MockLLMServer) -> None:
    import anthropic

    client = anthropic.Anthropic(**server.sdk_client_kwargs("anthropic"), max_retries=0)
    batch = client.messages.batches.create(
        requests=[
            {
                "custom_id": "x",
                "params": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            }
        ]
    )
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    [entry] = list(client.messages.batches.results(batch.id))
    assert entry.result.type == "errored"
    assert entry.result.error.error.type == "invalid_request_error"
    assert "max_tokens" in entry.result.error.error.message


# --- one protocol object per wire -------------------------------------------------------

PROTOCOL = ("submit", "poll", "fetch", "cancel")


@pytest.mark.parametrize("provider", BATCH_ROWS)
def test_each_batch_row_gives_one_protocol_object_with_every_call_and_its_twin(
    server: MockLLMServer, provider: str
) -> None:
    from zerda.llm.base import BaseLLMInterface
    from zerda.llm.providers import interface_class

    cls = interface_class(provider)
    assert "_batch_protocol" in {n for c in cls.__mro__[:-1] for n in vars(c)}
    assert cls._batch_protocol is not BaseLLMInterface._batch_protocol
    for name in [f"_batch_{call}{tail}" for call in PROTOCOL for tail in ("", "_async")]:
        assert not hasattr(cls, name), name  # the eight hook methods are gone
    protocol = make(server, provider)._batch_protocol()
    for call in PROTOCOL:
        assert callable(getattr(protocol, call))
        assert asyncio.iscoroutinefunction(getattr(protocol, f"{call}_async")), call
