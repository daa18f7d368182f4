from app.context.history_window import history_window
from tests.context.histories import assistant, boundary, call, history, result, summary, user


def ids(window):
    return [m.id for m in window.messages]


def test_without_compaction_the_window_is_the_whole_history():
    window = history_window(history(user("a"), assistant("b")))
    assert window.compaction is None
    assert ids(window) == ["m1", "m2"]


def test_summary_comes_first_then_the_messages_after_the_boundary():
    messages = history(user("a"), assistant("b"), boundary("b1"), summary("b1", id="s1"), user("c"))
    assert ids(history_window(messages)) == ["s1", "m5"]


def test_kept_tail_named_by_compact_through_is_sent_after_the_summary():
    messages = history(
        user("a"), assistant("b"), user("c"), assistant("d"), boundary("b1", through="m2"), summary("b1", id="s1")
    )
    assert ids(history_window(messages)) == ["s1", "m3", "m4"]


def test_boundary_without_a_summary_is_ignored():
    messages = history(user("a"), boundary("b1"), user("c"))
    window = history_window(messages)
    assert window.compaction is None
    assert ids(window) == ["m1", "m3"]


def test_boundary_with_a_whitespace_summary_is_incomplete():
    messages = history(user("a"), boundary("b1"), summary("b1", "  \n"), user("c"))
    assert history_window(messages).compaction is None


def test_newest_complete_boundary_wins_and_older_summaries_are_left_out():
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
    window = history_window(messages)
    assert window.compaction is not None and window.compaction.boundary.id == "b2"
    assert ids(window) == ["s2", "m5", "m8"]


def test_incomplete_newer_boundary_falls_back_to_the_older_complete_one():
    messages = history(user("a"), boundary("b1"), summary("b1", id="s1"), user("c"), boundary("b2"), user("d"))
    assert ids(history_window(messages)) == ["s1", "m4", "m6"]


def test_store_slice_starting_after_the_through_message_keeps_the_tail():
    whole = history(
        user("a"), assistant("b"), user("c"), assistant("d"), boundary("b1", through="m2"), summary("b1", id="s1")
    )
    assert ids(history_window(whole[2:])) == ["s1", "m3", "m4"]


def test_orphan_and_older_summaries_are_never_in_the_window():
    messages = history(user("a"), summary("gone", id="s0"), assistant("b"))
    assert ids(history_window(messages)) == ["m1", "m3"]


def test_a_message_given_twice_counts_once():
    messages = history(user("a"), boundary("b1"), summary("b1", id="s1"), user("c"))
    assert ids(history_window([*messages, messages[2]])) == ["s1", "m4"]


def test_compact_through_naming_a_later_message_is_ignored():
    messages = history(user("a"), boundary("b1", through="m4"), summary("b1", id="s1"), user("c"))
    assert ids(history_window(messages)) == ["s1", "m4"]


def test_window_is_the_same_whatever_order_the_messages_come_in():
    messages = history(call("c1"), result("c1"), boundary("b1", through="m1"), summary("b1", id="s1"))
    assert ids(history_window(list(reversed(messages)))) == ["s1", "m2"]
