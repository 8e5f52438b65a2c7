"""Hosted (built-in) tools on the Responses wire (DESIGN §18), openai-responses and
azure-responses: the native request of each hosted tool and option, the refusals, the mock's
checks of hosted declarations and replayed items, scripted calls and citations (generate and
stream, sync and async, fast path on and off), the recorded hosted answers
(../shared/fixtures/recorded/openai-responses, feature ``server_tool``) with their citations,
raw bodies and follow-up requests, and the round trip of a hosted turn to the same provider
(its items back by id) and to another (as text)."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zerda.llm import create_interface, hosted
from zerda.llm.errors import InvalidRequestError
from zerda.llm.wires.openai_responses import hosted as wire_hosted
from zerda.testing import MockLLMServer

ROWS = ("openai-responses", "azure-responses")
FIXTURES = Path(__file__).resolve().parents[4] / ".." / "shared" / "fixtures"
RECORDED = Path(os.environ.get("ZERDA_FIXTURES") or FIXTURES) / "recorded" / "openai-responses"
FUNCTION = {"name": "get_weather", "parameters": {"type": "object"}}

CALLS = [
    {
        "id": "ws_1",
        "type": "web_search",
        "name": "web_search_call",
        "input": {"query": "zerda fox"},
        "output": "https://a.example/fox\nhttps://b.example/fox",
    },
    {
        "id": "fs_1",
        "type": "file_search",
        "name": "file_search_call",
        "input": {"queries": ["fennec"]},
        "output": "notes.txt: Fennecs are small foxes.",
    },
    {
        "id": "ci_1",
        "type": "code_execution",
        "name": "code_interpreter_call",
        "input": {"code": "print(6 * 7)"},
        "output": "42",
    },
    {
        "id": "mcpl_1",
        "type": "mcp",
        "name": "mcp_list_tools",
        "input": {"server_label": "wiki"},
        "output": "ask\nread",
    },
    {
        "id": "mcp_1",
        "type": "mcp",
        "name": "mcp_call",
        "input": {"server_label": "wiki", "name": "ask", "arguments": {"q": "fox"}},
        "output": "A fox is a canid.",
    },
    {
        "id": "tsc_1",
        "type": "tool_search",
        "name": "tool_search_call",
        "input": {"paths": ["get_weather"], "execution": "server"},
        "output": None,
    },
    {
        "id": "tso_1",
        "type": "tool_search",
        "name": "tool_search_output",
        "input": {"execution": "server"},
        "output": "get_weather",
    },
    {
        "id": "ig_1",
        "type": "other",
        "name": "image_generation_call",
        "input": {},
        "output": None,
    },
]
TEXT = "Fennecs are foxes. See notes."
CITES = [
    {"url": "https://a.example/fox", "title": "Fox facts", "text": None, "start": 0, "end": 18},
    {"url": None, "title": "notes.txt", "text": None, "start": 29, "end": 29},
]


def make(server: MockLLMServer, row: str = "openai-responses", **options: Any) -> Any:
    model = options.pop("model", "gpt-5-mini")
    return create_interface(
        row, model, max_retries=0, raise_errors=True, **server.client_options(row), **options
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def sent(server: MockLLMServer, row: str = "openai-responses") -> dict[str, Any]:
    body: dict[str, Any] = server.last_request(row).body
    return body


def without_ids(result: dict[str, Any]) -> dict[str, Any]:
    """A result without what the mock makes up per answer (item ids of the message)."""
    out = {k: v for k, v in result.items() if k not in ("provider_data", "message")}
    out["message"] = {k: v for k, v in result["message"].items() if k != "provider_data"}
    return out


# --- request -----------------------------------------------------------------------------


def test_each_hosted_tool_and_option_is_its_native_entry_after_the_functions(
    server: MockLLMServer,
) -> None:
    server.reset()
    server.enqueue("openai-responses", text="ok")
    tools = [
        FUNCTION,
        hosted.web_search(allowed_domains=["a.example"], user_location={"country": "FR"}),
        hosted.file_search(vector_store_ids=["vs_1", "vs_2"], max_num_results=5),
        hosted.code_execution(),
        hosted.mcp_server(
            url="https://mcp.example/mcp", name="wiki", allowed_tools=["ask"], headers={"X": "1"}
        ),
        hosted.native({"type": "image_generation", "quality": "low"}),
    ]
    make(server).generate("hi", tools=tools, tool_choice="auto", parallel_tool_calls=False)
    body = sent(server)
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": {"type": "object"},
            "strict": False,
        },
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["a.example"]},
            "user_location": {"type": "approximate", "country": "FR"},
        },
        {"type": "file_search", "vector_store_ids": ["vs_1", "vs_2"], "max_num_results": 5},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {
            "type": "mcp",
            "server_label": "wiki",
            "server_url": "https://mcp.example/mcp",
            "allowed_tools": ["ask"],
            "headers": {"X": "1"},
            "require_approval": "never",
        },
        {"type": "image_generation", "quality": "low"},
    ]
    assert body["tool_choice"] == "auto"
    assert body["parallel_tool_calls"] is False
    assert body["store"] is False
    # What makes each item carry its readable result, after the reasoning items' own.
    assert body["include"] == [
        "reasoning.encrypted_content",
        "web_search_call.action.sources",
        "file_search_call.results",
        "code_interpreter_call.outputs",
    ]


def test_hosted_tools_alone_make_the_tools_list_and_keep_tool_choice(
    server: MockLLMServer,
) -> None:
    server.reset()
    server.enqueue("openai-responses", text="ok")
    make(server, model="gpt-4.1").generate(
        "hi", tools=[hosted.web_search(), hosted.code_execution()], tool_choice="none"
    )
    body = sent(server)
    assert body["tools"] == [
        {"type": "web_search"},
        {"type": "code_interpreter", "container": {"type": "auto"}},
    ]
    assert body["tool_choice"] == "none"
    assert body["include"] == ["web_search_call.action.sources", "code_interpreter_call.outputs"]


def test_a_request_without_hosted_tools_is_unchanged(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("openai-responses", text="ok")
    make(server, model="gpt-4.1").generate("hi")
    assert set(sent(server)) == {"model", "input", "store"}


def test_azure_sends_what_its_responses_api_documents_and_no_includes(
    server: MockLLMServer,
) -> None:
    server.reset()
    server.enqueue("azure-responses", text="ok")
    tools = [
        hosted.web_search(user_location={"city": "Lyon", "country": "FR"}),
        hosted.code_execution(),
        hosted.mcp_server(url="https://mcp.example/mcp", name="wiki", headers={"X": "1"}),
    ]
    make(server, "azure-responses", model="gpt-4.1").generate("hi", tools=tools)
    body = sent(server, "azure-responses")
    assert body["tools"] == [
        {
            "type": "web_search",
            "user_location": {"type": "approximate", "city": "Lyon", "country": "FR"},
        },
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {
            "type": "mcp",
            "server_label": "wiki",
            "server_url": "https://mcp.example/mcp",
            "headers": {"X": "1"},
            "require_approval": "never",
        },
    ]
    assert "include" not in body


def test_the_callers_tool_dicts_are_not_changed(server: MockLLMServer) -> None:
    server.reset()
    server.enqueue("openai-responses", text="ok")
    tools = [
        hosted.web_search(allowed_domains=["a.example"], user_location={"country": "FR"}),
        hosted.mcp_server(url="https://m.example/mcp", name="m", headers={"X": "1"}),
        hosted.native({"type": "web_search_preview", "user_location": {"type": "approximate"}}),
    ]
    before = copy.deepcopy(tools)
    make(server).generate("hi", tools=tools)
    assert tools == before
    assert sent(server)["tools"][2] == before[2]["tool"]


REFUSED = [
    ("openai-responses", "gpt-5-mini", hosted.web_search(max_uses=2), "option 'max_uses'"),
    (
        "openai-responses",
        "gpt-5-mini",
        hosted.web_search(blocked_domains=["a.b"]),
        "blocked_domains",
    ),
    (
        "openai-responses",
        "gpt-5-mini",
        hosted.web_fetch(),
        "does not run the hosted tool 'web_fetch'",
    ),
    ("openai-responses", "gpt-4.1-nano", hosted.web_search(), "only models matching"),
    ("azure-responses", "gpt-4.1", hosted.file_search(vector_store_ids=["v"]), "'file_search'"),
    ("azure-responses", "gpt-4.1", hosted.web_search(allowed_domains=["a.b"]), "allowed_domains"),
    (
        "azure-responses",
        "gpt-4.1",
        hosted.mcp_server(url="https://m.example", name="m", allowed_tools=["a"]),
        "allowed_tools",
    ),
]


@pytest.mark.parametrize(("row", "model", "tool", "says"), REFUSED)
def test_what_the_row_does_not_run_is_refused_before_sending(
    server: MockLLMServer, row: str, model: str, tool: dict[str, Any], says: str
) -> None:
    server.reset()
    with pytest.raises(InvalidRequestError, match="tools\\[0\\]") as caught:
        make(server, row, model=model).generate("hi", tools=[tool])
    assert says in str(caught.value)
    assert server.requests_for(row) == []


def test_mcp_header_values_never_appear_in_a_refusal(server: MockLLMServer) -> None:
    tool = hosted.mcp_server(
        url="https://m.example", name="m", allowed_tools=["a"], headers={"Authorization": "s3cret"}
    )
    with pytest.raises(InvalidRequestError) as caught:
        make(server, "azure-responses", model="gpt-4.1").generate("hi", tools=[tool])
    assert "s3cret" not in str(caught.value) and "s3cret" not in repr(caught.value)


# --- the mock checks hosted declarations and replayed items as the API does -------------

MOCK_REFUSES = [
    (
        {"type": "web_search_20250305"},
        "Invalid value: 'web_search_20250305'. Supported values are: 'function', 'file_search'",
    ),
    ({"type": "file_search"}, "Missing required parameter: 'tools[0].vector_store_ids'."),
    (
        {"type": "file_search", "vector_store_ids": ["v"], "max_num_results": 51},
        "Invalid 'tools[0].max_num_results': integer above maximum value. Expected a value <= 50, but got 51 instead.",
    ),
    ({"type": "code_interpreter"}, "Missing required parameter: 'tools[0].container'."),
    ({"type": "mcp", "server_label": "m"}, "Missing required parameter: 'tools[0].server_url'."),
    (
        {
            "type": "mcp",
            "server_label": "m",
            "server_url": "https://m",
            "require_approval": "often",
        },
        "Invalid value: 'often'. Supported values are: 'always' and 'never'.",
    ),
    ({"type": "web_search_preview", "filters": {}}, "Unknown parameter: 'tools[0].filters'."),
    (
        {"type": "web_search", "filters": {"allowed_domains": "a.example"}},
        "Invalid type for 'tools[0].filters.allowed_domains': expected an array of strings, but got a string instead.",
    ),
    (
        {"type": "web_search", "user_location": {"type": "exact"}},
        "Invalid value: 'exact'. Supported values are: 'approximate'.",
    ),
]


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize(("tool", "message"), MOCK_REFUSES)
def test_the_mock_refuses_a_hosted_declaration_as_the_api_does(
    server: MockLLMServer, row: str, tool: dict[str, Any], message: str
) -> None:
    server.reset()
    with pytest.raises(InvalidRequestError) as caught:
        make(server, row, model="gpt-4.1").generate("hi", tools=[hosted.native(tool)])
    assert caught.value.status_code == 400
    assert message in caught.value.message
    assert server.last_request(row).rejected_by == "hosted_tools_valid"


def _fixture(body: Any, *, stream: bool = False) -> dict[str, Any]:
    """A response to serve verbatim (enqueue_recorded): a JSON body, or SSE events."""
    if not stream:
        return {"response": {"status": 200, "body": body, "body_encoding": "json"}}
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in body)
    headers = {"content-type": "text/event-stream"}
    response = {"status": 200, "headers": headers, "body": text, "body_encoding": "text"}
    return {"response": response, "streaming": True}


def _response(output: list[dict[str, Any]]) -> dict[str, Any]:
    usage = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": output,
        "usage": usage,
    }


CODE_CALL = {
    "id": "ci_9",
    "type": "code_interpreter_call",
    "code": None,
    "container_id": "cntr_9",
    "outputs": None,
    "status": "completed",
}
MESSAGE = {
    "id": "msg_9",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
}


@pytest.mark.parametrize("row", ROWS)
def test_a_hosted_item_goes_back_as_the_api_sent_it_nulls_included(
    server: MockLLMServer, row: str
) -> None:
    """A code_interpreter_call without outputs (no include) has ``outputs: null``, which the
    input item requires: dropping the null would be refused."""
    server.reset()
    llm = make(server, row, model="gpt-4.1")
    server.enqueue_recorded(_fixture(_response([CODE_CALL, MESSAGE])), provider=row)
    first = llm.generate("run it", tools=[hosted.code_execution()])
    assert first["server_tool_calls"] == [
        {
            "id": "ci_9",
            "type": "code_execution",
            "name": "code_interpreter_call",
            "input": {},
            "output": None,
        }
    ]
    server.enqueue(row, text="ok")
    llm.generate([user("run it"), first["message"], user("again")], tools=[hosted.code_execution()])
    assert server.last_request(row).rejected_by is None
    assert sent(server, row)["input"][1:3] == [
        CODE_CALL,
        {**MESSAGE, "content": [{"type": "output_text", "text": "Done.", "annotations": []}]},
    ]


def test_the_mock_refuses_a_replayed_hosted_item_without_a_required_field(
    server: MockLLMServer,
) -> None:
    server.reset()
    item = {k: v for k, v in CODE_CALL.items() if k != "outputs"}
    turn = {
        "role": "assistant",
        "content": "Done.",
        "provider_data": {
            "openai-responses": {"items": [item, {"type": "message", "id": "msg_9", "length": 5}]}
        },
        "server_tool_calls": [
            {
                "id": "ci_9",
                "type": "code_execution",
                "name": "code_interpreter_call",
                "input": {},
                "output": None,
            }
        ],
    }
    with pytest.raises(InvalidRequestError) as caught:
        make(server, model="gpt-4.1").generate([user("run it"), turn, user("again")])
    assert "Missing required parameter: 'input[1].outputs'." in caught.value.message


# --- scripted hosted calls and citations ---------------------------------------------------


async def _answers(llm: Any, mode: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if mode == "generate":
        return llm.generate("fox?"), []
    if mode == "generate_async":
        return await llm.generate_async("fox?"), []
    if mode == "stream":
        events = list(llm.stream("fox?"))
    else:
        events = [e async for e in llm.stream_async("fox?")]
    return events[-1]["result"], events


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("row", ROWS)
async def test_scripted_calls_and_citations_come_back_as_scripted(
    server: MockLLMServer, row: str, fast: bool
) -> None:
    server.reset()
    llm = make(server, row, fast_path=fast)
    results = []
    for mode in ("generate", "generate_async", "stream", "stream_async"):
        server.enqueue(row, text=TEXT, server_tool_calls=CALLS, citations=CITES, fragments=3)
        result, events = await _answers(llm, mode)
        assert result["server_tool_calls"] == CALLS
        assert result["citations"] == CITES
        assert result["message"]["server_tool_calls"] == CALLS
        if events:
            kinds = [e["type"] for e in events]
            # Each call as it completes, all before the text; each citation after its text.
            assert [
                e["server_tool_call"] for e in events if e["type"] == "server_tool_call"
            ] == CALLS
            assert [e["citation"] for e in events if e["type"] == "citation"] == CITES
            assert kinds.index("text") > max(
                i for i, k in enumerate(kinds) if k == "server_tool_call"
            )
            assert kinds.index("citation") > kinds.index("text")
        results.append(without_ids(result))
    assert all(r == results[0] for r in results)


@pytest.mark.parametrize("row", ROWS)
def test_a_scripted_hosted_turn_goes_back_by_item_id_in_order(
    server: MockLLMServer, row: str
) -> None:
    server.reset()
    llm = make(server, row)
    server.enqueue(
        row, text=TEXT, server_tool_calls=CALLS[:3], citations=CITES[:1], reasoning="Search."
    )
    first = llm.generate("fox?")
    items = first["provider_data"][row]["items"]
    assert [i["type"] for i in items] == [
        "reasoning", "web_search_call", "file_search_call", "code_interpreter_call", "message"
    ]  # fmt: skip
    assert llm._replays_hosted(first["message"]) is True
    server.enqueue(row, text="More.")
    llm.generate([user("fox?"), first["message"], user("more")])
    assert server.last_request(row).rejected_by is None
    replayed = sent(server, row)["input"][1:6]
    assert replayed[:4] == items[:4]  # reasoning and the hosted items as the API sent them
    assert replayed[4]["id"] == items[4]["id"] and replayed[4]["content"][0]["text"] == TEXT


@pytest.mark.parametrize("other", ["openai", "azure-responses"])
def test_a_hosted_turn_reaches_another_row_as_text(server: MockLLMServer, other: str) -> None:
    server.reset()
    llm = make(server)
    server.enqueue("openai-responses", text=TEXT, server_tool_calls=CALLS[:1])
    first = llm.generate("fox?")
    server.enqueue(other, text="Next.")
    make(server, other, model="gpt-4.1").generate([user("fox?"), first["message"], user("more")])
    body = sent(server, other)
    assistant = body["messages"][1] if other == "openai" else body["input"][1]
    expected = (
        '[web_search: web_search_call {"query": "zerda fox"}]\n'
        "https://a.example/fox\nhttps://b.example/fox\n\n" + TEXT
    )
    assert assistant == {"role": "assistant", "content": expected}
    assert "web_search_call" not in [i.get("type") for i in body.get("input", [])]


def test_replays_hosted_only_for_its_own_hosted_items(server: MockLLMServer) -> None:
    llm = make(server)
    web = {
        "type": "web_search_call",
        "id": "ws_1",
        "action": {"type": "search"},
        "status": "completed",
    }
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}

    def turn(key: str, *items: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": "x", "provider_data": {key: {"items": list(items)}}}

    assert llm._replays_hosted(turn("openai-responses", reasoning, web)) is True
    assert llm._replays_hosted(turn("openai-responses", reasoning)) is False
    assert llm._replays_hosted(turn("azure-responses", web)) is False
    assert llm._replays_hosted({"role": "assistant", "content": "x"}) is False


# --- what the provider sends that Zerda does not know --------------------------------------

UNKNOWN = {"id": "ft_1", "type": "future_tool_call", "status": "completed", "payload": {"a": 1}}
APPROVAL = {
    "id": "mcpr_1",
    "type": "mcp_approval_request",
    "server_label": "wiki",
    "name": "ask",
    "arguments": '{"q": "fox"}',
}
COMPUTER = {
    "id": "cu_1",
    "type": "computer_call",
    "call_id": "c1",
    "action": {"type": "screenshot"},
    "status": "completed",
    "pending_safety_checks": [],
}


def test_unknown_hosted_items_are_other_kept_and_sent_back(server: MockLLMServer) -> None:
    server.reset()
    llm = make(server, model="gpt-4.1")
    output = [UNKNOWN, APPROVAL, COMPUTER, MESSAGE]
    server.enqueue_recorded(_fixture(_response(output)), provider="openai-responses")
    result = llm.generate("hi")
    assert result["server_tool_calls"] == [
        {"id": "ft_1", "type": "other", "name": "future_tool_call", "input": {}, "output": None},
        {
            "id": "mcpr_1",
            "type": "mcp",
            "name": "mcp_approval_request",
            "input": {"server_label": "wiki", "name": "ask", "arguments": {"q": "fox"}},
            "output": None,
        },
    ]  # a computer_call is the client's to run: no server call
    items = result["provider_data"]["openai-responses"]["items"]
    assert items[:3] == [UNKNOWN, APPROVAL, COMPUTER]


# --- citations over the joined text ----------------------------------------------------------

FIRST = {
    "id": "msg_a",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Héllo. ", "annotations": []}],
}
SECOND = {
    "id": "msg_b",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [
        {
            "type": "output_text",
            "text": "See fox.",
            "annotations": [
                {
                    "type": "url_citation",
                    "start_index": 4,
                    "end_index": 7,
                    "url": "https://f.example",
                    "title": "Fox",
                },
                {"type": "file_citation", "index": 8, "file_id": "file-1", "filename": "fox.txt"},
                {"type": "file_path", "index": 0, "file_id": "file-2"},
            ],
        },
        {
            "type": "output_text",
            "text": " Box.",
            "annotations": [
                {
                    "type": "container_file_citation",
                    "start_index": 1,
                    "end_index": 4,
                    "container_id": "cntr_1",
                    "file_id": "cfile_1",
                    "filename": "box.png",
                }
            ],
        },
    ],
}
WEB = {
    "id": "ws_2",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "open_page", "url": "https://f.example"},
}
EXPECTED_CITES = [
    {"url": "https://f.example", "title": "Fox", "text": None, "start": 11, "end": 14},
    {"url": None, "title": "fox.txt", "text": None, "start": 15, "end": 15},
    {"url": None, "title": "box.png", "text": None, "start": 16, "end": 19},
]


def _events(output: list[dict[str, Any]], deltas: bool) -> list[dict[str, Any]]:
    """A Responses stream of ``output``: items added and done, text as deltas (with the
    annotations as annotation.added events) or only in the done items."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**_response([]), "status": "in_progress"}}
    ]
    for index, item in enumerate(output):
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "content": []},
            }
        )
        for n, part in enumerate(item.get("content") or [] if deltas else []):
            at = {"item_id": item["id"], "output_index": index, "content_index": n}
            events.append({"type": "response.output_text.delta", **at, "delta": part["text"]})
            events += [
                {
                    "type": "response.output_text.annotation.added",
                    **at,
                    "annotation_index": k,
                    "annotation": a,
                }
                for k, a in enumerate(part["annotations"])
            ]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events + [{"type": "response.completed", "response": _response(output)}]


