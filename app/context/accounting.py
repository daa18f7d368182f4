"""How many tokens a session's model context holds, by section, against its window.

The count is the last valid provider usage after the newest compaction plus the stored write-time estimates
of every message after it; with no such usage, the estimates alone (plus the request's own system text and
tools, which are not stored). A provider's count is exact for what it saw, so it replaces the estimate
wherever it exists. Per-section figures are always estimates: no provider reports a breakdown.

Pure: engine messages, a window and a policy in, a serialisable report out. Never re-estimates whole
history at read time beyond the small corrections the model view makes (stubs, bash output).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from app.context.config import ThresholdPolicy
from app.context.history_window import HistoryWindow, history_window
from app.context.window import ContextWindow
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.tokens import estimate_tokens

PRUNED_TOOL_RESULT_TEXT = "[Old tool result content cleared]"
"""What the model view sends instead of a pruned result (DESIGN section 4, rule 3)."""

UNUSABLE_FINISH_REASONS: frozenset[str] = frozenset({"error", "aborted"})
"""An errored or aborted answer's usage may count a request that never completed, or none at all."""

Section = Literal["system", "summary", "messages", "tool_results", "reasoning"]
Basis = Literal["usage", "estimate"]


@dataclass(frozen=True, slots=True)
class TokenSections:
    system: int = 0
    summary: int = 0
    messages: int = 0
    tool_results: int = 0
    reasoning: int = 0

    @property
    def total(self) -> int:
        return self.system + self.summary + self.messages + self.tool_results + self.reasoning

    def as_dict(self) -> dict[str, int]:
        return {
            "system": self.system,
            "summary": self.summary,
            "messages": self.messages,
            "toolResults": self.tool_results,
            "reasoning": self.reasoning,
        }


@dataclass(frozen=True, slots=True)
class UsageAnchor:
    message_id: str
    seq: int
    tokens: int


@dataclass(frozen=True, slots=True)
class ContextReport:
    model: str | None
    window: ContextWindow
    sections: TokenSections
    """Estimated tokens per section of everything the model view sends."""
    total_tokens: int
    """The count compaction is judged on: usage plus later estimates, or estimates alone."""
    basis: Basis
    usage: UsageAnchor | None
    tokens_after_usage: int
    threshold_tokens: int | None
    compaction_due: bool
    reason: str
    applied_compact_boundary_id: str | None

    @property
    def estimated_tokens(self) -> int:
        return self.sections.total

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``GET /sessions/{id}/context`` and of ``/chat``'s ``context`` (camelCase)."""
        window = self.window.tokens
        return {
            "model": self.model,
            "window": self.window.as_dict(),
            "sections": self.sections.as_dict(),
            "estimatedTokens": self.estimated_tokens,
            "totalTokens": self.total_tokens,
            "basis": self.basis,
            "usage": None if self.usage is None else {"messageId": self.usage.message_id, "tokens": self.usage.tokens},
            "tokensAfterUsage": self.tokens_after_usage,
            "thresholdTokens": self.threshold_tokens,
            "remainingTokens": None if window is None else window - self.total_tokens,
            "compactionDue": self.compaction_due,
            "reason": self.reason,
            "appliedCompactBoundaryId": self.applied_compact_boundary_id,
        }


