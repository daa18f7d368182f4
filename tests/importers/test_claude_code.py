import json
from typing import Any

import pytest

from app.engine.kinds import Kind
from app.importers.imported import ImportedMessage, ImportedSession, ImportRefused, ImportResult
from app.importers.registry import parse_import
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from tests.importers.checks import engine_messages, parts
from tests.importers.claude_code_lines import (
    MODEL,
    SESSION,
    answer,
    attachment,
    image,
    jsonl,
    prompt,
    results,
    system,
    text,
    thinking,
    tool_result,
    tool_use,
)


def parse(data: bytes, *, strict: bool = False) -> ImportResult:
    return parse_import("claude-code", data, strict=strict)


def session_of(*records: dict[str, Any]) -> ImportedSession:
    return parse(jsonl(*records)).sessions[0]


def by_id(session: ImportedSession) -> dict[str, ImportedMessage]:
    return {message.id: message for message in session.messages}


def test_the_lines_of_one_response_are_one_assistant_message_with_the_response_id() -> None:
    session = session_of(
        prompt("u1", None, "Fix it"),
        answer("a1", "u1", "msg_1", text("Looking."), output_tokens=1),
        answer("a2", "a1", "msg_1", tool_use("toolu_1", "Read", file_path="a.ts"), output_tokens=1),
        answer("a3", "a2", "msg_1", tool_use("toolu_2", "Grep", pattern="x"), output_tokens=88),
    )
    assert [m.id for m in session.messages] == ["u1", "msg_1"]
    merged = session.messages[1]
    assert [p["type"] for p in parts(merged)] == ["text", "tool-call", "tool-call"]
    assert merged.metadata["usage"] == {
        "inputTokens": 3,
        "outputTokens": 88,
        "cacheReadTokens": 5400,
        "cacheWriteTokens": 1200,
    }
    assert (merged.metadata["provider"], merged.metadata["model"]) == ("anthropic", MODEL)
    assert session.model == f"anthropic/{MODEL}" and session.id == SESSION


def test_answers_streamed_between_the_calls_of_one_response_follow_the_whole_response() -> None:
    session = session_of(
        prompt("u1", None, "Check both"),
        answer("a1", "u1", "msg_1", tool_use("toolu_1", "Read", file_path="a.ts")),
        results("r1", "a1", tool_result("toolu_1", "a")),
        answer("a2", "r1", "msg_1", tool_use("toolu_2", "Read", file_path="b.ts")),
        results("r2", "a2", tool_result("toolu_2", "b")),
        answer("a3", "r2", "msg_2", text("Both read."), stop_reason="end_turn"),
    )
    assert [m.id for m in session.messages] == ["u1", "msg_1", "r1", "r2", "msg_2"]
    assert [p["toolCallId"] for p in parts(session.messages[1])] == ["toolu_1", "toolu_2"]


def test_results_become_a_tool_message_and_text_in_the_same_line_a_user_message_after_it() -> None:
    session = session_of(
        prompt("u1", None, "Go"),
        answer("a1", "u1", "msg_1", tool_use("toolu_1", "Bash", command="make")),
        results("r1", "a1", tool_result("toolu_1", "make: error 2", is_error=True), text("Stop, use ninja")),
    )
    tool, user = session.messages[2:]
    assert (tool.id, tool.role, user.id, user.role) == ("r1", "tool", "r1:prompt", "user")
    assert tool.content == [
        {
            "type": "tool-result",
            "toolCallId": "toolu_1",
            "toolName": "Bash",
            "output": {"type": "error-text", "value": "make: error 2"},
        }
    ]
    assert user.content == [{"type": "text", "text": "Stop, use ninja"}]


def test_thinking_keeps_its_signature_and_redacted_thinking_its_data() -> None:
    session = session_of(
        prompt("u1", None, "Think"),
        answer("a1", "u1", "msg_1", thinking("Plan.", signature="sig-1")),
        answer("a2", "a1", "msg_1", {"type": "redacted_thinking", "data": "opaque"}),
        answer("a3", "a2", "msg_1", text("Done.")),
    )
    assert parts(session.messages[1])[:2] == [
        {"type": "reasoning", "text": "Plan.", "providerOptions": {"anthropic": {"signature": "sig-1"}}},
        {"type": "reasoning", "text": "", "providerOptions": {"anthropic": {"redactedData": "opaque"}}},
    ]