@pytest.mark.parametrize("deltas", [True, False])
def test_citation_offsets_count_the_text_before_their_part(
    server: MockLLMServer, deltas: bool
) -> None:
    server.reset()
    llm = make(server, model="gpt-4.1")
    output = [FIRST, WEB, SECOND]
    server.enqueue_recorded(_fixture(_response(output)), provider="openai-responses")
    generated = llm.generate("hi")
    assert generated["content"] == "Héllo. See fox. Box."
    assert generated["citations"] == EXPECTED_CITES
    assert generated["content"][11:14] == "fox"
    server.enqueue_recorded(
        _fixture(_events(output, deltas), stream=True), provider="openai-responses"
    )
    events = list(llm.stream("hi"))
    assert [e["citation"] for e in events if e["type"] == "citation"] == EXPECTED_CITES
    assert without_ids(events[-1]["result"]) == without_ids(generated)


def test_server_call_events_follow_the_output_order_when_the_stream_skips_an_item(
    server: MockLLMServer,
) -> None:
    """An item the stream never finishes (only response.completed holds it) comes before
    a later one that the stream finished: the events wait, so they and the result keep the
    output order, as generate gives it."""
    server.reset()
    llm = make(server, model="gpt-4.1")
    first = {**WEB, "id": "ws_a"}
    second = {**WEB, "id": "ws_b"}
    events = [
        e
        for e in _events([first, second, MESSAGE], True)
        if e.get("item", {}).get("id") != "ws_a" or e["type"] == "response.completed"
    ]
    server.enqueue_recorded(_fixture(events, stream=True), provider="openai-responses")
    streamed = list(llm.stream("hi"))
    ids = [e["server_tool_call"]["id"] for e in streamed if e["type"] == "server_tool_call"]
    assert ids == ["ws_a", "ws_b"]
    assert [c["id"] for c in streamed[-1]["result"]["server_tool_calls"]] == ids


