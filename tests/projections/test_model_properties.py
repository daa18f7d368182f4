"""Properties of the model view over random histories (tests/strategies.py)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.live_history import live_history_start_seq, newest_complete_compaction
from app.projections.model import project_model
from app.projections.types import ProjectionContext
from tests.projections.invariants import assert_calls_next_to_results
from tests.strategies import contexts, engine_histories

FAST = settings(max_examples=80)


@FAST
@given(engine_histories(), contexts())
def test_model_view_never_holds_a_boundary(history: list[EngineMessage], ctx: ProjectionContext) -> None:
    boundaries = {m.id for m in history if m.kind is Kind.COMPACT_BOUNDARY}
    for message in project_model(history, ctx).messages:
        assert message.semantic_type is not Kind.COMPACT_BOUNDARY
        assert not boundaries.intersection(message.source_message_ids)


@FAST
@given(engine_histories(), contexts())
def test_model_view_never_separates_a_call_from_its_result(
    history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    assert_calls_next_to_results(project_model(history, ctx).messages)


@FAST
@given(engine_histories(), contexts())
def test_every_message_is_sent_or_accounted_for_as_hidden(history: list[EngineMessage], ctx: ProjectionContext) -> None:
    projection = project_model(history, ctx)
    sent = [source for m in projection.messages for source in m.source_message_ids]
    hidden = projection.diagnostics.hidden_message_ids
    assert len(sent) == len(set(sent))
    assert len(hidden) == len(set(hidden))
    assert set(sent).isdisjoint(hidden)
    assert set(sent) | set(hidden) == {m.id for m in history}
    for message_id in hidden:
        assert projection.diagnostics.reasons[message_id]
    for message_id in projection.diagnostics.truncated_message_ids:
        assert message_id in sent


@FAST
@given(engine_histories(), contexts(), st.randoms(use_true_random=False))
def test_model_view_is_deterministic_whatever_the_input_order(
    history: list[EngineMessage], ctx: ProjectionContext, rng: random.Random
) -> None:
    first = project_model(history, ctx)
    shuffled = list(history)
    rng.shuffle(shuffled)
    assert project_model(history, ctx) == first
    assert project_model(shuffled, ctx) == first


@FAST
@given(engine_histories(), contexts())
def test_model_view_sends_no_blank_text(history: list[EngineMessage], ctx: ProjectionContext) -> None:
    for message in project_model(history, ctx).messages:
        if isinstance(message.content, str):
            assert message.content.strip()
        else:
            assert message.content
            for part in message.content:
                if part.get("type") == "text":
                    assert part["text"].strip()


@FAST
@given(engine_histories(), contexts())
def test_applied_summary_comes_first_as_user_text(history: list[EngineMessage], ctx: ProjectionContext) -> None:
    projection = project_model(history, ctx)
    applied = projection.diagnostics.applied_compact_boundary_id
    summaries = [m for m in projection.messages if m.semantic_type is Kind.COMPACT_SUMMARY]
    if applied is None:
        assert summaries == []
        return
    assert summaries == [projection.messages[0]]
    assert projection.messages[0].role == "user"
    assert isinstance(projection.messages[0].content, str)
    assert "<summary>" in projection.messages[0].content


@FAST
@given(engine_histories(), contexts())
def test_the_store_slice_of_the_live_history_gives_the_same_model_view(
    history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    """The store reads seq >= S plus the linked summary; the model view must not notice.

    Only with applyCompactBoundary on: with it off the whole history is the context, and the store reads it all.
    """
    start = live_history_start_seq(history)
    if start is None or not ctx.apply_compact_boundary:
        return
    compaction = newest_complete_compaction(history)
    assert compaction is not None
    live = [m for m in history if m.seq >= start]
    # The store hands the summary over beside the rows, possibly twice; order is not promised either.
    sliced = [compaction.summary, *reversed(live)]
    full = project_model(history, ctx)
    part = project_model(sliced, ctx)
    assert part.messages == full.messages
    assert part.diagnostics.applied_compact_boundary_id == full.diagnostics.applied_compact_boundary_id
    assert part.diagnostics.truncated_message_ids == full.diagnostics.truncated_message_ids
    assert part.diagnostics.injected_notes == full.diagnostics.injected_notes
    assert part.diagnostics.repairs == full.diagnostics.repairs
    given_ids = {m.id for m in sliced}
    assert part.diagnostics.hidden_message_ids == [i for i in full.diagnostics.hidden_message_ids if i in given_ids]
    assert all(m.seq < start for m in history if m.id in set(full.diagnostics.hidden_message_ids) - given_ids)
