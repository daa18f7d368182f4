"""Properties of accounting, compaction and pruning over messy histories (the shared strategies)."""

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import accumulate
from typing import Any, cast

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.context.accounting import (
    ContextReport,
    account_context,
    sent_messages,
    stale_through,
    tally,
    usage_tokens,
)
from app.context.compaction import build_compaction, select_compaction
from app.context.config import PrunePolicy, TailPolicy, ThresholdPolicy
from app.context.errors import CompactionRefused
from app.context.pruning import plan_prune
from app.context.window import ContextWindow
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.model_ref import target_ref
from app.engine.tokens import PADDING_BY_FAMILY, estimate_tokens
from app.projections.live_history import COMPACTION_KINDS, applied_compaction, live_history
from app.projections.model import project_model
from app.projections.types import ProjectionContext
from tests.context.histories import MODEL, assistant, boundary, message, summary, usage, user
from tests.context.histories import history as numbered
from tests.strategies import PROVIDER_MODELS, engine_histories

SETTINGS = settings(max_examples=100)


def estimated(messages: list[EngineMessage]) -> list[EngineMessage]:
    return [replace(m, token_estimate=estimate_tokens(m.content)) for m in messages]


histories = engine_histories(max_steps=16).map(estimated)
budgets = st.integers(0, 400)
turn_limits = st.sampled_from([None, 1, 2])


def splits_a_pair(summarized: Sequence[EngineMessage], tail: Sequence[EngineMessage]) -> bool:
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


def running_calls(history: Sequence[EngineMessage]) -> set[int]:
    """Where the calls still waiting for their tool are: the newest call of its id, no result after it and no
    user message since."""
    waiting: dict[object, int] = {}
    for index, m in enumerate(history):
        if m.kind is Kind.USER_INPUT:
            waiting.clear()
        for part in m.content if isinstance(m.content, list) else []:
            if part.get("type") == "tool-call":
                waiting[part.get("toolCallId")] = index
            elif part.get("type") == "tool-result":
                waiting.pop(part.get("toolCallId"), None)
    return set(waiting.values())


@SETTINGS
@given(histories, budgets, turn_limits)
def test_kept_tail_never_splits_a_tool_call_from_its_result(
    messages: list[EngineMessage], budget: int, turns: int | None
) -> None:
    try:
        selection = select_compaction(messages, policy=TailPolicy(max_tokens=budget, max_user_turns=turns))
    except CompactionRefused as refused:
        assert refused.reason == "nothing_to_compact"
        live = [m for m in live_history(messages).messages if m.kind is not Kind.COMPACT_SUMMARY]
        # Only a call still running makes the end (an empty tail) no cut: its result is yet to come.
        assert live == [] or running_calls(live)
        return
    assert selection.to_summarize
    assert not selection.kept_tail or selection.kept_tail[0].role != "tool"
    assert not splits_a_pair(selection.to_summarize, selection.kept_tail)
    body = [*selection.to_summarize, *selection.kept_tail]
    assert all(index >= len(selection.to_summarize) for index in running_calls(body))


@SETTINGS
@given(histories, budgets)
def test_after_writing_a_compaction_the_live_history_is_its_summary_and_exactly_the_kept_tail(
    messages: list[EngineMessage], budget: int
) -> None:
    try:
        selection = select_compaction(messages, policy=TailPolicy(max_tokens=budget))
    except CompactionRefused:
        return
    plan = build_compaction(selection, "## Goal\nkeep going", boundary_id="new-b", summary_id="new-s")
    start = max(m.seq for m in messages) + 1
    appended = numbered(*(message(m.role, m.content, id=m.id, **m.metadata) for m in plan.messages), start_seq=start)
    after = [*messages, *appended]
    live = live_history(after)
    assert [m.id for m in live.messages] == ["new-s", *(m.id for m in selection.kept_tail)]
    projection = project_model(after, ProjectionContext())
    assert projection.messages[0].source_message_ids == ("new-s",)
    assert projection.diagnostics.applied_compact_boundary_id == "new-b"


