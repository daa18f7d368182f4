import json
from typing import Any

import pytest

from app.importers.imported import ImportedSession, ImportRefused, ImportResult
from app.importers.registry import parse_import
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from tests.importers.checks import engine_messages, parts
from tests.importers.samples import pi as pi_sample

HEADER = {"type": "session", "version": 3, "id": "pi-session", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/w"}
V1_HEADER = {"type": "session", "id": "pi-v1", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/w"}


def lines(*records: dict[str, Any]) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def parse(data: bytes, **options: Any) -> ImportResult:
    return parse_import("pi", data, **options)


def message(key: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": key,
        "parentId": parent,
        "timestamp": "2026-03-02T09:00:01.000Z",
        "message": fields,
    }


def v1(**fields: Any) -> dict[str, Any]:
    return {"type": "message", "timestamp": "2026-03-02T09:00:01.000Z", "message": fields}


def assistant(*content: dict[str, Any], **fields: Any) -> dict[str, Any]:
    base = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-5", "stopReason": "stop"}
    return {"role": "assistant", "content": list(content), **base, **fields}


def session(data: bytes) -> ImportedSession:
    return parse(data).sessions[0]


def test_the_sample_imports_its_path_and_reports_the_branch_it_left() -> None:
    result = parse(pi_sample())
    [branch] = result.report.branches
    assert branch.message_ids == ("b0000001", "b0000002")
    [imported] = result.sessions
    assert (imported.id, imported.title, imported.model) == ("9f0c2a7e-pi", "Failing tests", "openai/gpt-5")
    assert "b0000001" not in {m.id for m in imported.messages}
    assert [(s.line, s.reason.split(":")[0]) for s in result.report.skipped] == [(18, "label")]


def test_a_compaction_is_a_boundary_naming_the_message_before_the_first_kept_entry_and_its_summary() -> None:
    messages = {m.id: m for m in session(pi_sample()).messages}
    boundary, summary = messages["c0000008"], messages["c0000008:summary"]
    assert boundary.metadata["runtimeKind"] == "compact_boundary"
    assert boundary.metadata["compactThroughMessageId"] == "c0000005"
    assert (summary.content, summary.metadata["summaryForBoundaryId"]) == ("Fixed both tests.", "c0000008")
    model = project(View.MODEL, engine_messages(session(pi_sample())), ProjectionContext())
    kept = [m.source_message_ids[0] for m in model.messages]
    assert kept[:3] == ["c0000008:summary", "c0000006", "c0000007"]


def test_runtime_entries_become_their_kinds() -> None:
    messages = {m.id: m for m in session(pi_sample()).messages}
    bash = messages["c0000003"]
    assert (bash.role, bash.content, bash.metadata["runtimeKind"], bash.metadata["exitCode"]) == (
        "user",
        "git status",
        "bash_execution",
        0,
    )
    custom = messages["c0000004"].metadata
    assert (custom["runtimeKind"], custom["customType"], custom["display"]) == ("custom", "todo", True)
    assert messages["c0000001"].metadata["runtimeKind"] == "branch_summary"
    assert messages["c0000002"].metadata["runtimeKind"] == "model_switch_note"
    state = messages["c0000005"].metadata
    assert state["eligibleForModelContext"] is False and state["pi"]["data"] == {"open": 1}


def test_tool_results_keep_images_errors_and_details() -> None:
    data = lines(
        HEADER,
        message("a1", None, role="user", content="Screenshot it"),
        message("a2", "a1", **assistant({"type": "toolCall", "id": "t1", "name": "shot", "arguments": {}})),
        message(
            "a3",
            "a2",
            role="toolResult",
            toolCallId="t1",
            toolName="shot",
            isError=False,
            content=[{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
            details={"path": "/tmp/s.png"},
        ),
        message("a4", "a3", **assistant({"type": "toolCall", "id": "t2", "name": "bash", "arguments": {}})),
        message(
            "a5",
            "a4",
            role="toolResult",
            toolCallId="t2",
            toolName="bash",
            isError=True,
            content=[{"type": "text", "text": "exit 1"}],
        ),
    )
    messages = {m.id: m for m in session(data).messages}
    assert parts(messages["a3"])[0]["output"] == {
        "type": "content",
        "value": [{"type": "image-data", "data": "AAAA", "mediaType": "image/png"}],
    }
    assert messages["a3"].metadata["pi"]["details"] == {"path": "/tmp/s.png"}
    assert parts(messages["a5"])[0]["output"] == {"type": "error-text", "value": "exit 1"}


def test_usage_stop_reason_and_error_go_into_the_answers_metadata() -> None:
    usage = {"input": 5, "output": 7, "cacheRead": 100, "cacheWrite": 9, "totalTokens": 121, "cost": {"total": 0.5}}
    data = lines(
        HEADER,
        message("a1", None, role="user", content="Go"),
        message("a2", "a1", **assistant(usage=usage, stopReason="aborted", errorMessage="Request was aborted")),
    )
    metadata = session(data).messages[1].metadata
    assert metadata["usage"] == {
        "inputTokens": 5,
        "outputTokens": 7,
        "cacheReadTokens": 100,
        "cacheWriteTokens": 9,
        "totalTokens": 121,
    }
    assert (metadata["finishReason"], metadata["errorMessage"], metadata["pi"]["cost"]) == (
        "aborted",
        "Request was aborted",
        0.5,
    )


@pytest.mark.parametrize(
    ("api", "provider", "signature", "options"),
    [
        ("anthropic-messages", "anthropic", "sig", {"anthropic": {"signature": "sig"}}),
        (
            "openai-responses",
            "openai",
            json.dumps({"type": "reasoning", "id": "rs_1", "encrypted_content": "enc", "summary": []}),
            {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc"}},
        ),
        ("google-generative-ai", "google", "tsig", {"google": {"thoughtSignature": "tsig"}}),
    ],
)
def test_a_thinking_signature_goes_where_its_provider_replays_it(
    api: str, provider: str, signature: str, options: dict[str, Any]
) -> None:
    thought = {"type": "thinking", "thinking": "hm", "thinkingSignature": signature}
    data = lines(HEADER, message("a1", None, **assistant(thought, text_block(), api=api, provider=provider)))
    assert parts(session(data).messages[0])[0] == {"type": "reasoning", "text": "hm", "providerOptions": options}


def text_block() -> dict[str, Any]:
    return {"type": "text", "text": "ok"}


def test_version_1_entries_are_numbered_by_position_and_a_line_holding_two_objects_gives_both() -> None:
    data = lines(
        V1_HEADER, v1(role="user", content="One"), v1(**assistant(text_block())), v1(role="user", content="Two")
    )
    compaction = {
        "type": "compaction",
        "timestamp": "t",
        "summary": "Earlier.",
        "firstKeptEntryIndex": 3,
        "tokensBefore": 1,
    }
    data += (json.dumps(v1(**assistant(text_block()))) + json.dumps(compaction) + "\n").encode()
    messages = session(data).messages
    assert [m.id for m in messages] == ["e1", "e2", "e3", "e4", "e5", "e5:summary"]
    assert messages[4].metadata["compactThroughMessageId"] == "e2"
    assert messages[3].metadata["pi"]["line"] == messages[4].metadata["pi"]["line"] == 5


def test_a_file_without_its_header_is_refused_unless_the_session_is_named() -> None:
    body = lines(message("a1", None, role="user", content="Go"))
    with pytest.raises(ImportRefused) as refused:
        parse(body)
    assert refused.value.line == 1
    assert [m.id for m in parse(body, session_id="named").sessions[0].messages] == ["a1"]


def test_unknown_entries_and_roles_are_reported_and_strict_refuses_them() -> None:
    data = lines(HEADER, {"type": "teleport", "id": "x1", "parentId": None}, message("a1", None, role="robot"))
    result = parse(data)
    assert [(s.line, s.reason) for s in result.report.invalid] == [
        (2, "unknown entry type 'teleport'"),
        (3, "message of unknown role 'robot'"),
    ]
    with pytest.raises(ImportRefused) as refused:
        parse(data, strict=True)
    assert refused.value.line == 2


def test_a_compaction_whose_first_kept_entry_is_off_the_path_keeps_nothing_and_says_so() -> None:
    compaction = {"type": "compaction", "id": "c1", "parentId": "a2", "timestamp": "t", "summary": "S."}
    data = lines(
        HEADER,
        message("a1", None, role="user", content="Go"),
        message("a2", "a1", **assistant(text_block())),
        {**compaction, "firstKeptEntryId": "gone", "tokensBefore": 5},
    )
    result = parse(data)
    boundary = result.sessions[0].messages[2]
    assert boundary.metadata["compactThroughMessageId"] == "a2"
    assert [(r.line, r.message_id) for r in result.report.repairs] == [(4, "c1")]