def test_pasted_images_and_images_in_tool_results_are_kept() -> None:
    session = session_of(
        prompt("u1", None, [text("This screen"), image("AAAA", "image/jpeg")]),
        answer("a1", "u1", "msg_1", tool_use("toolu_1", "Screenshot")),
        results("r1", "a1", tool_result("toolu_1", [text("taken"), image("BBBB")])),
    )
    assert parts(session.messages[0])[1] == {"type": "image", "image": "AAAA", "mediaType": "image/jpeg"}
    assert parts(session.messages[2])[0]["output"] == {
        "type": "content",
        "value": [{"type": "text", "text": "taken"}, {"type": "image-data", "data": "BBBB", "mediaType": "image/png"}],
    }


def test_tool_use_result_is_kept_beside_the_result_unless_it_is_large() -> None:
    big = {"file": {"content": "x" * 40_000}}
    result = parse(
        jsonl(
            prompt("u1", None, "Read"),
            answer("a1", "u1", "msg_1", tool_use("toolu_1", "Read"), tool_use("toolu_2", "Read")),
            results("r1", "a1", tool_result("toolu_1", "small"), toolUseResult={"lines": 3}),
            results("r2", "a1", tool_result("toolu_2", "large"), toolUseResult=big),
        )
    )
    messages = by_id(result.sessions[0])
    assert messages["r1"].metadata["claudeCode"]["toolUseResult"] == {"lines": 3}
    assert "toolUseResult" not in messages["r2"].metadata["claudeCode"]
    assert [(r.line, r.message_id) for r in result.report.repairs] == [(4, "r2")]
    assert "toolUseResult of 40" in result.report.repairs[0].detail


def test_the_share_of_cache_writes_that_lives_an_hour_is_kept_in_the_usage() -> None:
    written = answer("a1", "u1", "msg_1", text("Done."))
    written["message"]["usage"]["cache_creation"] = {
        "ephemeral_1h_input_tokens": 1000,
        "ephemeral_5m_input_tokens": 200,
    }
    usage = session_of(prompt("u1", None, "Go"), written).messages[1].metadata["usage"]
    assert (usage["cacheWriteTokens"], usage["cacheWrite1hTokens"]) == (1200, 1000)


def test_the_finish_reason_comes_from_the_stop_reason() -> None:
    session = session_of(prompt("u1", None, "Hi"), answer("a1", "u1", "msg_1", text("Hello"), stop_reason="max_tokens"))
    assert session.messages[1].metadata["finishReason"] == "length"


def test_a_compact_boundary_and_its_summary_become_a_linked_pair() -> None:
    session = session_of(
        prompt("u1", None, "Long work"),
        answer("a1", "u1", "msg_1", text("Done")),
        system(
            "c1", None, "compact_boundary", logicalParentUuid="a1", compactMetadata={"trigger": "auto", "preTokens": 9}
        ),
        prompt("u2", "c1", "This session is being continued. Summary: long work done.", isCompactSummary=True),
        answer("a2", "u2", "msg_2", text("Continuing")),
    )
    boundary, summary = by_id(session)["c1"], by_id(session)["u2"]
    assert boundary.role == "system" and boundary.metadata["runtimeKind"] == "compact_boundary"
    assert boundary.metadata["compactThroughMessageId"] == "msg_1"
    assert boundary.metadata["claudeCode"]["trigger"] == "auto"
    assert summary.metadata["runtimeKind"] == "compact_summary"
    assert summary.metadata["summaryForBoundaryId"] == "c1"
    model = project(View.MODEL, engine_messages(session), ProjectionContext())
    assert model.diagnostics.applied_compact_boundary_id == "c1"
    assert [m.source_message_ids for m in model.messages] == [("u2",), ("msg_2",)]


def test_a_summary_written_without_a_boundary_gets_one_made_and_reported() -> None:
    result = parse(
        jsonl(
            prompt("u1", None, "Long work"),
            answer("a1", "u1", "msg_1", text("Done")),
            prompt("u2", None, "This session is being continued. Summary: done.", isCompactSummary=True),
        )
    )
    session = result.sessions[0]
    assert [m.id for m in session.messages] == ["u1", "msg_1", "u2:boundary", "u2"]
    assert session.messages[2].metadata["compactThroughMessageId"] == "msg_1"
    assert session.messages[3].metadata["summaryForBoundaryId"] == "u2:boundary"
    assert [(r.line, r.message_id) for r in result.report.repairs] == [(3, "u2:boundary")]


