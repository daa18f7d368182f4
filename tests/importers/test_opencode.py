import json
from typing import Any

import pytest

from app.importers.imported import ImportedMessage, ImportRefused, ImportResult
from app.importers.registry import parse_import
from tests.importers.checks import parts
from tests.importers.samples import opencode as opencode_sample


def parse(data: bytes, **options: Any) -> ImportResult:
    return parse_import("opencode", data, **options)


def messages() -> dict[str, ImportedMessage]:
    return {message.id: message for message in parse(opencode_sample()).sessions[0].messages}


def test_the_session_keeps_its_id_title_and_newest_model() -> None:
    [session] = parse(opencode_sample()).sessions
    assert (session.id, session.title, session.model) == ("ses_1", "Tidy the exports", "anthropic/claude-sonnet-4-5")
    assert session.metadata["opencode"]["directory"] == "/w"


def test_each_step_of_an_answer_is_an_assistant_message_followed_by_its_results() -> None:
    order = [message.id for message in parse(opencode_sample()).sessions[0].messages]
    assert order[:4] == ["msg_u1", "msg_a1", "prt_a3", "prt_a6"]
    first, results, second = messages()["msg_a1"], messages()["prt_a3"], messages()["prt_a6"]
    assert [p["type"] for p in parts(first)] == ["reasoning", "tool-call", "tool-call"]
    assert parts(first)[0]["providerOptions"] == {"anthropic": {"signature": "sig-oc"}}
    assert first.metadata["finishReason"] == "tool-calls" and second.metadata["finishReason"] == "stop"
    assert [p["output"]["type"] for p in parts(results)] == ["text", "error-text"]
    assert results.metadata["compactedAt"] == "2026-03-02T09:10:00+00:00"


def test_user_files_become_parts_and_inlined_text_files_are_skipped() -> None:
    user = messages()["msg_u1"]
    assert [p["type"] for p in parts(user)] == ["text", "text", "image"]
    assert parts(user)[2] == {"type": "image", "image": "data:image/png;base64,iVBORw0KGgo=", "mediaType": "image/png"}
    skipped = parse(opencode_sample()).report.skipped
    assert [(s.line, s.reason.split(":")[0]) for s in skipped] == [(1, "file part prt_u2"), (2, "patch part prt_a8")]


def test_a_compaction_request_and_its_summary_become_a_boundary_and_summary() -> None:
    boundary, summary = messages()["msg_u2"], messages()["msg_a2"]
    assert (boundary.role, boundary.metadata["runtimeKind"]) == ("system", "compact_boundary")
    assert boundary.metadata["compactThroughMessageId"] == "prt_a6"
    assert (summary.role, summary.content) == ("user", "Summary: tidied a.ts exports.")
    assert summary.metadata["summaryForBoundaryId"] == "msg_u2" and "usage" not in summary.metadata


def test_a_tool_that_never_finished_is_reported_unanswered_and_the_aborted_answer_says_so() -> None:
    result = parse(opencode_sample())
    assert [(r.tool_call_id, r.message_id) for r in result.report.unanswered_calls] == [("toolu_o3", "msg_a3")]
    assert messages()["msg_a3"].metadata["finishReason"] == "aborted"


def test_an_answer_still_streaming_is_not_settled() -> None:
    document = json.loads(opencode_sample())
    streaming = document["messages"][-1]["info"]
    del streaming["error"], streaming["time"]["completed"]
    [session] = parse(json.dumps(document).encode()).sessions
    assert session.settled == len(session.messages) - 1


def test_a_document_that_is_not_an_export_is_refused() -> None:
    with pytest.raises(ImportRefused):
        parse(b'{"messages": []}')


def test_a_message_that_is_not_an_opencode_message_is_reported_and_strict_refuses_it() -> None:
    document = json.loads(opencode_sample())
    document["messages"].insert(1, {"info": {"role": "robot", "id": "x"}, "parts": []})
    data = json.dumps(document).encode()
    assert [(s.line, s.reason.split(" (")[0]) for s in parse(data).report.invalid] == [
        (2, "message of unknown role 'robot' or without an id")
    ]
    with pytest.raises(ImportRefused) as refused:
        parse(data, strict=True)
    assert refused.value.line == 2


def test_reasoning_tokens_are_counted_in_the_output_as_the_stored_usage_convention_says() -> None:
    document = json.loads(opencode_sample())
    for message in document["messages"]:
        for part in message["parts"]:
            if part["type"] == "step-finish":
                part["tokens"] = {"input": 10, "output": 20, "reasoning": 7, "cache": {"read": 100, "write": 5}}
    usage = parse(json.dumps(document).encode()).sessions[0].messages[1].metadata["usage"]
    assert (usage["outputTokens"], usage["reasoningTokens"]) == (27, 7)


def test_a_tool_the_provider_ran_keeps_its_result_beside_the_call_in_the_assistant_message() -> None:
    searched = {
        "type": "tool",
        "id": "prt_s1",
        "callID": "srvtoolu_1",
        "tool": "web_search",
        "metadata": {"providerExecuted": True},
        "state": {"status": "completed", "input": {"query": "news"}, "output": "nothing new"},
    }
    answer = {"type": "text", "id": "prt_s2", "text": "Nothing new."}
    document = {
        "info": {"id": "ses_s"},
        "messages": [
            {"info": {"id": "msg_u", "role": "user", "time": {"created": 1}}, "parts": [{"type": "text", "text": "?"}]},
            {
                "info": {"id": "msg_a", "role": "assistant", "time": {"created": 2, "completed": 3}},
                "parts": [searched, answer],
            },
        ],
    }
    [_, assistant] = parse(json.dumps(document).encode()).sessions[0].messages
    call, result, text = parts(assistant)
    assert (call["providerExecuted"], result["providerExecuted"]) == (True, True)
    assert (result["toolCallId"], result["output"]) == ("srvtoolu_1", {"type": "text", "value": "nothing new"})
    assert text == {"type": "text", "text": "Nothing new."}


def test_a_tool_calls_provider_metadata_goes_with_the_call_as_opencode_replays_it() -> None:
    signed = {
        "type": "tool",
        "id": "prt_t1",
        "callID": "call_ls_1",
        "tool": "bash",
        "metadata": {"google": {"thoughtSignature": "CiQBcsjafSIG=="}},
        "state": {"status": "completed", "input": {"command": "ls"}, "output": "a.txt"},
    }
    document = {
        "info": {"id": "ses_g"},
        "messages": [
            {"info": {"id": "msg_u", "role": "user", "time": {"created": 1}}, "parts": [{"type": "text", "text": "?"}]},
            {"info": {"id": "msg_a", "role": "assistant", "time": {"created": 2, "completed": 3}}, "parts": [signed]},
        ],
    }
    [_, assistant, _] = parse(json.dumps(document).encode()).sessions[0].messages
    assert parts(assistant)[0]["providerOptions"] == {"google": {"thoughtSignature": "CiQBcsjafSIG=="}}
    assert "providerOptions" not in parts(messages()["msg_a1"])[1]
