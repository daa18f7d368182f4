from collections.abc import Sequence

from app.context.accounting import (
    ContextReport,
    account_context,
    compaction_threshold,
    pruned_tokens,
    usage_tokens,
)
from app.context.config import ThresholdPolicy
from app.context.window import ContextWindow
from app.engine.message import EngineMessage
from app.engine.tokens import estimate_tokens
from app.projections.framing import SUMMARY_PREAMBLE, reminder_frame, summary_frame
from app.projections.model import project_model
from app.projections.tool_output import CLEARED
from app.projections.types import Projection, ProjectionContext
from tests.context.histories import (
    MODEL,
    PROVIDER,
    assistant,
    boundary,
    call,
    history,
    message,
    result,
    summary,
    system,
    usage,
    user,
)

WINDOW = ContextWindow(10_000, "model_server")
POLICY = ThresholdPolicy()  # ratio 0.8 -> threshold 8_000 on WINDOW
CTX = ProjectionContext(provider=PROVIDER, model=MODEL)


def account(
    messages: Sequence[EngineMessage],
    *,
    window: ContextWindow = WINDOW,
    ctx: ProjectionContext = CTX,
    policy: ThresholdPolicy = POLICY,
    request_tokens: int = 0,
    view: Projection | None = None,
) -> ContextReport:
    return account_context(messages, window=window, ctx=ctx, policy=policy, request_tokens=request_tokens, view=view)


def framed_summary(text: str = "## Goal\nfix login") -> int:
    """What a summary costs as the model view sends it: wrapped as earlier history."""
    return estimate_tokens(summary_frame(SUMMARY_PREAMBLE, text))


def sent(messages: Sequence[EngineMessage], ctx: ProjectionContext = CTX) -> int:
    """What the model view sends for ``messages``, estimated as a whole (for views that change every one)."""
    return sum(estimate_tokens(message.content) for message in project_model(messages, ctx).messages)


# Threshold -----------------------------------------------------------------------------------------------


def test_default_threshold_is_four_fifths_of_the_window() -> None:
    assert compaction_threshold(10_000, ThresholdPolicy()) == 8_000
    assert compaction_threshold(32_768, ThresholdPolicy()) == 26_214


def test_output_reservation_lowers_the_threshold_on_large_windows() -> None:
    assert compaction_threshold(200_000, ThresholdPolicy(), max_output_tokens=64_000) == 136_000
    assert compaction_threshold(200_000, ThresholdPolicy(), max_output_tokens=8_000) == 160_000


def test_configured_reservation_applies_when_the_request_names_none() -> None:
    policy = ThresholdPolicy(reserved_output_tokens=20_000)
    assert compaction_threshold(100_000, policy) == 80_000
    assert compaction_threshold(100_000, policy, max_output_tokens=30_000) == 70_000


def test_reservation_never_claims_more_than_half_the_window() -> None:
    assert compaction_threshold(8_192, ThresholdPolicy(), max_output_tokens=8_192) == 4_096


def test_absolute_threshold_replaces_the_ratio_and_is_capped_by_the_window() -> None:
    assert compaction_threshold(100_000, ThresholdPolicy(threshold_tokens=50_000)) == 50_000
    assert compaction_threshold(10_000, ThresholdPolicy(threshold_tokens=50_000)) == 10_000


def test_compaction_is_due_exactly_at_the_threshold() -> None:
    below = account(history(user("x", tokens=7_999)))
    at = account(history(user("x", tokens=8_000)))
    assert (below.total_tokens, below.compaction_due) == (7_999, False)
    assert (at.total_tokens, at.compaction_due) == (8_000, True)
    assert at.threshold_tokens == 8_000


def test_no_window_never_proposes_compaction() -> None:
    report = account(history(user("x", tokens=1_000_000)), window=ContextWindow(None, "none"))
    assert report.compaction_due is False
    assert report.threshold_tokens is None
    assert "never proposed" in report.reason


# Usage anchor --------------------------------------------------------------------------------------------


def test_without_usage_the_estimates_are_the_count() -> None:
    report = account(history(user("x", tokens=100), assistant("y", tokens=50)))
    assert (report.basis, report.total_tokens, report.usage) == ("estimate", 150, None)


