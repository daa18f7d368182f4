"""A worked example (m1..m5): a login bug read in a file whose result was pruned, projected to the model view
message by message."""

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from tests import builders as b

ANSWER = "我先定位问题，再修改登录逻辑。"  # noqa: RUF001 (the fullwidth comma is part of the text)
READ_CALL = {"type": "tool-call", "toolCallId": "call_1", "toolName": "Read", "input": {"file_path": "src/auth.ts"}}


def worked_history() -> list[EngineMessage]:
    return b.engine(
        b.system("Workspace root is /repo", id="m1"),
        b.user("帮我看看 src/auth.ts ...", id="m2"),
        b.message("assistant", [READ_CALL], id="m3"),
        b.message(
            "tool",
            [{"type": "tool-result", "toolCallId": "call_1", "output": {"type": "text", "value": "...长文件..."}}],
            id="m4",
            compactedAt="2026-04-08T10:00:00Z",
        ),
        b.assistant(ANSWER, id="m5"),
    )


def test_worked_example_projects_to_its_model_messages() -> None:
    projection = project(View.MODEL, worked_history(), ProjectionContext())

    listing = [
        (m.view, m.role, m.semantic_type, m.source_message_ids, m.content, m.metadata.compacted)
        for m in projection.messages
    ]
    assert listing == [
        (View.MODEL, "system", Kind.SYSTEM_NOTE, ("m1",), "Workspace root is /repo", False),
        (View.MODEL, "user", Kind.USER_INPUT, ("m2",), "帮我看看 src/auth.ts ...", False),
        (View.MODEL, "assistant", Kind.TOOL_CALL, ("m3",), [READ_CALL], False),
        (
            View.MODEL,
            "tool",
            Kind.TOOL_RESULT,
            ("m4",),
            [
                {
                    "type": "tool-result",
                    "toolCallId": "call_1",
                    "output": {"type": "text", "value": "[Old tool result content cleared]"},
                }
            ],
            True,
        ),
        (View.MODEL, "assistant", Kind.ASSISTANT_TEXT, ("m5",), ANSWER, False),
    ]


def test_worked_example_diagnostics_account_for_the_stub() -> None:
    projection = project(View.MODEL, worked_history(), ProjectionContext())

    assert projection.diagnostics.hidden_message_ids == []
    assert projection.diagnostics.truncated_message_ids == ["m4"]
    assert projection.diagnostics.applied_compact_boundary_id is None
    assert projection.diagnostics.repairs == []
    assert projection.messages[3].metadata.notes == ("tool result compacted for model context",)
    assert all(not m.metadata.truncated for i, m in enumerate(projection.messages) if i != 3)
