"""How many tokens a session's model context holds, by section, against its window.

The count is the last valid provider usage after the newest compaction plus the stored write-time estimates
of every message after it; with no such usage, the estimates alone (plus the request's own system text and
tools, which are not stored). A provider's count is exact for what it saw, so it replaces the estimate
wherever it exists. Per-section figures are always estimates: no provider reports a breakdown.

What is counted is what the model view sends under the request's ``ProjectionContext``: a pruned result
costs its stub, a result over the soft limit what the view keeps, reasoning only when the view keeps it,
reminders only when injected, UI-only records nothing. Only the messages the view changes are re-estimated,
from what they hold; every other message costs its stored estimate, so reads never re-count a history.

Pure: engine messages, a window and a policy in, a serialisable report out.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal, assert_never

from app.context.config import ThresholdPolicy
from app.context.history_window import HistoryWindow, history_window
from app.context.window import ContextWindow
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.tokens import estimate_tokens
from app.projections.model import ASSISTANT_KINDS, marked_as_reminder
from app.projections.reasoning import ReasoningPolicy, reasoning_for_model
from app.projections.tool_output import CLEARED, ResultPolicy, cut, result_for_model
from app.projections.types import ProjectionContext

PRUNED_TOOL_RESULT_TEXT = CLEARED
"""What the model view sends instead of a pruned result (DESIGN section 4, rule 3)."""

DEFAULT_CONTEXT = ProjectionContext()

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
    policy: ThresholdPolicy,
    ctx: ProjectionContext = DEFAULT_CONTEXT,
    max_output_tokens: int | None = None,
    request_tokens: int = 0,
    run_models: Mapping[str, str] | None = None,
) -> ContextReport:
    """Count a session's model context for ``ctx.model`` against ``window``.

    ``messages``: the session's engine messages, or the store's slice from the window start; the window
    after the newest compaction is taken here. ``ctx``: the projection parameters of the request, so that
    what is counted is what the model view sends (pruned stubs, soft-limit cuts, reasoning kept or dropped,
    reminders). ``request_tokens``: system text and tool schemas sent with the request but not stored,
    counted only when no provider usage already includes them. ``run_models``: model id per run id, for
    assistant messages that do not name their model.
    """
    context = history_window(messages)
    sections, candidates = _sections_and_candidates(context, ctx, request_tokens)
    anchor = _anchor(candidates, ctx.model, run_models or {})
    if anchor is None:
        total, after = sections.total, sections.total
    else:
        anchor_seq = anchor.seq
        after = sum(model_tokens(m, ctx) for m in context.messages if m.seq > anchor_seq and sent_to_model(m, ctx))
        total = anchor.tokens + after
    threshold, due, reason = _decision(window, total, policy, max_output_tokens)
    return ContextReport(
        model=ctx.model,
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
    candidates: Sequence[EngineMessage], model: str | None, run_models: Mapping[str, str]
) -> UsageAnchor | None:
    # Newest first; the sort is stable, so among equal seqs the one given first is tried first.
    for message in sorted(candidates, key=_SEQ, reverse=True):
        tokens = usage_tokens(message, model, run_models)
        if tokens is not None:
            return UsageAnchor(message.id, message.seq, tokens)
    return None


def sent_to_model(message: EngineMessage, ctx: ProjectionContext = DEFAULT_CONTEXT) -> bool:
    """Whether the model view sends anything for this message (its cheap drop rules, DESIGN section 4)."""
    if message.metadata.get("eligibleForModelContext") is False:
        return False
    if message.kind in _ALWAYS_SENT:
        # A set lookup first: the match below tries its cases one by one, for every message of a history.
        return True
    match message.kind:
        case Kind.COMPACT_BOUNDARY:
            return False
        case Kind.BASH_EXECUTION:
            return message.metadata.get("excludeFromContext") is not True
        case Kind.CUSTOM:
            return not (
                message.metadata.get("displayOnly") is True or message.metadata.get("excludeFromContext") is True
            )
        case Kind.AGENT_SWITCH_NOTE:
            return ctx.inject_runtime_reminder and marked_as_reminder(message)
        case Kind.RUNTIME_REMINDER:
            return ctx.inject_runtime_reminder
        case (
            Kind.SYSTEM_NOTE
            | Kind.USER_INPUT
            | Kind.ASSISTANT_TEXT
            | Kind.ASSISTANT_REASONING
            | Kind.TOOL_CALL
            | Kind.TOOL_APPROVAL_REQUEST
            | Kind.TOOL_RESULT
            | Kind.TOOL_APPROVAL_RESPONSE
            | Kind.COMPACT_SUMMARY
            | Kind.HANDOFF_SUMMARY
            | Kind.BRANCH_SUMMARY
        ):
            return True
        case _:
            assert_never(message.kind)


def model_tokens(message: EngineMessage, ctx: ProjectionContext = DEFAULT_CONTEXT) -> int:
    """What the model view's version of the message costs: the stored estimate, corrected where the view
    sends something else (a pruned stub, a soft-limit cut, bash output, reasoning dropped)."""
    return sum(_costs(message, ctx))


def pruned_tokens(message: EngineMessage) -> int:
    """What a tool result costs once pruned: one stub per result part."""
    return _result_tokens(message, DEFAULT_CONTEXT, compacted=True)


def _sections_and_candidates(
    context: HistoryWindow, ctx: ProjectionContext, request_tokens: int
) -> tuple[TokenSections, list[EngineMessage]]:
    """Tokens per section of what the view sends, and the usage candidates (sent messages after the boundary
    that hold a usage record), in window order: one pass over the window.

    The common cases are costed inline exactly as ``_costs`` costs them (a stored estimate, an assistant
    message without reasoning, a result that cannot be cut): a call per message was most of what a long
    history cost here.
    """
    # Usage recorded before the newest boundary counted the history that compaction removed: stale.
    stale_through = context.boundary_seq if context.boundary_seq is not None else -math.inf
    limit = ctx.tool_result_soft_limit_chars
    results_whole = ctx.include_tool_results
    totals: dict[Section, int] = {
        "system": max(request_tokens, 0),
        "summary": 0,
        "messages": 0,
        "tool_results": 0,
        "reasoning": 0,
    }
    reasoning = 0
    candidates: list[EngineMessage] = []
    for message in context.messages:
        kind = message.kind
        metadata = message.metadata
        if kind in _ALWAYS_SENT:
            if metadata.get("eligibleForModelContext") is False:
                continue
        elif not sent_to_model(message, ctx):
            continue
        if "usage" in metadata and message.seq > stale_through:
            candidates.append(message)
        estimate = message.token_estimate
        if kind in _STORED_COST:
            totals[_SECTIONS[kind]] += estimate
        elif kind in ASSISTANT_KINDS and (
            isinstance(content := message.content, str) or (len(content) == 1 and content[0].get("type") != "reasoning")
        ):
            # A single text or tool-call part is the common answer; several parts are left to ``_costs``.
            totals["messages"] += estimate
        elif (
            kind in _TOOL_RESULT
            and results_whole
            and (limit <= 0 or estimate * 4 <= limit)
            and not metadata.get("compactedAt")
        ):
            totals["tool_results"] += estimate
        else:
            tokens, extra = _costs(message, ctx)
            totals[_SECTIONS[kind]] += tokens
            reasoning += extra
    totals["reasoning"] = reasoning
    return TokenSections(**totals), candidates


def _section(kind: Kind) -> Section:
    match kind:
        case Kind.SYSTEM_NOTE | Kind.RUNTIME_REMINDER | Kind.AGENT_SWITCH_NOTE | Kind.COMPACT_BOUNDARY:
            return "system"
        case Kind.COMPACT_SUMMARY | Kind.HANDOFF_SUMMARY | Kind.BRANCH_SUMMARY:
            return "summary"
        case Kind.TOOL_RESULT | Kind.TOOL_APPROVAL_RESPONSE:
            return "tool_results"
        case (
            Kind.USER_INPUT
            | Kind.ASSISTANT_TEXT
            | Kind.ASSISTANT_REASONING
            | Kind.TOOL_CALL
            | Kind.TOOL_APPROVAL_REQUEST
            | Kind.BASH_EXECUTION
            | Kind.CUSTOM
        ):
            return "messages"
        case _:
            assert_never(kind)


_SECTIONS: dict[Kind, Section] = {kind: _section(kind) for kind in Kind}
"""``_section`` as a table, looked up once per message of a history."""

_ALWAYS_SENT: frozenset[Kind] = frozenset(
    {
        Kind.SYSTEM_NOTE,
        Kind.USER_INPUT,
        Kind.ASSISTANT_TEXT,
        Kind.ASSISTANT_REASONING,
        Kind.TOOL_CALL,
        Kind.TOOL_APPROVAL_REQUEST,
        Kind.TOOL_RESULT,
        Kind.TOOL_APPROVAL_RESPONSE,
        Kind.COMPACT_SUMMARY,
        Kind.HANDOFF_SUMMARY,
        Kind.BRANCH_SUMMARY,
    }
)
"""The kinds ``sent_to_model`` always sends once eligible (its last case)."""


_STORED_COST = frozenset(Kind) - ASSISTANT_KINDS - {Kind.TOOL_RESULT, Kind.BASH_EXECUTION}
"""The kinds ``_costs`` counts at their stored estimate (its last case)."""

_SEQ = attrgetter("seq")

_TOOL_RESULT = frozenset({Kind.TOOL_RESULT})
"""A set, for a loop over a whole window: reading an enum member costs a descriptor call each time."""


def _costs(message: EngineMessage, ctx: ProjectionContext) -> tuple[int, int]:
    """(tokens in the message's own section, tokens of its reasoning) as the model view sends it.

    Only messages the view changes are re-estimated, and only from what they hold: reads never re-count a
    whole history.
    """
    kind = message.kind
    if kind in _STORED_COST:
        # A set lookup before the match, whose cases each read an enum member, for every message.
        return message.token_estimate, 0
    if kind in ASSISTANT_KINDS:
        return _assistant_tokens(message, ctx)
    match kind:
        case Kind.TOOL_RESULT:
            return _result_tokens(message, ctx, compacted=bool(message.metadata.get("compactedAt"))), 0
        case Kind.BASH_EXECUTION:
            output = message.metadata.get("output")
            kept, _ = cut(output if isinstance(output, str) else "", ctx.tool_result_soft_limit_chars)
            return message.token_estimate + estimate_tokens(kept), 0
        case Kind.ASSISTANT_TEXT | Kind.ASSISTANT_REASONING | Kind.TOOL_CALL | Kind.TOOL_APPROVAL_REQUEST:
            return _assistant_tokens(message, ctx)
        case _:
            return message.token_estimate, 0


def _result_tokens(message: EngineMessage, ctx: ProjectionContext, *, compacted: bool) -> int:
    if isinstance(message.content, str):
        return message.token_estimate
    limit = ctx.tool_result_soft_limit_chars
    # A text of N characters has at least N UTF-8 bytes, so an estimate within limit/4 cannot be cut.
    may_be_cut = limit > 0 and message.token_estimate * 4 > limit
    if not (compacted or may_be_cut or not ctx.include_tool_results):
        return message.token_estimate
    policy = ResultPolicy(
        compacted=compacted,
        include=ctx.include_tool_results,
        soft_limit=limit,
        message_id=message.id,
        readable=ctx.readable_media,
        media_style="explain",
    )
    parts = [
        result_for_model(part, policy).part if part.get("type") == "tool-result" else part for part in message.content
    ]
    return min(estimate_tokens(parts), message.token_estimate) if not compacted else estimate_tokens(parts)


def _assistant_tokens(message: EngineMessage, ctx: ProjectionContext) -> tuple[int, int]:
    content = message.content
    if isinstance(content, str) or not any(part.get("type") == "reasoning" for part in content):
        return message.token_estimate, 0
    others = [part for part in content if part.get("type") != "reasoning"]
    reasoning = [part for part in content if part.get("type") == "reasoning"]
    own = max(message.token_estimate - estimate_tokens(reasoning), 0)
    policy = ReasoningPolicy(
        include=ctx.include_reasoning, fallback=ctx.reasoning_fallback, provider=ctx.provider, model=ctx.model
    )
    sent, _ = reasoning_for_model(content, message.metadata, policy)
    # Non-reasoning parts pass through unchanged, so what is left is the reasoning as sent (native or text).
    return own, max(estimate_tokens(sent) - estimate_tokens(others), 0)


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value)
