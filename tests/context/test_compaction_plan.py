from collections.abc import Sequence

import pytest

from app.context.compaction import (
    BOUNDARY_TEXT,
    CompactionPlan,
    CompactionSelection,
    build_compaction,
    compact_transcript,
    select_compaction,
)
from app.context.config import TailPolicy
from app.context.errors import CompactionRefused
from app.context.summary_prompt import render_transcript
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.projections.live_history import live_history
from app.projections.model import project_model
from app.projections.types import ProjectionContext
from tests.context.histories import (
    approval_request,
    approval_response,
    assistant,
    boundary,
    call,
    calls,
    history,
    message,
    result,
    summary,
    user,
)

SUMMARY = "## Goal\nFix the login bug in src/auth.ts."


def tail_ids(selection: CompactionSelection) -> list[str]:
    return [m.id for m in selection.kept_tail]


def summarized_ids(selection: CompactionSelection) -> list[str]:
    return [m.id for m in selection.to_summarize]


def compaction_of(
    messages: Sequence[EngineMessage],
    summary: str,
    *,
    boundary_id: str,
    summary_id: str,
    policy: TailPolicy,
    through_message_id: str | None = None,
) -> CompactionPlan:
    """Select and build in one step, as for a summary the caller already has."""
    selection = select_compaction(messages, policy=policy, through_message_id=through_message_id)
    return build_compaction(selection, summary, boundary_id=boundary_id, summary_id=summary_id)


def written(messages: list[EngineMessage], plan: CompactionPlan) -> list[EngineMessage]:
    """The history as the store would hold it after writing the plan: both messages appended."""
    start = max(m.seq for m in messages) + 1
    appended = [message(m.role, m.content, id=m.id, **m.metadata) for m in plan.messages]
    return messages + history(*appended, start_seq=start)


def turns(count: int, tokens: int = 100) -> list[PersistedMessage]:
    """``count`` user turns of a user message and an answer, ``tokens`` each."""
    out: list[PersistedMessage] = []
    for n in range(count):
        out += [user(f"q{n}", tokens=tokens), assistant(f"a{n}", tokens=tokens)]
    return out


# Refusals ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t \n"])
def test_empty_or_whitespace_summary_is_refused(text: str) -> None:
    messages = history(*turns(3))
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=100))
    with pytest.raises(CompactionRefused) as refused:
        build_compaction(selection, text, boundary_id="b1", summary_id="s1")
    assert refused.value.reason == "empty_summary"


def test_empty_history_has_nothing_to_compact() -> None:
    with pytest.raises(CompactionRefused) as refused:
        select_compaction([], policy=TailPolicy())
    assert refused.value.reason == "nothing_to_compact"


def test_only_a_previous_summary_has_nothing_to_compact() -> None:
    messages = history(user("a"), boundary("b1", through="m1"), summary("b1", id="s1"))
    with pytest.raises(CompactionRefused) as refused:
        select_compaction(messages, policy=TailPolicy())
    assert refused.value.reason == "nothing_to_compact"


def test_unknown_through_message_is_refused() -> None:
    with pytest.raises(CompactionRefused) as refused:
        select_compaction(history(*turns(2)), policy=TailPolicy(), through_message_id="nope")
    assert refused.value.reason == "unknown_through_message"


def test_through_message_that_splits_a_call_from_its_result_is_refused() -> None:
    messages = history(user("a"), call("c1"), result("c1"), assistant("done"))
    with pytest.raises(CompactionRefused) as refused:
        select_compaction(messages, policy=TailPolicy(), through_message_id="m2")
    assert refused.value.reason == "through_splits_tool_pair"


def test_through_a_call_whose_tool_is_still_running_is_refused() -> None:
    """Its result arrives after the boundary and would find no call: the model would never see it."""
    messages = history(user("run the build"), call("c1"))
    with pytest.raises(CompactionRefused) as refused:
        select_compaction(messages, policy=TailPolicy(), through_message_id="m2")
    assert refused.value.reason == "through_splits_tool_pair"


def test_a_running_call_alone_after_the_first_message_leaves_nothing_to_compact() -> None:
    messages = history(call("c1", tokens=5_000))
    with pytest.raises(CompactionRefused) as refused:
        select_compaction(messages, policy=TailPolicy(max_tokens=1_000))
    assert refused.value.reason == "nothing_to_compact"