def test_hook_api_error_and_attachment_lines_are_runtime_facts_hidden_from_model_and_transcript() -> None:
    session = session_of(
        prompt("u1", None, "Go"),
        attachment("t1", "u1", {"type": "hook_success", "content": "hook said ok", "hookName": "SessionStart"}),
        system("h1", "t1", None, content="PreToolUse:Bash completed", toolUseID="toolu_9"),
        system("e1", "h1", "api_error", level="error", cause={"code": "ECONNRESET"}, retryAttempt=2, maxRetries=10),
        answer("a1", "e1", "msg_1", text("Done.")),
    )
    facts = [m for m in session.messages if m.role == "system"]
    assert [m.content for m in facts] == [
        "hook said ok",
        "PreToolUse:Bash completed",
        "API error (ECONNRESET), retry 2 of 10",
    ]
    assert facts[0].metadata["claudeCode"]["attachment"] == {"type": "hook_success", "hookName": "SessionStart"}
    assert facts[2].metadata["claudeCode"]["retryAttempt"] == 2
    messages = engine_messages(session)
    model = project(View.MODEL, messages, ProjectionContext())
    transcript = project(View.TRANSCRIPT, messages, ProjectionContext())
    assert [m.source_message_ids[0] for m in model.messages] == ["u1", "msg_1"]
    assert [m.source_message_ids[0] for m in transcript.messages] == ["u1", "msg_1"]


def test_attachments_claude_code_sends_to_the_model_are_the_user_messages_it_sends() -> None:
    queued = {"type": "queued_command", "prompt": "also add tests", "commandMode": "prompt"}
    french = {
        "type": "hook_additional_context",
        "content": ["Always answer in French."],
        "hookName": "UserPromptSubmit",
        "hookEvent": "UserPromptSubmit",
    }
    skills = {"type": "skill_listing", "content": "- pdf: read PDFs", "skillCount": 1}
    session = session_of(
        prompt("u1", None, "Add a forecast screen"),
        attachment("h1", "u1", french),
        attachment("s1", "h1", skills),
        answer("a1", "s1", "msg_1", text("Done.")),
        attachment("q1", "a1", queued),
        answer("a2", "q1", "msg_2", text("Tests added.")),
    )
    said = {m.id: m for m in session.messages}
    assert said["q1"].role == "user" and "visibleInTranscript" not in said["q1"].metadata
    assert said["q1"].content == (
        "<system-reminder>\nThe user sent the following message:\nalso add tests\n\n"
        "Please address this message and continue with your tasks.\n</system-reminder>"
    )
    assert said["h1"].content == (
        "<system-reminder>\nUserPromptSubmit hook additional context: Always answer in French.\n</system-reminder>"
    )
    assert str(said["s1"].content).startswith("<system-reminder>\nThe following skills are available")
    assert [said[i].metadata["visibleInTranscript"] for i in ("h1", "s1")] == [False, False]
    model = project(View.MODEL, engine_messages(session), ProjectionContext())
    sources = {source for message in model.messages for source in message.source_message_ids}
    assert {"h1", "s1", "q1"} <= sources
    transcript = project(View.TRANSCRIPT, engine_messages(session), ProjectionContext())
    shown = {source for message in transcript.messages for source in message.source_message_ids}
    assert "q1" in shown and not {"h1", "s1"} & shown


def test_a_synthetic_error_reply_stays_in_the_transcript_and_out_of_the_model() -> None:
    session = session_of(
        prompt("u1", None, "Go"),
        answer("a1", "u1", "uuid-like-id", text("API Error: offline"), model="<synthetic>", isApiErrorMessage=True),
    )
    reply = session.messages[1]
    assert reply.metadata["finishReason"] == "error" and reply.metadata["eligibleForModelContext"] is False
    assert "model" not in reply.metadata and session.model is None


