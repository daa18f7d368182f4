"""The model view's shortcuts give what its general rules give.

Each shortcut passes something on without running the rule that would leave it unchanged: assistant parts
no rule touches, tool results within the soft limit, a history that needs no pairing repair, and one shared
metadata for messages that carry only their producer. Each test turns one shortcut off (the general rule
then runs for every message) and compares the whole projection, on random histories and contexts.
"""

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.message import EngineMessage
from app.projections import model
from app.projections.compact import project_compact
from app.projections.model import project_model
from app.projections.types import Projection, ProjectionContext
from tests import builders as b
from tests.strategies import contexts, engine_histories

SETTINGS = settings(max_examples=150)

PRODUCER = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
_FINISH_REASONS = st.sampled_from(["stop", "length", None, 1, 1.0, True])


@st.composite
def answers(draw: st.DrawFn) -> list[EngineMessage]:
    """Plain answers of one producer, which mostly get the shared metadata, saying how they ended now and then
    in values that are equal but not the same JSON (``1``, ``1.0``, ``True``): those must not share one."""
    turns = draw(st.lists(_FINISH_REASONS, max_size=8))
    return b.engine(
        *(m for finish in turns for m in (b.user("go"), b.assistant("ok", **PRODUCER, finishReason=finish)))
    )


def assert_shortcut_agrees(
    shortcut: str, never_taken: object, history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    """The model and compact views with ``shortcut`` as it is, and with it answering ``never_taken``."""
    with patch.object(model, shortcut, return_value=never_taken):
        general = (project_model(history, ctx), project_compact(history, ctx))
    assert_same_views(general, history, ctx)


def assert_same_views(
    general: tuple[Projection, Projection], history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    """The model and compact views of ``history`` as they are are ``general``."""
    fast = (project_model(history, ctx), project_compact(history, ctx))
    # repr too: ``1 == 1.0 == True``, yet they are written as different JSON.
    assert fast == general and repr(fast) == repr(general)


@SETTINGS
@given(engine_histories(), contexts())
def test_untouched_assistant_parts_are_what_the_reasoning_and_blank_text_rules_give(
    history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    assert_shortcut_agrees("_untouched_assistant_parts", False, history, ctx)


@SETTINGS
@given(engine_histories(), contexts())
def test_untouched_results_are_what_the_result_rules_give(history: list[EngineMessage], ctx: ProjectionContext) -> None:
    assert_shortcut_agrees("_untouched_results", False, history, ctx)


@SETTINGS
@given(engine_histories(), contexts())
def test_a_history_said_to_need_no_pairing_repair_comes_out_of_both_passes_unchanged(
    history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    """Asked before the drop (either pass) and again after it (the moving pass alone)."""
    assert_shortcut_agrees("needs_pairing_repairs", True, history, ctx)


def test_a_window_cut_after_a_call_drops_the_orphan_result_without_the_moving_pass() -> None:
    """A compaction's kept tail that opens with a result whose call it left behind: the drop is the only
    repair, and the pass that moves messages after results (a walk of its own over the whole window) is not
    run once the check after the drop says nothing waits for a result."""
    history = b.engine(
        b.tool_result("c0", "left behind"),
        b.user("next"),
        b.tool_call("c1", "bash", command="make"),
        b.tool_result("c1", "built"),
        b.assistant("done"),
    )
    with patch.object(model, "keep_results_next_to_calls", side_effect=AssertionError("the moving pass ran")):
        view = project_model(history, ProjectionContext())
    assert [repair.rule for repair in view.diagnostics.repairs] == ["result-without-call"]
    assert [m.role for m in view.messages] == ["user", "assistant", "tool", "assistant"]


@SETTINGS
@given(st.one_of(engine_histories(), answers()), contexts())
def test_a_shared_producer_metadata_equals_the_metadata_each_message_would_get(
    history: list[EngineMessage], ctx: ProjectionContext
) -> None:
    with patch.object(model, "_producer", return_value=None), patch.object(model, "_NO_PRODUCER", None):
        general = (project_model(history, ctx), project_compact(history, ctx))
    assert_same_views(general, history, ctx)