# The two messages ----------------------------------------------------------------------------------------


def test_plan_writes_a_boundary_and_its_summary_as_system_records() -> None:
    messages = history(*turns(3))
    plan = compaction_of(
        messages, f"  {SUMMARY}\n", boundary_id="b1", summary_id="s1", policy=TailPolicy(max_tokens=200)
    )
    boundary_message, summary_message = plan.messages
    assert boundary_message.as_dict() == {
        "id": "b1",
        "role": "system",
        "content": BOUNDARY_TEXT,
        "metadata": {
            "runtimeKind": "compact_boundary",
            "compactThroughMessageId": "m4",
            "compaction": {
                "trigger": "manual",
                "summarySource": "caller",
                "summarizedMessageCount": 4,
                "keptMessageCount": 2,
                "tokensBefore": 600,
                "cacheInvalidatedTokens": 600,
                "keptTokens": 200,
                "summaryTokens": plan.tokens_after - 200,
                "previousBoundaryId": None,
            },
        },
    }
    assert summary_message.as_dict() == {
        "id": "s1",
        "role": "system",
        "content": SUMMARY,
        "metadata": {"runtimeKind": "compact_summary", "summaryForBoundaryId": "b1"},
    }


def test_written_messages_promote_to_the_compaction_kinds_and_shape_the_next_live_history() -> None:
    messages = history(*turns(3))
    plan = compaction_of(messages, SUMMARY, boundary_id="b1", summary_id="s1", policy=TailPolicy(max_tokens=200))
    after = written(messages, plan)
    assert [m.kind for m in after[-2:]] == [Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY]
    live = live_history(after)
    assert [m.id for m in live.messages] == ["s1", "m5", "m6"]


def test_summarizer_source_and_model_are_recorded() -> None:
    selection = select_compaction(history(*turns(2)), policy=TailPolicy(max_tokens=100))
    plan = build_compaction(
        selection,
        SUMMARY,
        boundary_id="b1",
        summary_id="s1",
        trigger="auto",
        summary_source="summarizer",
        summarizer_model="qwen-coder",
    )
    record = plan.boundary.metadata["compaction"]
    assert (record["trigger"], record["summarySource"], record["summarizerModel"]) == (
        "auto",
        "summarizer",
        "qwen-coder",
    )


# The kept tail -------------------------------------------------------------------------------------------


def test_tail_keeps_the_newest_messages_within_the_token_budget() -> None:
    selection = select_compaction(history(*turns(5)), policy=TailPolicy(max_tokens=350))
    assert tail_ids(selection) == ["m8", "m9", "m10"]
    assert selection.through_message_id == "m7"
    assert selection.kept_tokens == 300


def test_tail_never_starts_on_a_tool_result_it_moves_back_to_the_call() -> None:
    messages = history(
        user("a", tokens=100),
        call("c1", tokens=100),
        result("c1", tokens=100),
        assistant("done", tokens=100),
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=250))
    assert tail_ids(selection) == ["m2", "m3", "m4"]
    assert selection.through_message_id == "m1"


def test_tail_never_separates_parallel_calls_from_any_of_their_results() -> None:
    messages = history(
        user("a", tokens=100),
        calls("c1", "c2", tokens=100),
        result("c1", tokens=100),
        result("c2", tokens=100),
        assistant("done", tokens=100),
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=250))
    assert tail_ids(selection) == ["m2", "m3", "m4", "m5"]


def test_tail_never_separates_an_approval_request_from_its_response() -> None:
    messages = history(
        user("a", tokens=100),
        call("c1", tokens=100),
        approval_request("ap1", "c1", tokens=100),
        approval_response("ap1", tokens=100),
        result("c1", tokens=100),
        user("b", tokens=100),
    )
    for budget in (150, 250, 350):
        selection = select_compaction(messages, policy=TailPolicy(max_tokens=budget))
        assert tail_ids(selection)[0] in {"m2", "m6"}


def test_when_no_earlier_cut_is_valid_the_tail_keeps_less() -> None:
    messages = history(call("c1", tokens=100), result("c1", tokens=100), assistant("x", tokens=100))
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=250))
    assert summarized_ids(selection) == ["m1", "m2"]
    assert tail_ids(selection) == ["m3"]