# --- the recorded hosted answers -----------------------------------------------------------


def _recorded() -> list[Any]:
    files = []
    for path in sorted(RECORDED.glob("*.json")) if RECORDED.is_dir() else []:
        fixture = json.loads(path.read_text(encoding="utf-8"))
        if "server_tool" in fixture["features"] and fixture["response"]["status"] == 200:
            files.append(pytest.param(path, id=path.stem[-70:]))
    return files or [pytest.param(None, marks=pytest.mark.skip(reason=f"{RECORDED} is absent"))]


def _recorded_output(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """The response's output items: the JSON body's, or a stream's response.completed's."""
    body = fixture["response"]["body"]
    if not fixture["streaming"]:
        return list(body["output"])
    for line in body.splitlines():
        if line.startswith("data:") and '"response.completed"' in line:
            return list(json.loads(line[5:])["response"]["output"])
    raise AssertionError("no response.completed")


def _cited_spans(output: list[dict[str, Any]]) -> list[str]:
    """The text each url_citation covers, read in its own text part."""
    spans = []
    for item in (i for i in output if i.get("type") == "message"):
        for part in item.get("content") or []:
            for a in part.get("annotations") or []:
                if a.get("type") == "url_citation":
                    spans.append(part["text"][a["start_index"] : a["end_index"]])
    return spans


def _recorded_answer(
    server: MockLLMServer, interfaces: Callable[..., Any], fixture: dict[str, Any], fast: bool
) -> dict[str, Any]:
    """The recording served verbatim, through generate (JSON) or stream: the stream's
    events are its result's, and ``raw`` is the body (a stream's: its events). The
    interfaces are made once per model and path for every recording (tests/conftest.py)."""
    model = fixture["model"] or "gpt-5"
    llm = interfaces("openai-responses", model, max_retries=0, raise_errors=True, fast_path=fast)
    server.enqueue_recorded(fixture, provider="openai-responses")
    if not fixture["streaming"]:
        result: dict[str, Any] = llm.generate("recorded", include_raw=True)
        assert result["raw"] == fixture["response"]["body"]
        return result
    events = list(llm.stream("recorded", include_raw=True))
    result = events[-1]["result"]
    calls = [e["server_tool_call"] for e in events if e["type"] == "server_tool_call"]
    assert calls == result.get("server_tool_calls", [])
    cited = [e["citation"] for e in events if e["type"] == "citation"]
    assert cited == result.get("citations", [])
    lines = fixture["response"]["body"].splitlines()
    assert result["raw"] == [json.loads(x[5:]) for x in lines if x.startswith("data:")]
    return result


@pytest.mark.parametrize("path", _recorded())
def test_a_recorded_hosted_answer_gives_its_calls_and_citations(
    server: MockLLMServer, interfaces: Callable[..., Any], path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    server.reset()
    result = _recorded_answer(server, interfaces, fixture, fast=True)
    # The SDK's own call:
    assert _recorded_answer(server, interfaces, fixture, fast=False) == result
    output = _recorded_output(fixture)
    hosted_items = [i for i in output if wire_hosted.is_hosted_item(i.get("type"))]
    assert [(c["id"], c["name"]) for c in result.get("server_tool_calls", [])] == [
        (i["id"], i["type"]) for i in hosted_items
    ]
    derived = fixture["derived"].get("server_tool_calls") or []
    if derived:
        assert [(c["id"], c["name"]) for c in result["server_tool_calls"]] == [
            (d["id"], d["name"]) for d in derived
        ]
    assert [c["type"] for c in result.get("server_tool_calls", [])] == [
        wire_hosted.HOSTED_ITEMS.get(i["type"], "other") for i in hosted_items
    ]
    content = result["content"] or ""
    urls = [c for c in result.get("citations", []) if c["url"]]
    assert [content[c["start"] : c["end"]] for c in urls] == _cited_spans(output)


READABLE = [
    (
        "pydantic-ai__test_openai_responses.test_openai_responses_model_file_search_tool_with_results__i03.json",
        {
            "id": "fs_08aa886305ae5628006939ad6cfa30819a85b07d52d61eb121",
            "type": "file_search",
            "name": "file_search_call",
            "input": {"queries": ["What is the capital of France?"]},
            "output": "tmpd_9a5dki.txt: Paris is the capital of France. It is known for the Eiffel Tower.",
        },
    ),
    (
        "pydantic-ai__test_openai_responses.test_openai_responses_code_execution_return_image__i00.json",
        {"name": "code_interpreter_call", "output": "[image]\n'/mnt/data/y_equals_x_squared.png'"},
    ),
    (
        "pydantic-ai__test_openai_responses.test_openai_responses_model_mcp_server_tool__i00.json",
        {
            "id": "mcpl_0083938b3a28070e0068fabd81d51081a09d4b183ced693273",
            "type": "mcp",
            "name": "mcp_list_tools",
            "input": {"server_label": "deepwiki"},
            "output": "ask_question",
        },
    ),
    (
        "pydantic-ai__test_openai_responses.test_openai_responses_model_web_search_tool__i00.json",
        {
            "id": "ws_028829e50fbcad090068c9c8306aec8195ae9451d32175ed69",
            "type": "web_search",
            "name": "web_search_call",
            "input": {"query": "weather: San Francisco, CA"},
            "output": None,
        },
    ),
]


@pytest.mark.parametrize(("name", "expected"), READABLE)
def test_a_recorded_hosted_item_reads_as_its_readable_part(
    server: MockLLMServer, name: str, expected: dict[str, Any]
) -> None:
    path = RECORDED / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    fixture = json.loads(path.read_text(encoding="utf-8"))
    server.reset()
    server.enqueue_recorded(fixture, provider="openai-responses")
    call = make(server, model=fixture["model"]).generate("recorded")["server_tool_calls"][0]
    assert {k: call[k] for k in expected} == expected


def test_a_recorded_mcp_call_reads_its_server_tool_and_arguments(server: MockLLMServer) -> None:
    path = (
        RECORDED
        / "pydantic-ai__test_openai_responses.test_openai_responses_model_mcp_server_tool__i00.json"
    )
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    fixture = json.loads(path.read_text(encoding="utf-8"))
    server.reset()
    server.enqueue_recorded(fixture, provider="openai-responses")
    call = make(server, model="o4-mini").generate("recorded")["server_tool_calls"][1]
    assert call["input"] == {
        "server_label": "deepwiki",
        "name": "ask_question",
        "arguments": {
            "repoName": "pydantic/pydantic-ai",
            "question": "Provide a brief summary of the repository, including purpose, main features, and status.",
        },
    }
    assert call["output"].startswith("Pydantic AI is a Python agent framework")


FOLLOW_UPS = [
    "pydantic-ai__test_openai_responses.test_openai_responses_model_web_search_tool",
    "pydantic-ai__test_tool_search.test_openai_hosted_tool_search_stateless_continuation",
]


@pytest.mark.parametrize("stem", FOLLOW_UPS)
def test_a_recorded_hosted_turn_goes_back_as_the_recorded_follow_up(
    server: MockLLMServer, stem: str
) -> None:
    """The answer's items go back by id, in order, as the recorded follow-up (which the API
    accepted) sent them; where that client rewrote an item (pydantic-ai's tool search call
    ``paths`` -> ``queries``, its loaded tools' null ``output_schema`` dropped) Zerda sends
    the item as the API sent it."""
    first, second = (RECORDED / f"{stem}__i0{n}.json" for n in (0, 1))
    if not (first.is_file() and second.is_file()):
        pytest.skip(f"{RECORDED} is absent")
    i00, i01 = (json.loads(p.read_text(encoding="utf-8")) for p in (first, second))
    server.reset()
    llm = make(server, model=i00["model"])
    system = i00["request"]["body"].get("instructions")
    server.enqueue_recorded(i00, provider="openai-responses")
    question = i00["request"]["body"]["input"][0]["content"]
    answer = llm.generate(question, system=system)
    follow = i01["request"]["body"]["input"][-1]["content"]
    server.enqueue_recorded(i01, provider="openai-responses")
    llm.generate([user(question), answer["message"], user(follow)], system=system)
    assert server.last_request("openai-responses").rejected_by is None
    got, want = sent(server)["input"], i01["request"]["body"]["input"]
    assert [(i.get("type"), i.get("id")) for i in got] == [
        (i.get("type"), i.get("id")) for i in want
    ]
    output = i00["response"]["body"]["output"]
    for item in (i for i in got if wire_hosted.is_hosted_item(i.get("type"))):
        assert item == next(o for o in output if o["id"] == item["id"])
    if "web_search" in stem:
        assert got == want


@pytest.mark.parametrize("stream", [False, True])
def test_include_raw_is_the_body_and_mcp_secrets_stay_redacted(
    server: MockLLMServer, stream: bool
) -> None:
    """The response echoes its tools as the API does, an MCP server's header values and URL
    path redacted: a raw answer holds no credential."""
    server.reset()
    llm = make(server)
    tool = hosted.mcp_server(
        url="https://m.example/mcp/s3cret-path", name="m", headers={"Authorization": "s3cret"}
    )
    server.enqueue("openai-responses", text="ok", server_tool_calls=CALLS[3:5])
    if stream:
        events = list(llm.stream("hi", tools=[tool], include_raw=True))
        result = events[-1]["result"]
        body = next(e for e in result["raw"] if e["type"] == "response.completed")["response"]
        assert [e["type"] for e in result["raw"]][-1] == "response.completed"
    else:
        result = llm.generate("hi", tools=[tool], include_raw=True)
        body = result["raw"]
    assert body["tools"] == [
        {
            "type": "mcp",
            "server_label": "m",
            "server_url": "https://m.example/<redacted>",
            "headers": {"Authorization": "<redacted>"},
            "require_approval": "never",
        }
    ]
    assert [i["id"] for i in body["output"][:2]] == ["mcpl_1", "mcp_1"]
    assert "s3cret" not in json.dumps(result)


def test_token_counting_sends_the_hosted_tools_and_the_mock_checks_them(
    server: MockLLMServer,
) -> None:
    server.reset()
    llm = make(server)
    counted = llm.count_tokens("hi", tools=[hosted.web_search(), hosted.code_execution()])
    assert counted["exact"] is True
    assert sent(server)["tools"] == [
        {"type": "web_search"},
        {"type": "code_interpreter", "container": {"type": "auto"}},
    ]
    with pytest.raises(InvalidRequestError) as caught:
        llm.count_tokens("hi", tools=[hosted.native({"type": "file_search"})])
    assert caught.value.message == "Missing required parameter: 'tools[0].vector_store_ids'."
    assert server.last_request("openai-responses").rejected_by == "hosted_tools_valid"