def test_a_synthetic_reply_that_is_no_api_error_is_an_answer_the_model_sees() -> None:
    session = session_of(
        prompt("u1", None, "Continue from where you left off.", isMeta=True),
        answer("a1", "u1", "f0e1", text("No response requested."), model="<synthetic>", stop_reason="stop_sequence"),
        prompt("u2", "a1", "what's going on?", second=5),
    )
    reply = session.messages[1]
    assert "eligibleForModelContext" not in reply.metadata and "finishReason" not in reply.metadata
    assert "model" not in reply.metadata and session.model is None
    model_view = project(View.MODEL, engine_messages(session), ProjectionContext())
    assert "f0e1" in [source for message in model_view.messages for source in message.source_message_ids]


def test_local_command_output_is_a_user_message_as_claude_code_sends_it() -> None:
    session = session_of(
        prompt("u1", None, "<command-name>/model</command-name>"),
        system("l1", "u1", "local_command", content="<local-command-stdout>Set model to opus</local-command-stdout>"),
    )
    assert (session.messages[1].role, session.messages[1].content) == (
        "user",
        "<local-command-stdout>Set model to opus</local-command-stdout>",
    )


def test_meta_lines_reach_the_model_but_not_the_transcript() -> None:
    session = session_of(prompt("u1", None, "<system-reminder>context</system-reminder>", isMeta=True))
    assert session.messages[0].metadata["visibleInTranscript"] is False
    assert engine_messages(session)[0].kind is Kind.USER_INPUT


def test_sidechain_lines_are_skipped_with_a_reason() -> None:
    result = parse(jsonl(prompt("u1", None, "Go"), {**prompt("x1", None, "Warmup"), "isSidechain": True}))
    assert [m.id for m in result.sessions[0].messages] == ["u1"]
    assert [(s.line, s.reason) for s in result.report.skipped] == [(2, "sidechain: a subagent's own conversation")]


def test_the_conversation_ending_at_the_last_leaf_is_imported_and_the_branch_it_left_reported() -> None:
    result = parse(
        jsonl(
            prompt("u1", None, "Write tests"),
            answer("a1", "u1", "msg_1", text("Which framework?")),
            prompt("u2", "a1", "pytest", second=5),
            answer("a2", "u2", "msg_2", text("Writing pytest tests")),
            prompt("u3", "a1", "unittest, please", second=9),
            answer("a3", "u3", "msg_3", text("Writing unittest tests")),
        )
    )
    assert [m.id for m in result.sessions[0].messages] == ["u1", "msg_1", "u3", "msg_3"]
    [branch] = result.report.branches
    assert (branch.first_line, branch.lines, branch.message_ids) == (3, 2, ("u2", "msg_2"))


def test_parallel_results_and_hook_records_beside_the_path_are_not_branches() -> None:
    result = parse(
        jsonl(
            prompt("u1", None, "Read both"),
            answer("a1", "u1", "msg_1", tool_use("toolu_1", "Read")),
            answer("a2", "a1", "msg_1", tool_use("toolu_2", "Read")),
            attachment("h1", "a1", {"type": "hook_success", "content": "ok"}),
            results("r1", "a1", tool_result("toolu_1", "one")),
            results("r2", "a2", tool_result("toolu_2", "two")),
            answer("a3", "r2", "msg_2", text("Read.")),
        )
    )
    assert result.report.branches == []
    assert [m.id for m in result.sessions[0].messages] == ["u1", "msg_1", "h1", "r1", "r2", "msg_2"]


def test_an_earlier_conversation_in_the_same_file_comes_before_the_one_that_started_over() -> None:
    session = session_of(
        prompt("u1", None, "Plan the feature"),
        answer("a1", "u1", "msg_1", text("Here is a plan")),
        prompt("u2", None, "Implement the following plan: ...", second=30),
        answer("a2", "u2", "msg_2", text("Implementing")),
    )
    assert [m.id for m in session.messages] == ["u1", "msg_1", "u2", "msg_2"]


def test_lines_that_are_not_json_or_not_known_records_are_reported_and_strict_refuses_them() -> None:
    data = jsonl(prompt("u1", None, "Go")) + b"garbage\n" + jsonl({"type": "future-record"}, {"no": "type"})
    result = parse(data)
    assert [(s.line, s.reason.split(" (")[0]) for s in result.report.invalid] == [
        (2, "not JSON"),
        (3, "unknown record type 'future-record'"),
        (4, "not a Claude Code record"),
    ]
    assert [m.id for m in result.sessions[0].messages] == ["u1"]
    with pytest.raises(ImportRefused) as refused:
        parse(data, strict=True)
    assert refused.value.line == 2 and refused.value.detail.startswith("line 2: not JSON")