def test_a_newest_message_over_the_budget_leaves_an_empty_tail() -> None:
    messages = history(user("a", tokens=100), assistant("huge", tokens=5_000))
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=1_000))
    assert tail_ids(selection) == []
    assert selection.through_message_id == "m2"


def test_when_everything_fits_only_the_latest_user_turn_is_kept() -> None:
    selection = select_compaction(history(*turns(3)), policy=TailPolicy(max_tokens=100_000))
    assert tail_ids(selection) == ["m5", "m6"]


def test_a_single_turn_that_fits_still_compacts_something() -> None:
    messages = history(user("a", tokens=10), assistant("b", tokens=10))
    selection = select_compaction(messages, policy=TailPolicy())
    assert (summarized_ids(selection), tail_ids(selection)) == (["m1"], ["m2"])


def test_user_turn_limit_keeps_whole_recent_turns() -> None:
    selection = select_compaction(history(*turns(5)), policy=TailPolicy(max_user_turns=2))
    assert tail_ids(selection) == ["m7", "m8", "m9", "m10"]


def test_tail_budget_is_capped_by_a_share_of_the_window() -> None:
    policy = TailPolicy(max_tokens=20_000, max_window_fraction=0.25)
    selection = select_compaction(history(*turns(10)), policy=policy, window_tokens=1_200)
    assert selection.kept_tokens == 300
    assert tail_ids(selection) == ["m18", "m19", "m20"]


def test_pruned_results_in_the_tail_cost_their_stub() -> None:
    messages = history(
        user("a", tokens=100),
        call("c1", tokens=10),
        result("c1", "x" * 40_000, compacted=True),
        assistant("done", tokens=10),
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=100))
    assert tail_ids(selection) == ["m2", "m3", "m4"]


def test_explicit_through_message_is_honoured_exactly() -> None:
    selection = select_compaction(history(*turns(3)), policy=TailPolicy(), through_message_id="m2")
    assert (summarized_ids(selection), tail_ids(selection)) == (["m1", "m2"], ["m3", "m4", "m5", "m6"])


# A second compaction -------------------------------------------------------------------------------------


def test_second_compaction_updates_the_previous_summary_and_supersedes_it() -> None:
    first = history(*turns(3))
    plan1 = compaction_of(first, "## Goal\nfirst", boundary_id="b1", summary_id="s1", policy=TailPolicy(max_tokens=200))
    session = written(first, plan1) + history(*turns(2), start_seq=9)
    selection = select_compaction(session, policy=TailPolicy(max_tokens=200))
    assert selection.previous is not None and selection.previous.boundary.id == "b1"
    assert selection.previous_summary == "## Goal\nfirst"
    assert summarized_ids(selection) == ["m5", "m6", "m9", "m10"]
    plan2 = build_compaction(selection, "## Goal\nsecond", boundary_id="b2", summary_id="s2")
    assert plan2.boundary.metadata["compaction"]["previousBoundaryId"] == "b1"
    live = live_history(written(session, plan2))
    assert [m.id for m in live.messages] == ["s2", "m11", "m12"]


def test_second_compaction_cut_inside_the_old_tail_leaves_the_old_records_out() -> None:
    first = history(*turns(3))
    plan1 = compaction_of(first, "## Goal\nfirst", boundary_id="b1", summary_id="s1", policy=TailPolicy(max_tokens=400))
    session = written(first, plan1)
    plan2 = compaction_of(
        session, "## Goal\nsecond", boundary_id="b2", summary_id="s2", policy=TailPolicy(), through_message_id="m3"
    )
    live = live_history(written(session, plan2))
    assert [m.id for m in live.messages] == ["s2", "m4", "m5", "m6"]


# Through the views ---------------------------------------------------------------------------------------


def test_model_view_after_a_compaction_sends_the_summary_then_the_kept_tail_with_pairs_intact() -> None:
    messages = history(
        user("fix login", tokens=100),
        call("c1", tokens=100),
        result("c1", "file a", tokens=100),
        user("and the tests", tokens=100),
        call("c2", tokens=100),
        result("c2", "file b", tokens=100),
        assistant("done", tokens=100),
    )
    plan = compaction_of(messages, SUMMARY, boundary_id="b1", summary_id="s1", policy=TailPolicy(max_tokens=250))
    projection = project_model(written(messages, plan), ProjectionContext())
    assert [m.source_message_ids for m in projection.messages] == [("s1",), ("m5",), ("m6",), ("m7",)]
    assert SUMMARY in projection.messages[0].content
    assert projection.diagnostics.applied_compact_boundary_id == "b1"