def test_estimates_counted_for_claude_are_padded_for_its_tokenizer() -> None:
    """Claude makes about a third more tokens of the same text than four bytes a token says."""
    messages = history(user("x" * 3_000), assistant("y" * 3_000, model="claude-sonnet-4-5"))
    claude = ProjectionContext(provider="anthropic", model="claude-sonnet-4-5")
    assert account(messages).total_tokens == 1_500
    assert account(messages, ctx=claude).total_tokens == 2_000
    assert account(messages, ctx=claude).sections.messages == 2_000


def test_last_valid_usage_plus_later_estimates() -> None:
    messages = history(
        user("x", tokens=100),
        assistant("y", tokens=50, usage=usage(3_000)),
        user("z", tokens=40),
        assistant("w", tokens=60, usage=usage(5_000)),
        call("c1", tokens=10),
        result("c1", tokens=700),
    )
    report = account(messages)
    assert report.basis == "usage"
    assert report.usage is not None and (report.usage.message_id, report.usage.tokens) == ("m4", 5_000)
    assert (report.tokens_after_usage, report.total_tokens) == (710, 5_710)
    assert report.estimated_tokens == 960


def test_usage_total_tokens_wins_over_the_parts() -> None:
    msg = history(assistant("y", usage={"totalTokens": 900, "inputTokens": 1, "outputTokens": 1}))[0]
    assert usage_tokens(msg, MODEL, {}) == 900


def test_a_usage_total_that_leaves_out_the_cache_reads_does_not_shrink_the_context() -> None:
    usage = {"inputTokens": 100, "cacheReadTokens": 8_000, "outputTokens": 20, "totalTokens": 120}
    assert usage_tokens(history(assistant("y", usage=usage))[0], MODEL, {}) == 8_120


def test_usage_parts_add_cache_reads_and_writes() -> None:
    parts = {"inputTokens": 100, "outputTokens": 20, "cacheReadTokens": 3_000, "cacheWriteTokens": 400}
    msg = history(assistant("y", usage=parts))[0]
    assert usage_tokens(msg, MODEL, {}) == 3_520


def test_errored_aborted_and_synthetic_usage_is_skipped() -> None:
    for bad in (
        assistant("y", usage=usage(9_000), finish="error"),
        assistant("y", usage=usage(9_000), finish="aborted"),
        assistant("y", usage=usage(9_000), synthetic=True),
    ):
        report = account(history(user("x", tokens=10), assistant("ok", tokens=5, usage=usage(2_000)), bad))
        assert report.usage is not None and report.usage.message_id == "m2"


def test_the_usage_of_an_answer_the_view_leaves_out_as_empty_still_counts() -> None:
    report = account(history(user("x", tokens=10), assistant(" ", tokens=1, usage=usage(2_000)), user("y", tokens=7)))
    assert report.usage is not None and (report.usage.message_id, report.total_tokens) == ("m2", 2_007)


def test_usage_of_a_message_kept_out_of_the_model_context_is_skipped() -> None:
    off = assistant("side", tokens=5, usage=usage(9_000), eligibleForModelContext=False)
    report = account(history(user("x", tokens=10), assistant("ok", tokens=5, usage=usage(2_000)), off))
    assert report.usage is not None and report.usage.message_id == "m2"


def pruned_read(pruned_at: str) -> list[EngineMessage]:
    """A 10,000-token result pruned at ``pruned_at``, then an answer with usage (seq 4, at T0 + 4 s)."""
    big = "x" * 40_000
    pruned = result("c1", big, compactedAt=pruned_at, tokens=estimate_tokens(big))
    messages = history(user("read it", tokens=10), call("c1", tokens=10), pruned)
    return messages + history(assistant("read", tokens=5, usage=usage(12_000)), user("next", tokens=10), start_seq=4)


def test_results_pruned_after_the_usage_was_reported_are_taken_off_it() -> None:
    """The usage counted them whole; the next request sends their stubs."""
    messages = pruned_read("2026-04-08T11:00:00Z")
    saved = messages[2].token_estimate - pruned_tokens(messages[2])
    report = account(messages)
    assert saved > 9_000
    assert report.usage is not None and report.usage.tokens == 12_000 - saved
    assert report.total_tokens == 12_000 - saved + 10


def test_results_pruned_before_the_usage_was_reported_are_already_in_it() -> None:
    assert account(pruned_read("2026-04-08T09:00:00+00:00")).total_tokens == 12_010
    assert account(pruned_read("not a time")).total_tokens == 12_010


def test_usage_from_another_model_is_skipped() -> None:
    messages = history(assistant("y", tokens=5, usage=usage(9_000), model="gpt-4o"), user("x", tokens=10))
    report = account(messages)
    assert (report.basis, report.total_tokens) == ("estimate", 15)