@SETTINGS
@given(histories, st.integers(1, 5_000), st.sampled_from([None, 0, 500, 4_000]))
def test_accounting_is_consistent(messages: list[EngineMessage], window_tokens: int, max_output: int | None) -> None:
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
def test_pruning_only_marks_old_unprotected_results_and_only_when_worth_it(
    messages: list[EngineMessage], protect: int, minimum: int
) -> None:
    policy = PrunePolicy(
        protect_tool_tokens=protect, minimum_savings_tokens=minimum, protected_tool_names=frozenset({"Bash"})
    )
    plan = plan_prune(messages, policy)
    by_id = {m.id: m for m in messages}
    live = live_history(messages).messages
    users = [i for i, m in enumerate(live) if m.kind is Kind.USER_INPUT and m.metadata.get("synthetic") is not True]
    protected_from = users[-2] if len(users) >= 2 else 0
    protected_ids = {m.id for m in live[protected_from:]} if len(users) >= 2 else {m.id for m in live}
    for id_ in plan.message_ids:
        pruned = by_id[id_]
        assert pruned.kind is Kind.TOOL_RESULT
        assert not pruned.metadata.get("compactedAt")
        assert id_ not in protected_ids
        parts = cast(list[dict[str, Any]], pruned.content)  # the histories write every tool result as parts
        assert all(p.get("toolName") != "Bash" for p in parts if p.get("type") == "tool-result")
    assert plan.tokens_saved == 0 if not plan.message_ids else plan.tokens_saved >= minimum


# The accounting against the model view, and the fast live history against the way it was first written -------

SECTION_OF = {
    Kind.SYSTEM_NOTE: "system",
    Kind.RUNTIME_REMINDER: "system",
    Kind.AGENT_SWITCH_NOTE: "system",
    Kind.MODEL_SWITCH_NOTE: "system",
    Kind.COMPACT_BOUNDARY: "system",
    Kind.COMPACT_SUMMARY: "summary",
    Kind.HANDOFF_SUMMARY: "summary",
    Kind.BRANCH_SUMMARY: "summary",
    Kind.TOOL_RESULT: "toolResults",
    Kind.TOOL_APPROVAL_RESPONSE: "toolResults",
}
"""Every other kind counts in ``messages``."""

_ONE_IN_THREE = st.integers(0, 2)
usages = st.one_of(
    st.builds(lambda total: {"totalTokens": total}, st.integers(0, 5_000)),
    st.builds(lambda i, o: {"inputTokens": i, "outputTokens": o}, st.integers(0, 3_000), st.integers(0, 300)),
    st.just({}),
)


@st.composite
def given_histories(draw: st.DrawFn) -> list[EngineMessage]:
    """Histories whose assistant messages may carry usage, with some messages sharing a seq, some given twice
    and the whole maybe shuffled: inputs the fast paths must treat exactly like the general ones."""
    messages = [
        replace(m, metadata={**m.metadata, "usage": draw(usages)})
        if m.role == "assistant" and draw(st.integers(0, 3))
        else m
        for m in draw(histories)
    ]
    if draw(st.booleans()):
        # Twins, other messages with the same seq: no store numbers so, but ties must still break the way a
        # stable sort breaks them.
        messages = [
            given
            for m in messages
            for given in (
                (m, replace(m, id=f"{m.id}-twin", metadata={**m.metadata, "usage": draw(usages)}))
                if draw(_ONE_IN_THREE) == 0
                else (m,)
            )
        ]
    # Not ``messages and draw(...)``: mypy takes the left operand as the context of the right, and infers
    # draw's result as a list of messages.
    if len(messages) > 0 and draw(st.booleans()):
        twice = draw(st.sets(st.integers(0, len(messages) - 1), max_size=3))
        messages = [given for i, m in enumerate(messages) for given in ((m, m) if i in twice else (m,))]
    if draw(st.booleans()):
        messages = draw(st.permutations(messages))
    return messages