def test_summariser_transcript_is_the_compact_view_of_what_is_summarised() -> None:
    messages = history(
        user("a", tokens=100),
        call("c1", tokens=100),
        result("c1", "x" * 10_000, tokens=2_500),
        user("b", tokens=100),
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=100))
    transcript = compact_transcript(selection)
    assert [m.source_message_ids for m in transcript] == [("m1",), ("m2",), ("m3",)]
    rendered = render_transcript(transcript, tool_result_chars=100_000)
    assert "[Tool result] Read:" in rendered
    assert len(rendered) < 3_000


def test_previous_summary_goes_apart_not_into_the_transcript() -> None:
    first = history(*turns(3))
    plan = compaction_of(first, "## Goal\nfirst", boundary_id="b1", summary_id="s1", policy=TailPolicy(max_tokens=200))
    session = written(first, plan) + history(*turns(2), start_seq=9)
    selection = select_compaction(session, policy=TailPolicy(max_tokens=200))
    transcript = compact_transcript(selection)
    assert all("s1" not in m.source_message_ids for m in transcript)
    assert selection.previous_summary == "## Goal\nfirst"


def split_turn(selection: CompactionSelection) -> bool:
    plan = build_compaction(selection, SUMMARY, boundary_id="b1", summary_id="s1")
    return plan.boundary.metadata["compaction"].get("splitTurn") is True


def test_a_cut_inside_the_newest_turn_is_recorded_as_splitting_it() -> None:
    messages = history(user("a", tokens=100), assistant("b", tokens=100), user("migrate every module", tokens=100))
    messages += history(call("c1", tokens=3_000), result("c1", tokens=3_000), call("c2", tokens=100), start_seq=4)
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=1_000))
    assert tail_ids(selection) == ["m6"]
    assert split_turn(selection)


def test_a_cut_before_a_user_message_does_not_split_a_turn() -> None:
    selection = select_compaction(history(*turns(5)), policy=TailPolicy(max_tokens=350))
    assert tail_ids(selection)[0] == "m8"
    assert not split_turn(selection)


def test_summarising_everything_splits_the_turn_only_when_its_request_is_unanswered() -> None:
    answered = history(user("a", tokens=100), assistant("huge", tokens=5_000))
    asked = history(user("a", tokens=100), assistant("b", tokens=100), user("huge", tokens=5_000))
    for messages, split in ((answered, False), (asked, True)):
        selection = select_compaction(messages, policy=TailPolicy(max_tokens=1_000))
        assert tail_ids(selection) == []
        assert split_turn(selection) is split


def test_a_running_call_stays_in_the_tail_whatever_it_costs() -> None:
    messages = history(
        user("a", tokens=100), assistant("b", tokens=100), user("run it", tokens=100), call("c1", tokens=5_000)
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=1_000))
    assert tail_ids(selection) == ["m4"]


def test_a_call_the_user_spoke_after_is_abandoned_and_does_not_pin_the_cut() -> None:
    messages = history(user("a", tokens=100), call("c1", tokens=100), user("never mind", tokens=100), assistant("ok"))
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=150))
    assert tail_ids(selection) == ["m3", "m4"]


def test_a_reused_call_id_pairs_each_result_with_the_newest_call_before_it() -> None:
    messages = history(
        user("a", tokens=100),
        call("c1", tokens=100),
        result("c1", tokens=100),
        user("b", tokens=100),
        call("c1", tokens=100),
        result("c1", tokens=100),
        assistant("done", tokens=100),
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=250))
    assert tail_ids(selection) == ["m5", "m6", "m7"]


def test_an_orphan_result_does_not_pin_the_cut() -> None:
    # The model view drops both results (no call before them), so they cost nothing.
    messages = history(
        result("ghost", tokens=100), user("a", tokens=100), assistant("b", tokens=100), result("ghost", tokens=100)
    )
    selection = select_compaction(messages, policy=TailPolicy(max_tokens=150))
    assert tail_ids(selection) == ["m3", "m4"]