def test_usage_reported_under_the_snapshot_counts_for_its_alias() -> None:
    """The provider answers a request for an alias with the dated id it served, and stores that."""
    messages = history(assistant("y", tokens=5, usage=usage(9_000), model=f"{MODEL}-20250929"), user("x", tokens=10))
    report = account(messages)
    assert (report.basis, report.total_tokens) == ("usage", 9_010)


def test_run_model_is_the_fallback_when_the_message_names_none() -> None:
    msg = history(assistant("y", usage=usage(900), model=None, run_id="r1"))[0]
    assert usage_tokens(msg, MODEL, {"r1": MODEL}) == 900
    assert usage_tokens(msg, MODEL, {"r1": "other"}) is None
    assert usage_tokens(msg, MODEL, {}) is None


def test_any_model_is_accepted_when_none_is_asked() -> None:
    msg = history(assistant("y", usage=usage(900), model="gpt-4o"))[0]
    assert usage_tokens(msg, None, {}) == 900


def test_empty_usage_is_not_an_anchor() -> None:
    msg = history(assistant("y", usage={"inputTokens": 0, "outputTokens": 0}))[0]
    assert usage_tokens(msg, MODEL, {}) is None


def test_a_usage_that_counts_no_prompt_is_not_an_anchor() -> None:
    """An answer cut off before the provider reported its input records its output only: that measures the
    answer, not the context it was given."""
    for answer_only in ({"outputTokens": 120}, {"inputTokens": 0, "outputTokens": 120, "totalTokens": 120}):
        msg = history(assistant("y", usage=answer_only))[0]
        assert usage_tokens(msg, MODEL, {}) is None
    messages = history(
        user("x", tokens=6_000),
        assistant("ok", tokens=5, usage=usage(6_100)),
        user("z", tokens=40),
        assistant("cut", tokens=5, usage={"outputTokens": 120}),
    )
    report = account(messages)
    assert report.usage is not None and (report.usage.message_id, report.total_tokens) == ("m2", 6_145)


def test_a_usage_of_only_a_total_or_only_cache_reads_is_an_anchor() -> None:
    assert usage_tokens(history(assistant("y", usage={"totalTokens": 900}))[0], MODEL, {}) == 900
    cached = {"inputTokens": 0, "cacheReadTokens": 800, "outputTokens": 20}
    assert usage_tokens(history(assistant("y", usage=cached))[0], MODEL, {}) == 820


def test_usage_before_the_newest_boundary_is_stale() -> None:
    messages = history(
        user("x", tokens=100),
        assistant("y", tokens=50, usage=usage(9_000)),
        boundary("b1", through="m2"),
        summary("b1", "## Goal\nsummary", tokens=30),
        user("z", tokens=40),
    )
    report = account(messages)
    assert report.basis == "estimate"
    assert report.total_tokens == framed_summary("## Goal\nsummary") + 40
    assert report.applied_compact_boundary_id == "b1"


def test_usage_in_the_kept_tail_is_stale_too() -> None:
    messages = history(
        user("x", tokens=100),
        assistant("y", tokens=50, usage=usage(9_000)),
        boundary("b1", through="m1"),
        summary("b1", tokens=30),
    )
    report = account(messages)
    assert (report.basis, report.total_tokens) == ("estimate", framed_summary() + 50)


def test_usage_after_the_boundary_counts() -> None:
    messages = history(
        user("x", tokens=100),
        boundary("b1", through="m1"),
        summary("b1", tokens=30),
        user("z", tokens=40),
        assistant("y", tokens=50, usage=usage(1_234)),
        user("w", tokens=6),
    )
    report = account(messages)
    assert report.total_tokens == 1_240


# Sections ------------------------------------------------------------------------------------------------


def test_sections_split_system_summary_messages_tool_results_and_reasoning() -> None:
    messages = history(
        system("rules", tokens=11),
        user("x", tokens=100),
        boundary("b1", through="m2"),
        summary("b1", tokens=30),
        user("z", tokens=40),
        assistant("answer", reasoning="r" * 400, tokens=150),
        call("c1", tokens=20),
        result("c1", tokens=500),
    )
    report = account(messages)
    assert report.sections.as_dict() == {
        "system": 0,
        "summary": framed_summary(),
        "messages": 40 + 50 + 20,
        "toolResults": 500,
        "reasoning": 100,
    }