def compaction_threshold(window_tokens: int, policy: ThresholdPolicy, max_output_tokens: int | None = None) -> int:
    """min(window * ratio, window - reserve); see ``ThresholdPolicy`` for why."""
    if policy.threshold_tokens is not None:
        by_share = min(policy.threshold_tokens, window_tokens)
    else:
        by_share = math.floor(window_tokens * policy.ratio)
    reserve = max_output_tokens if max_output_tokens is not None else policy.reserved_output_tokens
    if not reserve or reserve <= 0:
        return by_share
    return min(by_share, window_tokens - min(reserve, window_tokens // 2))


def usage_tokens(message: EngineMessage, model: str | None, run_models: Mapping[str, str]) -> int | None:
    """The context size a provider reported on this message, if it is one to trust for ``model``."""
    if message.role != "assistant" or message.metadata.get("synthetic") is True:
        return None
    if message.metadata.get("finishReason") in UNUSABLE_FINISH_REASONS:
        return None
    produced_by = message.metadata.get("model")
    if produced_by is None and message.run_id is not None:
        produced_by = run_models.get(message.run_id)
    # Another model tokenises differently and may have seen another prompt: its count says little here.
    if model is not None and produced_by != model:
        return None
    usage = message.metadata.get("usage")
    if not isinstance(usage, dict):
        return None
    total = usage.get("totalTokens")
    if _count(total) > 0:
        return _count(total)
    # The stored usage keeps cache reads and writes apart from input (DESIGN section 3), so they add up.
    summed = sum(
        _count(usage.get(key)) for key in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
    )
    return summed or None


def account_context(
    messages: Sequence[EngineMessage],
    *,
    window: ContextWindow,
    model: str | None,
    policy: ThresholdPolicy,
    max_output_tokens: int | None = None,
    request_tokens: int = 0,
    run_models: Mapping[str, str] | None = None,
) -> ContextReport:
    """Count a session's model context against ``window``.

    ``messages``: the session's engine messages (or a suffix holding the newest compaction); the window
    after the newest compaction is taken here. ``request_tokens``: system text and tool schemas sent with
    the request but not stored, counted only when no provider usage already includes them.
    ``run_models``: model id per run id, for assistant messages that do not name their model.
    """
    context = history_window(messages)
    sent = [m for m in context.messages if sent_to_model(m)]
    sections = _sections(sent, request_tokens)
    anchor = _anchor(context, sent, model, run_models or {})
    if anchor is None:
        total, after = sections.total, sections.total
    else:
        after = sum(model_tokens(m) for m in sent if m.seq > anchor.seq)
        total = anchor.tokens + after
    threshold, due, reason = _decision(window, total, policy, max_output_tokens)
    return ContextReport(
        model=model,
        window=window,
        sections=sections,
        total_tokens=total,
        basis="estimate" if anchor is None else "usage",
        usage=anchor,
        tokens_after_usage=after,
        threshold_tokens=threshold,
        compaction_due=due,
        reason=reason,
        applied_compact_boundary_id=context.compaction.boundary.id if context.compaction else None,
    )


def _decision(
    window: ContextWindow, total: int, policy: ThresholdPolicy, max_output_tokens: int | None
) -> tuple[int | None, bool, str]:
    if window.tokens is None:
        return None, False, "no context window is known, so compaction is never proposed"
    threshold = compaction_threshold(window.tokens, policy, max_output_tokens)
    if total >= threshold:
        return threshold, True, f"{total} tokens reach the threshold of {threshold}"
    return threshold, False, f"{total} tokens are below the threshold of {threshold}"


def _anchor(
    context: HistoryWindow, sent: Sequence[EngineMessage], model: str | None, run_models: Mapping[str, str]
) -> UsageAnchor | None:
    # Usage recorded before the newest boundary counted the history that compaction removed: stale.
    after = context.boundary_seq if context.boundary_seq is not None else -math.inf
    for message in sorted(sent, key=lambda m: m.seq, reverse=True):
        if message.seq <= after:
            continue
        tokens = usage_tokens(message, model, run_models)
        if tokens is not None:
            return UsageAnchor(message.id, message.seq, tokens)
    return None


def sent_to_model(message: EngineMessage) -> bool:
    if message.metadata.get("eligibleForModelContext") is False:
        return False
    if message.kind is Kind.BASH_EXECUTION and message.metadata.get("excludeFromContext") is True:
        return False
    return message.kind is not Kind.COMPACT_BOUNDARY


def _sections(sent: Sequence[EngineMessage], request_tokens: int) -> TokenSections:
    totals: dict[Section, int] = {
        "system": max(request_tokens, 0),
        "summary": 0,
        "messages": 0,
        "tool_results": 0,
        "reasoning": 0,
    }
    for message in sent:
        tokens = model_tokens(message)
        section = _section(message.kind)
        if section == "messages":
            reasoning = min(_reasoning_tokens(message), tokens)
            totals["reasoning"] += reasoning
            tokens -= reasoning
        totals[section] += tokens
    return TokenSections(**totals)


def _section(kind: Kind) -> Section:
    match kind:
        case Kind.SYSTEM_NOTE | Kind.RUNTIME_REMINDER | Kind.AGENT_SWITCH_NOTE:
            return "system"
        case Kind.COMPACT_SUMMARY | Kind.HANDOFF_SUMMARY | Kind.BRANCH_SUMMARY:
            return "summary"
        case Kind.TOOL_RESULT | Kind.TOOL_APPROVAL_RESPONSE:
            return "tool_results"
        case Kind.ASSISTANT_REASONING:
            return "reasoning"
        case (
            Kind.USER_INPUT
            | Kind.ASSISTANT_TEXT
            | Kind.TOOL_CALL
            | Kind.TOOL_APPROVAL_REQUEST
            | Kind.BASH_EXECUTION
            | Kind.CUSTOM
            | Kind.COMPACT_BOUNDARY
        ):
            return "messages"
        case _:
            assert_never(kind)


def model_tokens(message: EngineMessage) -> int:
    """The stored estimate, corrected where the model view sends something other than the content."""
    if message.kind is Kind.TOOL_RESULT and message.metadata.get("compactedAt"):
        return pruned_tokens(message)
    if message.kind is Kind.BASH_EXECUTION:
        output = message.metadata.get("output")
        return message.token_estimate + (estimate_tokens(output) if isinstance(output, str) else 0)
    return message.token_estimate


def pruned_tokens(message: EngineMessage) -> int:
    """What a tool result costs once pruned: one stub per result part."""
    if isinstance(message.content, str):
        return estimate_tokens(PRUNED_TOOL_RESULT_TEXT)
    stubs = [
        {
            "type": "tool-result",
            "toolCallId": part.get("toolCallId", ""),
            "toolName": part.get("toolName", ""),
            "output": {"type": "text", "value": PRUNED_TOOL_RESULT_TEXT},
        }
        if part.get("type") == "tool-result"
        else part
        for part in message.content
    ]
    return estimate_tokens(stubs)


def _reasoning_tokens(message: EngineMessage) -> int:
    if isinstance(message.content, str):
        return 0
    return estimate_tokens([part for part in message.content if part.get("type") == "reasoning"])


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value)
