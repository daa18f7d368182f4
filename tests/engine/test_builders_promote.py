"""The test builders produce the kinds they are named after, so tests that use them say what they mean."""

from hypothesis import given, settings

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from tests import builders as b
from tests.strategies import engine_histories


def test_each_builder_promotes_to_its_kind() -> None:
    cases: list[tuple[PersistedMessage, Kind]] = [
        (b.system("Workspace root is /repo"), Kind.SYSTEM_NOTE),
        (b.user("hi"), Kind.USER_INPUT),
        (b.assistant("done"), Kind.ASSISTANT_TEXT),
        (b.reasoning("hmm"), Kind.ASSISTANT_REASONING),
        (b.reasoning("hmm", answer="done"), Kind.ASSISTANT_TEXT),
        (b.tool_call("c1", "Read", path="a.ts"), Kind.TOOL_CALL),
        (b.tool_result("c1", "text", compacted=True), Kind.TOOL_RESULT),
        (b.approval_request("a1", "c1"), Kind.TOOL_APPROVAL_REQUEST),
        (b.approval_response("a1"), Kind.TOOL_APPROVAL_RESPONSE),
        (b.boundary("b1", through="m3"), Kind.COMPACT_BOUNDARY),
        (b.summary("b1", "earlier"), Kind.COMPACT_SUMMARY),
        (b.reminder("remember"), Kind.RUNTIME_REMINDER),
        (b.handoff("handed off"), Kind.HANDOFF_SUMMARY),
        (b.agent_switch("now plan"), Kind.AGENT_SWITCH_NOTE),
        (b.model_switch("now gpt-5"), Kind.MODEL_SWITCH_NOTE),
        (b.bash("ls", "a.ts"), Kind.BASH_EXECUTION),
        (b.custom("hello"), Kind.CUSTOM),
        (b.branch_summary("tried x"), Kind.BRANCH_SUMMARY),
    ]
    assert {kind for _, kind in cases} == set(Kind)
    for stored, kind in cases:
        promoted = promote(stored)
        assert promoted.kind is kind
        assert promoted.promotion_note is None


def test_history_numbers_messages_as_the_store_does() -> None:
    messages = b.history(b.user("hi"), b.boundary("b1"), b.assistant("ok"), start_seq=5)
    assert [(m.seq, m.id) for m in messages] == [(5, "m5"), (6, "b1"), (7, "m7")]
    assert messages[0].created_at < messages[2].created_at


@settings(max_examples=50)
@given(engine_histories())
def test_strategy_histories_are_numbered_gap_free_with_unique_ids(history: list[EngineMessage]) -> None:
    assert [m.seq for m in history] == list(range(1, len(history) + 1))
    assert len({m.id for m in history}) == len(history)
    assert all(m.promotion_note is None for m in history)
