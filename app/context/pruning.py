"""Planning a prune: which old tool results to mark ``compactedAt`` so the model view sends a stub.

Storage keeps every original; the model view replaces each part of a pruned result with "[Old tool result
content cleared]". Walking from the newest message back, the last ``protect_user_turns`` user turns are
never touched, then tool output is kept until ``protect_tool_tokens`` have been seen; older results are
candidates, and they are pruned only when together they save at least ``minimum_savings_tokens`` (a prune
rewrites the prompt prefix and so costs a full prompt-cache miss). Results of protected tools, results
already pruned and messages the model never sees are left alone and not counted.

Pure: engine messages and a policy in, the ids and the saving out; the store sets ``compactedAt``.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.context.accounting import DEFAULT_CONTEXT, model_costs, pruned_tokens
from app.context.config import PrunePolicy
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.live_history import live_history
from app.projections.types import ProjectionContext


@dataclass(frozen=True, slots=True)
class PrunePlan:
    message_ids: tuple[str, ...]
    """The tool results to mark, oldest first; empty when the saving is below the minimum."""
    tokens_saved: int
    """Estimated tokens the model view sends fewer once they are marked (zero when nothing is pruned)."""
    candidate_tokens_saved: int
    """What pruning every candidate would save, reported even when it is below the minimum."""
    protected_tool_tokens: int
    """Tool output kept verbatim outside the protected turns (at most about ``protect_tool_tokens``)."""
    reason: str
    cache_invalidated_tokens: int = 0
    """What the provider's cache holds that marking the candidates would invalidate: everything the model view
    sends from the first of them on (a prefix cache is lost from the first byte that changes)."""

    @property
    def applied(self) -> bool:
        return bool(self.message_ids)

    def as_dict(self) -> dict[str, Any]:
        return {
            "prunedMessageIds": list(self.message_ids),
            "tokensSaved": self.tokens_saved,
            "candidateTokensSaved": self.candidate_tokens_saved,
            "protectedToolTokens": self.protected_tool_tokens,
            "reason": self.reason,
            "cacheInvalidatedTokens": self.cache_invalidated_tokens,
        }


def compacted_at_patch(now: datetime) -> dict[str, str]:
    """The metadata patch the store applies to every pruned message."""
    return {"compactedAt": now.isoformat()}


def plan_prune(
    messages: Sequence[EngineMessage], policy: PrunePolicy, ctx: ProjectionContext = DEFAULT_CONTEXT
) -> PrunePlan:
    """Choose the tool results to prune in the live history (after the newest compaction).

    Costs are what the model view sends for each result under ``ctx`` (a result over the soft limit is
    already cut there), so the saving reported is the saving the model sees.
    """
    live = live_history(messages).messages
    costs = model_costs(messages, ctx)
    turns = 0
    seen = 0
    protected = 0
    candidates: list[tuple[str, int]] = []
    for message in reversed(live):
        if message.kind is Kind.USER_INPUT and message.metadata.get("synthetic") is not True:
            turns += 1
        cost = costs.get(message.id)
        if turns < policy.protect_user_turns or cost is None or not _prunable(message, policy):
            continue
        seen += cost
        # The result that crosses the budget is itself a candidate (opencode's rule): the protected output
        # never exceeds the budget.
        if seen > policy.protect_tool_tokens:
            candidates.append((message.id, max(cost - pruned_tokens(message), 0)))
        else:
            protected += cost
    saving = sum(saved for _, saved in candidates)
    if not candidates:
        return PrunePlan((), 0, 0, protected, "no tool result outside the protected window")
    first = candidates[-1][0]
    start = next(n for n, message in enumerate(live) if message.id == first)
    invalidated = sum(costs.get(message.id, 0) for message in live[start:])
    if saving < policy.minimum_savings_tokens:
        return PrunePlan(
            (),
            0,
            saving,
            protected,
            f"pruning would save {saving} tokens, below the minimum of {policy.minimum_savings_tokens}",
            invalidated,
        )
    ids = tuple(id_ for id_, _ in reversed(candidates))
    return PrunePlan(ids, saving, saving, protected, f"pruned {len(ids)} tool results, {saving} tokens", invalidated)


def _prunable(message: EngineMessage, policy: PrunePolicy) -> bool:
    """A result the view sends (checked by the caller) that is not pruned yet and of no protected tool."""
    if message.kind is not Kind.TOOL_RESULT:
        return False
    if message.metadata.get("compactedAt"):
        return False
    if isinstance(message.content, str):
        return True
    results = [part for part in message.content if part.get("type") == "tool-result"]
    return bool(results) and not any(part.get("toolName") in policy.protected_tool_names for part in results)