contexts = st.builds(
    ProjectionContext,
    model=st.one_of(st.none(), st.sampled_from([model for _, model in PROVIDER_MODELS])),
    provider=st.sampled_from([None, "anthropic", "openai"]),
    include_reasoning=st.booleans(),
    reasoning_fallback=st.sampled_from(["drop", "text"]),
    include_tool_results=st.booleans(),
    tool_result_soft_limit_chars=st.sampled_from([0, 40, 200, 50_000]),
    inject_runtime_reminder=st.booleans(),
)


def reference_live_history(messages: list[EngineMessage]) -> list[EngineMessage]:
    unique: dict[str, EngineMessage] = {}
    for m in messages:
        unique.setdefault(m.id, m)
    ordered = sorted(unique.values(), key=lambda m: m.seq)
    applied = applied_compaction(ordered)
    if applied is None:
        return [m for m in ordered if m.kind not in COMPACTION_KINDS]
    kept = [m for m in ordered if m.seq >= applied.tail_start_seq and m.kind not in COMPACTION_KINDS]
    return [applied.compaction.summary, *kept]


def counted(report: ContextReport) -> dict[str, Any]:
    shown = report.as_dict()
    return {key: shown[key] for key in ("sections", "usage", "tokensAfterUsage", "totalTokens")}


def reference_report(messages: list[EngineMessage], ctx: ProjectionContext, request_tokens: int) -> dict[str, Any]:
    """The view's messages costed one by one, the anchor found by sorting all messages newest first; what is
    estimated is padded for the target's tokenizer."""
    target = target_ref(ctx.provider, ctx.model)
    padding = PADDING_BY_FAMILY.get(target.family or "", 1.0) if target is not None else 1.0

    def padded(estimate: int) -> int:
        return math.ceil(estimate * padding)

    view = project_model(messages, ctx)
    sent = sent_messages(view, messages)
    sections = {"system": max(request_tokens, 0), "summary": 0, "messages": 0, "toolResults": 0, "reasoning": 0}
    for each in sent:
        sections[SECTION_OF.get(each.message.kind, "messages")] += each.tokens
        sections["reasoning"] += each.reasoning
    sections = {name: padded(tokens) for name, tokens in sections.items()}
    applied = view.diagnostics.applied_compact_boundary_id
    stale = next((m.seq for m in messages if m.id == applied), None)
    for m in sorted(messages, key=lambda m: m.seq, reverse=True):
        tokens = usage_tokens(m, ctx.model, {}) if stale is None or m.seq > stale else None
        if tokens is not None:
            after = padded(sum(later.total for later in sent if later.message.seq > m.seq))
            anchor = {"messageId": m.id, "tokens": tokens}
            return {"sections": sections, "usage": anchor, "tokensAfterUsage": after, "totalTokens": tokens + after}
    total = sum(sections.values())
    return {"sections": sections, "usage": None, "tokensAfterUsage": total, "totalTokens": total}


@SETTINGS
@given(given_histories(), contexts)
def test_the_accounting_counts_exactly_what_the_model_view_sends(
    messages: list[EngineMessage], ctx: ProjectionContext
) -> None:
    """Sent means in the view's output, and a message costs the estimate of what the view sends for it (the
    histories here store ``estimate_tokens`` of their content, as the store does)."""
    view = project_model(messages, ctx)
    sent = sent_messages(view, messages)
    assert [each.message.id for each in sent] == [id_ for m in view.messages for id_ in m.source_message_ids]
    assert {each.message.id for each in sent}.isdisjoint(view.diagnostics.hidden_message_ids)
    for each, projected in zip(sent, view.messages, strict=True):
        assert each.total == estimate_tokens(projected.content)
        assert each.reasoning == estimate_tokens(list(projected.reasoning))
        assert all(any(part is given for given in projected.content) for part in projected.reasoning)


