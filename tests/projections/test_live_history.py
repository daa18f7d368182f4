"""The live history (the messages from the newest complete compaction on), laid out as the model view sends
it, and the seq the store reads from so that it reads only what the model view needs."""

from app.projections.live_history import (
    LiveHistory,
    live_history,
    live_history_start_seq,
    newest_complete_compaction,
)
from tests import builders as b
from tests.context.histories import assistant, boundary, call, history, result, summary, user


def test_live_history_starts_the_seq_after_the_through_message() -> None:
    history = b.engine(b.user("a"), b.user("b"), b.user("c"), b.boundary("b1", through="m2"), b.summary("b1", "S"))
    assert live_history_start_seq(history) == 3


def test_live_history_starts_at_the_boundary_without_a_through_message() -> None:
    history = b.engine(b.user("a"), b.boundary("b1"), b.summary("b1", "S"), b.user("c"))
    assert live_history_start_seq(history) == 2


def test_live_history_starts_at_the_boundary_when_the_through_message_does_not_precede_it() -> None:
    history = b.engine(b.user("a"), b.boundary("b1", through="m4"), b.summary("b1", "S"), b.user("c"))
    assert live_history_start_seq(history) == 2


def test_no_live_history_start_without_a_complete_compaction() -> None:
    assert live_history_start_seq(b.engine(b.user("a"))) is None
    assert live_history_start_seq(b.engine(b.user("a"), b.boundary("b1"), b.summary("b1", " "))) is None
    assert live_history_start_seq(b.engine(b.user("a"), b.boundary("b1"))) is None


def test_newest_complete_compaction_skips_a_newer_incomplete_one() -> None:
    history = b.engine(b.boundary("b1"), b.summary("b1", "S1"), b.boundary("b2"), b.summary("b2", ""))
    compaction = newest_complete_compaction(history)
    assert compaction is not None
    assert (compaction.boundary.id, compaction.summary.id) == ("b1", "m2")


def test_summary_of_a_missing_boundary_completes_nothing() -> None:
    assert newest_complete_compaction(b.engine(b.summary("b1", "S"))) is None


def ids(live: LiveHistory) -> list[str]:
    return [m.id for m in live.messages]


def test_without_compaction_the_live_history_is_the_whole_history() -> None:
    live = live_history(history(user("a"), assistant("b")))
    assert live.compaction is None
    assert ids(live) == ["m1", "m2"]


def test_summary_comes_first_then_the_messages_after_the_boundary() -> None:
    messages = history(user("a"), assistant("b"), boundary("b1"), summary("b1", id="s1"), user("c"))
    assert ids(live_history(messages)) == ["s1", "m5"]


def test_kept_tail_named_by_compact_through_is_sent_after_the_summary() -> None:
    messages = history(
        user("a"), assistant("b"), user("c"), assistant("d"), boundary("b1", through="m2"), summary("b1", id="s1")
    )
    assert ids(live_history(messages)) == ["s1", "m3", "m4"]


def test_boundary_without_a_summary_is_ignored() -> None:
    messages = history(user("a"), boundary("b1"), user("c"))
    live = live_history(messages)
    assert live.compaction is None
    assert ids(live) == ["m1", "m3"]


def test_boundary_with_a_whitespace_summary_is_incomplete() -> None:
    messages = history(user("a"), boundary("b1"), summary("b1", "  \n"), user("c"))
    assert live_history(messages).compaction is None


def test_newest_complete_boundary_wins_and_older_summaries_are_left_out() -> None:
    messages = history(
        user("a"),
        boundary("b1"),
        summary("b1", "old", id="s1"),
        user("c"),
        assistant("d"),
        boundary("b2", through="m4"),
        summary("b2", "new", id="s2"),
        user("e"),
    )
    live = live_history(messages)
    assert live.compaction is not None and live.compaction.boundary.id == "b2"
    assert ids(live) == ["s2", "m5", "m8"]


def test_incomplete_newer_boundary_falls_back_to_the_older_complete_one() -> None:
    messages = history(user("a"), boundary("b1"), summary("b1", id="s1"), user("c"), boundary("b2"), user("d"))
    assert ids(live_history(messages)) == ["s1", "m4", "m6"]


def test_store_slice_starting_after_the_through_message_keeps_the_tail() -> None:
    whole = history(
        user("a"), assistant("b"), user("c"), assistant("d"), boundary("b1", through="m2"), summary("b1", id="s1")
    )
    assert ids(live_history(whole[2:])) == ["s1", "m3", "m4"]


def test_orphan_and_older_summaries_are_never_in_the_live_history() -> None:
    messages = history(user("a"), summary("gone", id="s0"), assistant("b"))
    assert ids(live_history(messages)) == ["m1", "m3"]


def test_a_message_given_twice_counts_once() -> None:
    messages = history(user("a"), boundary("b1"), summary("b1", id="s1"), user("c"))
    assert ids(live_history([*messages, messages[2]])) == ["s1", "m4"]


def test_compact_through_naming_a_later_message_is_ignored() -> None:
    messages = history(user("a"), boundary("b1", through="m4"), summary("b1", id="s1"), user("c"))
    assert ids(live_history(messages)) == ["s1", "m4"]


def test_live_history_is_the_same_whatever_order_the_messages_come_in() -> None:
    messages = history(call("c1"), result("c1"), boundary("b1", through="m1"), summary("b1", id="s1"))
    assert ids(live_history(list(reversed(messages)))) == ["s1", "m2"]
