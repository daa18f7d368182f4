"""The debug view: every message, its metadata, and why each one is hidden, cut or stubbed."""

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.message import EngineMessage
from app.projections.debug import project_debug
from app.projections.live_history import live_history_start_seq, newest_complete_compaction
from app.projections.model import project_model
from app.projections.types import ProjectionContext, View
from tests import builders as b
from tests.strategies import engine_histories

CTX = ProjectionContext(tool_result_soft_limit_chars=10)


def test_debug_view_shows_every_message_with_why_it_is_hidden_cut_or_stubbed() -> None:
    history = b.engine(
        b.user("old"),
        b.boundary("b1"),
        b.summary("b1", "Old."),
        b.tool_call("c1", "Read"),
        b.tool_result("c1", "a" * 50),
        b.tool_result("c1", "again", compacted=True),
        b.reminder("psst"),
        b.user("hi", runtimeKind="nonsense"),
    )
    projection = project_debug(history, CTX)
    assert [m.source_message_ids[0] for m in projection.messages] == [m.id for m in history]
    assert [m.content for m in projection.messages] == [m.content for m in history]
    flags = {m.source_message_ids[0]: m.metadata for m in projection.messages}
    assert flags["m1"].hidden_from_model
    assert "model: before the compaction window of boundary b1" in flags["m1"].notes
    assert flags["b1"].hidden_from_model
    assert flags["m5"].truncated
    assert flags["m6"].compacted
    assert flags["m6"].truncated
    assert flags["m7"].hidden_from_transcript
    assert not flags["m7"].hidden_from_model
    assert flags["m8"].notes[0].startswith("promotion: runtimeKind 'nonsense' is not a known kind")
    extra = flags["m8"].extra
    assert extra["metadata"] == {"runtimeKind": "nonsense"}
    assert extra["promotionNote"] is not None
    assert extra["seq"] == 8


def test_debug_diagnostics_are_the_model_views() -> None:
    history = b.engine(b.user("old"), b.boundary("b1"), b.summary("b1", "Old."))
    debug = project_debug(history, CTX)
    assert debug.view is View.DEBUG
    assert debug.diagnostics == project_model(history, CTX).diagnostics


@settings(max_examples=40)
@given(engine_histories())
def test_debug_view_holds_every_message_given(history: list[EngineMessage]) -> None:
    projection = project_debug(history, CTX)
    assert [m.source_message_ids for m in projection.messages] == [(m.id,) for m in history]
    hidden = set(project_model(history, CTX).diagnostics.hidden_message_ids)
    assert {m.source_message_ids[0] for m in projection.messages if m.metadata.hidden_from_model} == hidden


@settings(max_examples=40)
@given(engine_histories(), st.integers(0, 40), st.integers(1, 40))
def test_debug_view_of_a_page_holds_exactly_that_page(history: list[EngineMessage], start: int, size: int) -> None:
    page = history[start : start + size]
    projection = project_debug(page, CTX)
    assert [m.source_message_ids for m in projection.messages] == [(m.id,) for m in page]
    assert [m.content for m in projection.messages] == [m.content for m in page]


def store_window(history: list[EngineMessage]) -> list[EngineMessage]:
    """What the store reads for the model view: seq >= S plus the linked summary (the whole history without a
    compaction)."""
    start = live_history_start_seq(history)
    compaction = newest_complete_compaction(history)
    if start is None or compaction is None:
        return history
    return [compaction.summary, *(m for m in history if m.seq >= start)]


@settings(max_examples=60)
@given(engine_histories(), st.integers(0, 40), st.integers(1, 40))
def test_a_debug_page_judged_over_the_window_says_what_the_whole_debug_view_says(
    history: list[EngineMessage], start: int, size: int
) -> None:
    page = history[start : start + size]
    whole = {m.source_message_ids[0]: m for m in project_debug(history, CTX).messages}
    paged = project_debug(page, CTX, store_window(history))
    assert [m.source_message_ids for m in paged.messages] == [(m.id,) for m in page]
    for message in paged.messages:
        expected = whole[message.source_message_ids[0]]
        assert message.metadata.hidden_from_model == expected.metadata.hidden_from_model
        assert message.metadata.truncated == expected.metadata.truncated
        assert message.metadata.notes == expected.metadata.notes
    on_page = {m.id for m in page}
    full = project_model(history, CTX).diagnostics
    assert paged.diagnostics.hidden_message_ids == [i for i in full.hidden_message_ids if i in on_page]
    assert paged.diagnostics.truncated_message_ids == [i for i in full.truncated_message_ids if i in on_page]
    assert paged.diagnostics.applied_compact_boundary_id == full.applied_compact_boundary_id


def test_a_result_whose_call_is_on_the_page_before_is_not_reported_dropped() -> None:
    history = b.engine(b.user("read"), b.tool_call("c1", "Read"), b.tool_result("c1", "contents"))
    paged = project_debug(history[2:], CTX, history)
    result = paged.messages[0]
    assert not result.metadata.hidden_from_model
    assert paged.diagnostics.hidden_message_ids == []
    assert project_debug(history[2:], CTX).messages[0].metadata.hidden_from_model