@SETTINGS
@given(given_histories())
def test_live_history_is_the_deduplicated_history_by_seq_whatever_order_it_comes_in(
    messages: list[EngineMessage],
) -> None:
    assert list(live_history(messages).messages) == reference_live_history(messages)


@SETTINGS
@given(given_histories(), contexts, st.integers(-5, 300))
def test_accounting_sums_the_sent_messages_by_section_from_the_newest_usage_that_counts(
    messages: list[EngineMessage], ctx: ProjectionContext, request_tokens: int
) -> None:
    report = account_context(
        messages,
        window=ContextWindow(None, "none"),
        policy=ThresholdPolicy(),
        ctx=ctx,
        request_tokens=request_tokens,
    )
    assert counted(report) == reference_report(messages, ctx, request_tokens)


@st.composite
def answered_histories(draw: st.DrawFn) -> list[EngineMessage]:
    """Users and answers whose usage counts or not, with seq ties, maybe compacted with a kept tail (the summary
    then heads a live history older than itself): where the usage anchor and the tokens after it are decided."""
    built = [
        user("next", tokens=draw(st.integers(0, 50)))
        if draw(_ONE_IN_THREE) == 0
        else assistant(
            "ok",
            tokens=draw(st.integers(0, 50)),
            usage=usage(draw(st.integers(11, 900))),
            finish=draw(st.sampled_from(["stop", "error"])),
        )
        for _ in range(draw(st.integers(1, 10)))
    ]
    if draw(st.booleans()):
        at = draw(st.integers(0, len(built)))
        through = f"m{draw(st.integers(1, at))}" if at and draw(st.booleans()) else None
        built[at:at] = [boundary("b1", through=through), summary("b1", id="s1", tokens=draw(st.integers(0, 50)))]
    messages = numbered(*built)
    steps = draw(st.lists(st.integers(0, 2), min_size=len(messages) - 1, max_size=len(messages) - 1))
    return [replace(m, seq=seq) for m, seq in zip(messages, accumulate(steps, initial=1), strict=True)]


@SETTINGS
@given(answered_histories(), st.integers(0, 300))
def test_the_anchor_is_the_newest_usage_that_counts_and_of_equal_seqs_the_first_given(
    messages: list[EngineMessage], request_tokens: int
) -> None:
    ctx = ProjectionContext(model=MODEL)
    report = account_context(
        messages, window=ContextWindow(None, "none"), policy=ThresholdPolicy(), ctx=ctx, request_tokens=request_tokens
    )
    assert counted(report) == reference_report(messages, ctx, request_tokens)


@SETTINGS
@given(given_histories(), contexts, st.data())
def test_a_windows_tally_is_the_tallies_of_its_runs_joined(
    messages: list[EngineMessage], ctx: ProjectionContext, data: st.DataObject
) -> None:
    """A later turn keeps the tally before its cut and counts only the rest: in a window in seq order (as the
    store reads one: seqs strictly increasing, the session's primary key), where the view's messages split with
    it (everything sent from before the cut comes first), the two tallies joined are the whole. The histories'
    twins, which share a seq to pin the anchor's tie-break, are no such window: a cut between two messages of
    one seq would count the second after an anchor on the first, which the whole window does not."""
    view = project_model(messages, ctx)
    stale = stale_through(messages, view.diagnostics.applied_compact_boundary_id)
    index = {message.id: n for n, message in enumerate(messages)}
    cut = data.draw(st.integers(0, len(messages)))
    sent_cut = sum(1 for projected in view.messages if index[projected.source_message_ids[0]] < cut)
    regions = [index[projected.source_message_ids[0]] < cut for projected in view.messages]
    seqs = [message.seq for message in messages]
    assume(regions == sorted(regions, reverse=True) and len(set(index)) == len(messages) and seqs == sorted(set(seqs)))
    whole = tally(messages, view.messages, ctx, stale)
    joined = tally(messages[:cut], view.messages[:sent_cut], ctx, stale) + tally(
        messages[cut:], view.messages[sent_cut:], ctx, stale
    )
    assert joined == whole
