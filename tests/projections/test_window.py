"""The compaction window and the helper the store uses to read only what the model view needs."""

from app.projections.window import newest_complete_compaction, window_start_seq
from tests import builders as b


def test_window_start_is_the_seq_after_the_through_message() -> None:
    history = b.engine(b.user("a"), b.user("b"), b.user("c"), b.boundary("b1", through="m2"), b.summary("b1", "S"))
    assert window_start_seq(history) == 3


def test_window_start_is_the_boundary_seq_without_a_through_message() -> None:
    history = b.engine(b.user("a"), b.boundary("b1"), b.summary("b1", "S"), b.user("c"))
    assert window_start_seq(history) == 2


def test_window_start_is_the_boundary_seq_when_the_through_message_does_not_precede_it() -> None:
    history = b.engine(b.user("a"), b.boundary("b1", through="m4"), b.summary("b1", "S"), b.user("c"))
    assert window_start_seq(history) == 2


def test_no_window_start_without_a_complete_compaction() -> None:
    assert window_start_seq(b.engine(b.user("a"))) is None
    assert window_start_seq(b.engine(b.user("a"), b.boundary("b1"), b.summary("b1", " "))) is None
    assert window_start_seq(b.engine(b.user("a"), b.boundary("b1"))) is None


def test_newest_complete_compaction_skips_a_newer_incomplete_one() -> None:
    history = b.engine(b.boundary("b1"), b.summary("b1", "S1"), b.boundary("b2"), b.summary("b2", ""))
    compaction = newest_complete_compaction(history)
    assert compaction is not None
    assert (compaction.boundary.id, compaction.summary.id) == ("b1", "m2")


def test_summary_of_a_missing_boundary_completes_nothing() -> None:
    assert newest_complete_compaction(b.engine(b.summary("b1", "S"))) is None
