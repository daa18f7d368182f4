"""``project`` answers every view for every kind."""

import pytest

from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from tests import builders as b

EVERY_KIND = b.engine(
    b.system("Workspace root is /repo"),
    b.user("hi"),
    b.reasoning("hmm", answer="hello"),
    b.reasoning("only thinking"),
    b.tool_calls(b.call_part("c1", "Read"), b.call_part("c2", "Bash")),
    b.approval_request("a1", "c2"),
    b.approval_response("a1"),
    b.tool_result("c1", "contents"),
    b.tool_result("c2", "", compacted=True),
    b.boundary("b1", through="m2"),
    b.summary("b1", "Earlier."),
    b.reminder("remember"),
    b.handoff("handed"),
    b.agent_switch("switch"),
    b.bash("ls", "a.ts"),
    b.custom("ext"),
    b.branch_summary("branch"),
)


@pytest.mark.parametrize("view", list(View))
def test_every_view_answers_for_every_kind(view: View) -> None:
    projection = project(view, EVERY_KIND, ProjectionContext())
    assert projection.view is view
    assert all(m.view is view for m in projection.messages)
    shown = {source for m in projection.messages for source in m.source_message_ids}
    every_id = {m.id for m in EVERY_KIND}
    if view is View.DEBUG:
        assert shown == every_id
    else:
        assert shown | set(projection.diagnostics.hidden_message_ids) == every_id


@pytest.mark.parametrize("view", list(View))
def test_every_view_answers_for_an_empty_history(view: View) -> None:
    projection = project(view, [], ProjectionContext())
    assert projection.messages == []
    assert projection.diagnostics.hidden_message_ids == []