def test_system_notes_in_the_window_count_as_system() -> None:
    report = account(history(system("rules", tokens=11), user("x", tokens=1)))
    assert report.sections.system == 11


def test_request_system_and_tools_count_only_without_usage() -> None:
    plain = account(history(user("x", tokens=100)), request_tokens=500)
    assert (plain.sections.system, plain.total_tokens) == (500, 600)
    anchored = account(history(user("x", tokens=100), assistant("y", usage=usage(2_000))), request_tokens=500)
    assert anchored.total_tokens == 2_000


def test_pruned_tool_result_costs_its_stub_not_its_stored_estimate() -> None:
    messages = history(call("c1", tokens=10), result("c1", "x" * 40_000, compacted=True))
    report = account(messages)
    stub = pruned_tokens(messages[1])
    assert report.sections.tool_results == stub
    assert stub < 50 and stub == estimate_tokens(
        [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "Read",
                "output": {"type": "text", "value": CLEARED},
            }
        ]
    )


def test_a_result_the_view_drops_for_want_of_its_call_is_not_counted() -> None:
    messages = history(
        user("x", tokens=100), result("ghost", tokens=700), call("c1", tokens=10), result("c1", tokens=5)
    )
    report = account(messages)
    assert (report.sections.tool_results, report.total_tokens) == (5, 115)


def test_an_empty_message_the_view_hides_is_not_counted() -> None:
    report = account(history(user("x", tokens=100), user("  ", tokens=9), assistant("", tokens=9)))
    assert report.total_tokens == 100


def test_messages_the_model_never_sees_are_not_counted() -> None:
    messages = history(
        user("x", tokens=100),
        user("hidden", tokens=5_000, eligibleForModelContext=False),
        message("user", "ls", tokens=1, runtimeKind="bash_execution", output="a\nb", excludeFromContext=True),
    )
    assert account(messages).total_tokens == 100


def test_bash_execution_counts_its_output() -> None:
    messages = history(message("user", "ls", tokens=1, runtimeKind="bash_execution", output="x" * 400))
    assert account(messages).total_tokens == sent(messages) > 100


def test_report_serialises_to_camel_case() -> None:
    report = account(history(user("x", tokens=100), assistant("y", tokens=5, usage=usage(500))))
    assert report.as_dict() == {
        "model": MODEL,
        "window": {"tokens": 10_000, "source": "model_server", "notes": []},
        "sections": {"system": 0, "summary": 0, "messages": 105, "toolResults": 0, "reasoning": 0},
        "estimatedTokens": 105,
        "totalTokens": 500,
        "basis": "usage",
        "usage": {"messageId": "m2", "tokens": 500},
        "tokensAfterUsage": 0,
        "thresholdTokens": 8_000,
        "remainingTokens": 9_500,
        "compactionDue": False,
        "reason": "500 tokens are below the threshold of 8000",
        "appliedCompactBoundaryId": None,
        "maxOutputTokens": None,
        "cache": {
            "lastCall": {
                "messageId": "m2",
                "inputTokens": 490,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
                "cachedShare": 0.0,
            },
            "liveHistory": {
                "messageId": None,
                "inputTokens": 490,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
                "cachedShare": 0.0,
            },
            "compactionInvalidatesTokens": 105,
            "nextRequest": None,
        },
    }


def test_the_report_gives_the_cached_share_of_the_last_calls_from_stored_usage() -> None:
    cached = {"inputTokens": 100, "cacheReadTokens": 800, "cacheWriteTokens": 100, "outputTokens": 50}
    messages = history(
        user("x", tokens=100),
        assistant("y", tokens=5, usage={"inputTokens": 1000, "outputTokens": 50}),
        user("z", tokens=10),
        assistant("w", tokens=5, usage=cached),
    )
    cache = account(messages).as_dict()["cache"]
    assert cache["lastCall"] == {
        "messageId": "m4",
        "inputTokens": 100,
        "cacheReadTokens": 800,
        "cacheWriteTokens": 100,
        "cachedShare": 0.8,
    }
    assert cache["liveHistory"]["cacheReadTokens"] == 800
    assert cache["liveHistory"]["cachedShare"] == round(800 / 2000, 4)


