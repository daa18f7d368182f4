"""Properties of accounting, compaction and pruning over messy histories (the shared strategies)."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from app.context.accounting import account_context
from app.context.compaction import build_compaction, select_compaction
from app.context.config import PrunePolicy, TailPolicy, ThresholdPolicy
from app.context.errors import CompactionRefused
from app.context.history_window import history_window
from app.context.pruning import plan_prune
from app.context.window import ContextWindow
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.tokens import estimate_tokens
from app.projections.model import project_model
from app.projections.types import ProjectionContext
from tests.context.histories import history as numbered
from tests.context.histories import message
from tests.strategies import engine_histories

SETTINGS = settings(max_examples=100, deadline=None)


def estimated(messages: list[EngineMessage]) -> list[EngineMessage]:
    return [replace(m, token_estimate=estimate_tokens(m.content)) for m in messages]


histories = engine_histories(max_steps=16).map(estimated)
budgets = st.integers(0, 400)
turn_limits = st.sampled_from([None, 1, 2])


def splits_a_pair(summarized, tail) -> bool:
    """Whether a result in the tail answers a call in the summarised part (the newest call of its id)."""
    history, cut = [*summarized, *tail], len(summarized)
    newest_call: dict[str, int] = {}
    for index, m in enumerate(history):
        for part in m.content if isinstance(m.content, list) else []:
            call_id = part.get("toolCallId")
            if call_id is None:
                continue
            if part.get("type") == "tool-call":
                newest_call[call_id] = index
            elif call_id in newest_call and newest_call[call_id] < cut <= index:
                return True
    return False


@SETTINGS
@given(histories, budgets, turn_limits)
def test_kept_tail_never_splits_a_tool_call_from_its_result(messages, budget, turns):
    try:
        selection = select_compaction(messages, policy=TailPolicy(max_tokens=budget, max_user_turns=turns))
    except CompactionRefused as refused:
        assert refused.reason == "nothing_to_compact"
        assert [m for m in history_window(messages).messages if m.kind is not Kind.COMPACT_SUMMARY] == []
        return
    assert selection.to_summarize
    assert not selection.kept_tail or selection.kept_tail[0].role != "tool"
    assert not splits_a_pair(selection.to_summarize, selection.kept_tail)


@SETTINGS
@given(histories, budgets)
def test_after_writing_a_compaction_the_window_is_its_summary_and_exactly_the_kept_tail(messages, budget):
    try:
        selection = select_compaction(messages, policy=TailPolicy(max_tokens=budget))
    except CompactionRefused:
        return
    plan = build_compaction(selection, "## Goal\nkeep going", boundary_id="new-b", summary_id="new-s")
    start = max(m.seq for m in messages) + 1
    appended = numbered(*(message(m.role, m.content, id=m.id, **m.metadata) for m in plan.messages), start_seq=start)
    after = [*messages, *appended]
    window = history_window(after)
    assert [m.id for m in window.messages] == ["new-s", *(m.id for m in selection.kept_tail)]
    projection = project_model(after, ProjectionContext())
    assert projection.messages[0].source_message_ids == ("new-s",)
    assert projection.diagnostics.applied_compact_boundary_id == "new-b"


@SETTINGS
@given(histories, st.integers(1, 5_000), st.sampled_from([None, 0, 500, 4_000]))
def test_accounting_is_consistent(messages, window_tokens, max_output):
    report = account_context(
        messages,
        window=ContextWindow(window_tokens, "session"),
        policy=ThresholdPolicy(),
        ctx=ProjectionContext(provider="anthropic", model="claude-sonnet-4-5"),
        max_output_tokens=max_output,
    )
    assert min(report.sections.as_dict().values()) >= 0
    assert report.total_tokens >= 0
    assert report.threshold_tokens is not None and 0 <= report.threshold_tokens <= window_tokens
    assert report.compaction_due == (report.total_tokens >= report.threshold_tokens)
    if report.usage is None:
        assert report.total_tokens == report.estimated_tokens


@SETTINGS
@given(histories, st.integers(0, 200), st.integers(0, 200))
def test_pruning_only_marks_old_unprotected_results_and_only_when_worth_it(messages, protect, minimum):
    policy = PrunePolicy(
        protect_tool_tokens=protect, minimum_savings_tokens=minimum, protected_tool_names=frozenset({"Bash"})
    )
    plan = plan_prune(messages, policy)
    by_id = {m.id: m for m in messages}
    window = history_window(messages).messages
    users = [i for i, m in enumerate(window) if m.kind is Kind.USER_INPUT and m.metadata.get("synthetic") is not True]
    protected_from = users[-2] if len(users) >= 2 else 0
    protected_ids = {m.id for m in window[protected_from:]} if len(users) >= 2 else {m.id for m in window}
    for id_ in plan.message_ids:
        pruned = by_id[id_]
        assert pruned.kind is Kind.TOOL_RESULT
        assert not pruned.metadata.get("compactedAt")
        assert id_ not in protected_ids
        assert all(p.get("toolName") != "Bash" for p in pruned.content if p.get("type") == "tool-result")
    assert plan.tokens_saved == 0 if not plan.message_ids else plan.tokens_saved >= minimum