def test_a_line_nested_too_deep_to_read_is_reported_and_the_rest_imported() -> None:
    deep = {**prompt("u2", "u1", "x"), "x": "NESTING"}
    data = jsonl(prompt("u1", None, "Go"), deep, answer("a1", "u1", "msg_1", text("Done.")))
    data = data.replace(b'"NESTING"', b"[" * 5000 + b"]" * 5000)
    result = parse(data)
    assert [(s.line, s.reason) for s in result.report.invalid] == [
        (2, "not JSON a reader can follow (nested too deep)")
    ]
    assert [m.id for m in result.sessions[0].messages] == ["u1", "msg_1"]
    with pytest.raises(ImportRefused) as refused:
        parse(data, strict=True)
    assert refused.value.line == 2


def test_known_bookkeeping_records_are_skipped_not_invalid_and_strict_accepts_them() -> None:
    data = jsonl(
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        {"type": "queue-operation", "operation": "enqueue", "content": "next"},
        prompt("u1", None, "Go"),
        {**prompt("p1", "u1", "x"), "type": "progress", "data": {"type": "hook_progress"}},
    )
    result = parse(data, strict=True)
    assert [s.line for s in result.report.skipped] == [1, 2, 4] and result.report.invalid == []


def test_the_stop_hooks_json_array_reads_like_the_transcript_it_copies() -> None:
    records = [prompt("u1", None, "Go"), answer("a1", "u1", "msg_1", text("Done"))]
    as_array = parse(json.dumps(records, indent=2).encode()).sessions[0]
    assert as_array.messages == session_of(*records).messages


def test_a_repeated_line_is_skipped_once() -> None:
    result = parse(jsonl(prompt("u1", None, "Go"), prompt("u1", None, "Go")))
    assert len(result.sessions[0].messages) == 1
    assert result.report.skipped[0].reason == "repeats line 1 (same uuid)"


def test_the_title_is_the_ai_title_or_the_summary_of_this_conversations_leaf() -> None:
    own = {"type": "summary", "summary": "Tests written", "leafUuid": "a1"}
    other = {"type": "summary", "summary": "Another session", "leafUuid": "elsewhere"}
    lines = [prompt("u1", None, "Go"), answer("a1", "u1", "msg_1", text("Done"))]
    assert session_of(other, *lines).title is None
    assert session_of(other, own, *lines).title == "Tests written"
    assert session_of(own, *lines, {"type": "ai-title", "aiTitle": "Write the tests"}).title == "Write the tests"


def test_tool_references_are_kept_as_text_and_reported() -> None:
    result = parse(
        jsonl(
            prompt("u1", None, "Find a tool"),
            answer("a1", "u1", "msg_1", tool_use("toolu_1", "ToolSearch", query="fetch")),
            results("r1", "a1", tool_result("toolu_1", [{"type": "tool_reference", "tool_name": "WebFetch"}])),
        )
    )
    output = parts(result.sessions[0].messages[2])[0]["output"]
    assert output == {"type": "text", "value": "[tool reference: WebFetch]"}
    assert "tool_reference to 'WebFetch'" in result.report.repairs[0].detail


def test_an_answer_still_being_written_is_not_settled() -> None:
    lines = [prompt("u1", None, "Go"), answer("a1", "u1", "msg_1", text("Working"))]
    assert session_of(*lines).settled == 1
    assert session_of(*lines, system("s1", "a1", "stop_hook_summary")).settled == 3
    assert session_of(*lines, prompt("u2", "a1", "And?")).settled == 3


def test_a_runtime_facts_large_fields_are_left_out_and_reported() -> None:
    listing = {"type": "deferred_tools_delta", "addedNames": ["tool"] * 10_000}
    result = parse(jsonl(prompt("u1", None, "Go"), attachment("t1", "u1", listing)))
    fact = result.sessions[0].messages[1]
    assert fact.metadata["claudeCode"] == {"type": "attachment", "line": 2, "uuid": "t1"}
    assert "fields of the attachment line" in result.report.repairs[0].detail
