from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from app.context.accounting import pruned_tokens
from app.context.config import PrunePolicy
from app.context.pruning import compacted_at_patch, plan_prune
from app.engine.message import EngineMessage
from app.engine.persisted import PersistedMessage
from app.projections.types import ProjectionContext
from tests.context.histories import assistant, boundary, call, history, result, summary, user

SMALL = PrunePolicy(protect_user_turns=2, protect_tool_tokens=1_000, minimum_savings_tokens=500)


def exchange(call_id: str, tokens: int, name: str = "Read", **kw: Any) -> list[PersistedMessage]:
    """A call and a result whose output really is ``tokens`` tokens long."""
    return [call(call_id, name, tokens=10), result(call_id, "x" * (4 * tokens), name=name, **kw)]


def recent_turns() -> list[PersistedMessage]:
    """Two user turns with big results: always protected."""
    return [
        user("q1", tokens=10),
        *exchange("p1", 50_000),
        user("q2", tokens=10),
        *exchange("p2", 50_000),
    ]


def saving(messages: Sequence[EngineMessage], ids: Iterable[str]) -> int:
    by_id = {m.id: m for m in messages}
    return sum(by_id[i].token_estimate - pruned_tokens(by_id[i]) for i in ids)


def test_last_two_user_turns_are_never_pruned() -> None:
    messages = history(user("q0", tokens=10), *recent_turns())
    plan = plan_prune(messages, SMALL)
    assert plan.message_ids == ()
    assert plan.reason == "no tool result outside the protected window"


def test_tool_output_within_the_protected_budget_is_kept() -> None:
    messages = history(user("q0"), *exchange("a", 600), *exchange("b", 400), *recent_turns())
    plan = plan_prune(messages, SMALL)
    assert (plan.message_ids, plan.protected_tool_tokens) == ((), 1_000)


def test_the_result_that_crosses_the_budget_and_older_ones_are_pruned() -> None:
    messages = history(
        user("q0"),
        *exchange("a", 700),
        *exchange("b", 600),
        *exchange("c", 500),
        *exchange("d", 400),
        *recent_turns(),
    )
    plan = plan_prune(messages, SMALL)
    # Newest first: d 400 + c 500 = 900 kept; b crosses 1_000, so b and a go. Ids come oldest first.
    assert plan.message_ids == ("m3", "m5")
    assert plan.protected_tool_tokens == 900
    assert plan.tokens_saved == saving(messages, plan.message_ids)
    assert plan.applied


def test_nothing_is_pruned_below_the_minimum_saving_but_the_candidate_saving_is_reported() -> None:
    base = [user("q0"), *exchange("b", 1_000)]
    probe = history(*base, *exchange("a", 10), *recent_turns())
    stub = pruned_tokens(probe[2])
    just_below = history(user("q0"), *exchange("a", 499 + stub), *exchange("b", 1_000), *recent_turns())
    at_minimum = history(user("q0"), *exchange("a", 500 + stub), *exchange("b", 1_000), *recent_turns())
    below = plan_prune(just_below, SMALL)
    assert (below.message_ids, below.tokens_saved, below.candidate_tokens_saved) == ((), 0, 499)
    assert "below the minimum" in below.reason
    at = plan_prune(at_minimum, SMALL)
    assert (at.message_ids, at.tokens_saved) == (("m3",), 500)


def test_protected_tools_are_never_pruned_and_do_not_use_the_budget() -> None:
    messages = history(
        user("q0"),
        *exchange("a", 5_000),
        *exchange("s", 5_000, name="skill"),
        *exchange("b", 1_000),
        *recent_turns(),
    )
    plan = plan_prune(messages, SMALL)
    assert plan.message_ids == ("m3",)


def test_protected_tool_names_are_configurable() -> None:
    messages = history(user("q0"), *exchange("a", 5_000, name="Bash"), *exchange("b", 1_000), *recent_turns())
    policy = PrunePolicy(
        protect_tool_tokens=1_000, minimum_savings_tokens=500, protected_tool_names=frozenset({"Bash"})
    )
    assert plan_prune(messages, policy).message_ids == ()


def test_already_pruned_results_are_skipped_and_not_counted() -> None:
    messages = history(
        user("q0"),
        *exchange("a", 5_000),
        *exchange("old", 90_000, compacted=True),
        *exchange("b", 1_000),
        *recent_turns(),
    )
    plan = plan_prune(messages, SMALL)
    assert plan.message_ids == ("m3",)


def test_results_the_model_never_sees_are_left_alone() -> None:
    messages = history(
        user("q0"), *exchange("a", 5_000, eligibleForModelContext=False), *exchange("b", 1_000), *recent_turns()
    )
    assert plan_prune(messages, SMALL).message_ids == ()


def test_only_results_after_the_newest_compaction_are_considered() -> None:
    messages = history(
        user("q0"),
        *exchange("gone", 90_000),
        boundary("b1", through="m3"),
        summary("b1"),
        user("q1"),
        *exchange("a", 5_000),
        *exchange("b", 1_000),
        *recent_turns(),
    )
    assert plan_prune(messages, SMALL).message_ids == ("m8",)


def test_synthetic_user_messages_do_not_count_as_turns() -> None:
    messages = history(
        user("q0"),
        *exchange("a", 5_000),
        *exchange("b", 1_000),
        user("q1"),
        assistant("ok"),
        user("Continue if you have next steps", synthetic=True),
    )
    assert plan_prune(messages, SMALL).message_ids == ()


def test_default_policy_protects_forty_thousand_and_needs_twenty_thousand() -> None:
    policy, uncut = PrunePolicy(), ProjectionContext(tool_result_soft_limit_chars=0)
    kept = [*exchange("k1", 20_000), *exchange("k2", 20_000)]
    small = history(user("q0"), *exchange("a", 15_000), *kept, *recent_turns())
    large = history(user("q0"), *exchange("a", 25_000), *kept, *recent_turns())
    assert plan_prune(small, policy, uncut).message_ids == ()
    assert plan_prune(large, policy, uncut).message_ids == ("m3",)


def test_plan_serialises_and_the_patch_carries_the_time_given() -> None:
    messages = history(user("q0"), *exchange("a", 5_000), *exchange("b", 1_000), *recent_turns())
    plan = plan_prune(messages, SMALL)
    assert plan.as_dict()["prunedMessageIds"] == ["m3"]
    assert compacted_at_patch(datetime(2026, 4, 8, 10, 0, tzinfo=UTC)) == {"compactedAt": "2026-04-08T10:00:00+00:00"}


def test_costs_are_what_the_model_view_sends_after_its_soft_limit_cut() -> None:
    messages = history(user("q0"), *exchange("a", 5_000), *exchange("b", 1_000), *recent_turns())
    cut_short = plan_prune(messages, SMALL, ProjectionContext(tool_result_soft_limit_chars=400))
    assert cut_short.message_ids == ()
    assert cut_short.candidate_tokens_saved < 500
    assert plan_prune(messages, SMALL, ProjectionContext(tool_result_soft_limit_chars=0)).message_ids == ("m3",)
