"""The transcript view: the whole process for a reader, minus what a reader should not see."""

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.transcript import project_transcript
from app.projections.types import ProjectionContext, View
from tests import builders as b
from tests.strategies import engine_histories

CTX = ProjectionContext()


def test_transcript_keeps_the_whole_process_with_boundaries_as_markers_and_full_results() -> None:
    history = b.engine(
        b.user("read it"),
        b.tool_call("c1", "Read", path="a.ts"),
        b.tool_result("c1", "full contents", compacted=True),
        b.boundary("b1"),
        b.summary("b1", "We read a.ts."),
        b.agent_switch("Switched to plan"),
        b.bash("ls", "a.ts"),
    )
    projection = project_transcript(history, CTX)
    assert [m.semantic_type for m in projection.messages] == [
        Kind.USER_INPUT,
        Kind.TOOL_CALL,
        Kind.TOOL_RESULT,
        Kind.COMPACT_BOUNDARY,
        Kind.COMPACT_SUMMARY,
        Kind.AGENT_SWITCH_NOTE,
        Kind.BASH_EXECUTION,
    ]
    result = projection.messages[2]
    assert result.content == history[2].content
    assert result.metadata.compacted
    assert projection.diagnostics.hidden_message_ids == []


def test_transcript_hides_invisible_synthetic_reminders_and_undisplayed_custom_messages() -> None:
    projection = project_transcript(
        b.engine(
            b.user("shown"),
            b.user("hidden", visibleInTranscript=False),
            b.user("Continue.", synthetic=True),
            b.reminder("psst"),
            b.custom("ext", display=False),
        ),
        CTX,
    )
    assert [m.source_message_ids for m in projection.messages] == [("m1",)]
    assert projection.diagnostics.hidden_message_ids == ["m2", "m3", "m4", "m5"]
    assert projection.diagnostics.reasons["m4"] == ["runtime reminder: for the model, not the reader"]


def test_transcript_messages_carry_position_and_stored_metadata() -> None:
    [message] = project_transcript(b.engine(b.bash("ls", "a.ts", exit_code=2), start_seq=7), CTX).messages
    assert message.view is View.TRANSCRIPT
    assert message.role == "user"
    assert message.metadata.extra["seq"] == 7
    assert message.metadata.extra["createdAt"] == "2026-04-08T10:00:07+00:00"
    assert message.metadata.extra["metadata"]["exitCode"] == 2


def test_transcript_notes_an_ignored_runtime_kind() -> None:
    [message] = project_transcript(b.engine(b.user("hi", runtimeKind="runtime_reminder")), CTX).messages
    assert message.semantic_type is Kind.USER_INPUT
    assert "needs role system" in message.metadata.notes[0]


@settings(max_examples=60)
@given(engine_histories(), st.integers(0, 40), st.integers(1, 40))
def test_any_page_projects_as_the_same_slice_of_the_whole(history: list[EngineMessage], start: int, size: int) -> None:
    page = history[start : start + size]
    page_ids = {m.id for m in page}
    whole = project_transcript(history, CTX)
    assert project_transcript(page, CTX).messages == [m for m in whole.messages if m.source_message_ids[0] in page_ids]