def test_the_cache_figures_leave_out_the_calls_the_applied_compaction_replaced() -> None:
    before = {"inputTokens": 100, "cacheReadTokens": 5_000, "outputTokens": 50}
    after = {"inputTokens": 100, "cacheReadTokens": 300, "outputTokens": 50}
    messages = history(
        user("x", tokens=100),
        assistant("y", tokens=5, usage=before),
        boundary("b1", through="m2"),
        summary("b1", tokens=30),
        user("z", tokens=10),
        assistant("w", tokens=5, usage=after),
    )
    cache = account(messages).as_dict()["cache"]
    assert cache["lastCall"]["messageId"] == "m6"
    assert cache["liveHistory"]["cacheReadTokens"] == 300


# What the model view sends -------------------------------------------------------------------------------


def test_reasoning_from_another_model_is_not_counted_when_the_view_drops_it() -> None:
    messages = history(assistant("answer", reasoning="r" * 400, tokens=150, model="gpt-4o"))
    assert account(messages).sections.reasoning == 0
    as_text = account(messages, ctx=ProjectionContext(provider=PROVIDER, model=MODEL, reasoning_fallback="text"))
    assert as_text.sections.reasoning == 100


def test_reasoning_is_not_counted_when_excluded() -> None:
    messages = history(assistant("answer", reasoning="r" * 400))
    ctx = ProjectionContext(provider=PROVIDER, model=MODEL, include_reasoning=False)
    report = account(messages, ctx=ctx)
    assert (report.sections.reasoning, report.sections.messages) == (0, estimate_tokens("answer"))


def test_a_result_over_the_soft_limit_costs_what_the_view_keeps() -> None:
    messages = history(call("c1", tokens=10), result("c1", "x" * 200_000))
    report = account(messages, ctx=ProjectionContext(model=MODEL, tool_result_soft_limit_chars=4_000))
    assert 1_000 < report.sections.tool_results < 1_100
    unlimited = account(messages, ctx=ProjectionContext(model=MODEL, tool_result_soft_limit_chars=0))
    assert unlimited.sections.tool_results == messages[1].token_estimate


def test_results_left_out_by_the_view_cost_their_placeholder() -> None:
    messages = history(call("c1", tokens=10), result("c1", "x" * 20_000))
    report = account(messages, ctx=ProjectionContext(model=MODEL, include_tool_results=False))
    assert report.sections.tool_results < 40


def test_bash_output_is_cut_like_a_tool_result() -> None:
    bash = message("user", "cat log", tokens=2, runtimeKind="bash_execution", output="x" * 40_000)
    ctx = ProjectionContext(model=MODEL, tool_result_soft_limit_chars=400)
    report = account(history(bash), ctx=ctx)
    assert report.total_tokens == sent(history(bash), ctx) < 150


def test_ui_only_records_are_not_counted() -> None:
    messages = history(
        user("x", tokens=10),
        message("system", "switched to build", tokens=500, runtimeKind="agent_switch_note"),
        message("user", "card", tokens=500, runtimeKind="custom", customType="card", displayOnly=True),
    )
    assert account(messages).total_tokens == 10


def test_apply_compact_boundary_off_counts_the_whole_history_the_view_then_sends() -> None:
    messages = history(
        user("x", tokens=100),
        assistant("y", tokens=50, usage=usage(9_000)),
        boundary("b1", through="m2"),
        summary("b1", tokens=30),
        user("z", tokens=40),
    )
    report = account(messages, ctx=ProjectionContext(provider=PROVIDER, model=MODEL, apply_compact_boundary=False))
    assert report.applied_compact_boundary_id is None
    assert report.usage is not None and (report.usage.message_id, report.total_tokens) == ("m2", 9_040)


def test_a_view_given_by_the_caller_is_counted_as_the_one_built_here() -> None:
    messages = history(user("x", tokens=100), call("c1", tokens=10), result("c1", "x" * 9_000))
    ctx = ProjectionContext(model=MODEL, tool_result_soft_limit_chars=400)
    assert account(messages, ctx=ctx, view=project_model(messages, ctx)) == account(messages, ctx=ctx)


def test_agent_switch_marked_as_reminder_and_reminders_count_as_system_when_injected() -> None:
    messages = history(
        user("x", tokens=10),
        message("system", "now in build mode", tokens=7, runtimeKind="agent_switch_note", tags=["reminder"]),
        message("system", "remember the tests", tokens=5, runtimeKind="runtime_reminder"),
    )
    framed = estimate_tokens(reminder_frame("now in build mode")) + estimate_tokens(
        reminder_frame("remember the tests")
    )
    assert account(messages).sections.system == framed
    quiet = account(messages, ctx=ProjectionContext(model=MODEL, inject_runtime_reminder=False))
    assert quiet.sections.system == 0
