"""The debug view: every message, its metadata, and why each one is hidden, cut or stubbed."""

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.message import EngineMessage
from app.projections.debug import project_debug
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


@settings(max_examples=40, deadline=None)
@given(engine_histories())
def test_debug_view_holds_every_message_given(history: list[EngineMessage]) -> None:
    projection = project_debug(history, CTX)
    assert [m.source_message_ids for m in projection.messages] == [(m.id,) for m in history]
    hidden = set(project_model(history, CTX).diagnostics.hidden_message_ids)
    assert {m.source_message_ids[0] for m in projection.messages if m.metadata.hidden_from_model} == hidden


@settings(max_examples=40, deadline=None)
@given(engine_histories(), st.integers(0, 40), st.integers(1, 40))
def test_debug_view_of_a_page_holds_exactly_that_page(history: list[EngineMessage], start: int, size: int) -> None:
    page = history[start : start + size]
    projection = project_debug(page, CTX)
    assert [m.source_message_ids for m in projection.messages] == [(m.id,) for m in page]
    assert [m.content for m in projection.messages] == [m.content for m in page]
