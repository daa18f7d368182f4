"""How many tokens a session's model context holds, by section, against its window.

The count is the last valid provider usage after the newest compaction plus the stored write-time estimates
of every message after it; with no such usage, the estimates alone (plus the request's own system text and
tools, which are not stored). A provider's count is exact for what it saw, so it replaces the estimate
wherever it exists. Per-section figures are always estimates: no provider reports a breakdown.

What is counted is what the model view sends under the request's ``ProjectionContext``, read from the view
itself: a message is counted when the view sends it, in the section of its kind, at what the view sends for
it (a pruned result its stub, a result over the soft limit what is kept, a summary or reminder with its
framing, reasoning only where the view keeps it). A message the view sends as it is stored costs its stored
estimate, so reads never re-count a history; only what the view changed is estimated again.

Pure: engine messages, the model view of them, a window and a policy in, a serialisable report out.
"""

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Literal, assert_never

from app.context.cache_report import CacheReport, CallTally, call_tally
from app.context.config import ThresholdPolicy
from app.context.window import ContextWindow
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.engine.model_ref import ModelRef, model_ref, producer, same_model, target_ref
from app.engine.timestamps import from_iso
from app.engine.tokens import PADDING_BY_FAMILY, estimate_tokens
from app.projections.model import project_model
from app.projections.tool_output import ResultPolicy, result_for_model
from app.projections.types import ProjectedMessage, Projection, ProjectionContext

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
    max_output_tokens: int | None = None
    """The room reserved for the answer: the request's ``maxOutputTokens``, else the model's output limit from
    the catalog, else ``None`` (the configured reserve applies)."""
    cache: CacheReport | None = None

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
            "maxOutputTokens": self.max_output_tokens,
            "cache": None if self.cache is None else self.cache.as_dict(),
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


def usage_tokens(message: EngineMessage, target: ModelRef | str | None, run_models: Mapping[str, object]) -> int | None:
    """The context size a provider reported on this message, if it is one to trust for ``target`` (a model
    reference in any form): not a message kept out of the model's context (its call saw another prompt), nor a
    synthetic, errored or aborted one, nor a summary (its usage counted the request that wrote it). ``target``
    ``None``: any model's. ``run_models`` hold each run's model reference, as stored."""
    if message.role != "assistant" or message.metadata.get("synthetic") is True:
        return None
    if message.metadata.get("eligibleForModelContext") is False or message.kind is Kind.COMPACT_SUMMARY:
        return None
    if message.metadata.get("finishReason") in UNUSABLE_FINISH_REASONS:
        return None
    # Another model tokenises differently and may have seen another prompt: its count says little here.
    target = model_ref(target)
    if target is not None and target.model is not None:
        run_model = run_models.get(message.run_id) if message.run_id is not None else None
        if not same_model(producer(message.metadata, run_model), target):
            return None
    usage = message.metadata.get("usage")
    if not isinstance(usage, dict):
        return None
    # The stored usage keeps cache reads and writes apart from input, so they add up. A usage that counts no
    # prompt (an answer whose stream ended before the provider reported it) measures the answer, not the
    # context: taken as the context's size, it would put a long history at a few hundred tokens.
    # A provider's total may leave the cache reads out (they are billed apart): the larger of it and the parts.
    prompt = sum(_count(usage.get(key)) for key in ("inputTokens", "cacheReadTokens", "cacheWriteTokens"))
    output = _count(usage.get("outputTokens"))
    total = _count(usage.get("totalTokens"))
    if total <= output and not prompt:
        return None
    return max(total, prompt + output)


@dataclass(frozen=True, slots=True)
class SentMessage:
    """One stored message as the model view sends it: its section and what it costs there."""

    message: EngineMessage
    section: Section
    tokens: int
    """Tokens in ``section``, the reasoning apart."""
    reasoning: int
    """Tokens of the reasoning the view sends with it (native, or turned into text)."""

    @property
    def total(self) -> int:
        return self.tokens + self.reasoning


def sent_messages(view: Projection, messages: Sequence[EngineMessage]) -> list[SentMessage]:
    """Each message the model view ``view`` of ``messages`` sends, in the view's order, with its cost: the
    stored estimate when the view sends the stored content as it is, else the estimate of what it sends."""
    return [SentMessage(*each) for each in _costed(view.messages, messages)]


_Costed = tuple[EngineMessage, Section, int, int]
"""``SentMessage``'s fields as a plain tuple: the count reads a whole live history of them on every request."""


def _costed(sent: Sequence[ProjectedMessage], messages: Sequence[EngineMessage]) -> Iterator[_Costed]:
    by_id = {message.id: message for message in reversed(messages)}  # the first given of an id, as the view
    sections = _SECTIONS
    for projected in sent:
        (source_id,) = projected.source_message_ids
        message = by_id[source_id]
        content = projected.content
        tokens = message.token_estimate if content is message.content else estimate_tokens(content)
        if projected.reasoning:
            reasoning = estimate_tokens(list(projected.reasoning))
            yield message, sections[projected.semantic_type], max(tokens - reasoning, 0), reasoning
        else:
            yield message, sections[projected.semantic_type], tokens, 0


def model_costs(messages: Sequence[EngineMessage], ctx: ProjectionContext = DEFAULT_CONTEXT) -> dict[str, int]:
    """What the model view sends for each of ``messages`` under ``ctx``, by message id (a message it does not
    send is absent), with the newest compaction applied: compactions and prunes are planned after it."""
    view = project_model(messages, replace(ctx, apply_compact_boundary=True))
    return {each.message.id: each.total for each in sent_messages(view, messages)}


@dataclass(frozen=True, slots=True)
class Tally:
    """What the count reads of a run of a window's messages and of what the model view sends of them: each
    section's tokens, the reasoning's, the newest usage a provider reported (and the tokens sent after it) and
    the calls' cache figures. Sums and "the newest one", so runs join in order (``+``) into the window's tally:
    a later turn keeps the tally of what comes before its cut and counts only the rest."""

    sections: tuple[int, ...] = (0, 0, 0, 0)
    """Tokens sent in the system, summary, messages and tool-results sections."""
    reasoning: int = 0
    anchor: UsageAnchor | None = None
    after_anchor: int = 0
    """Tokens sent after ``anchor``; all of them without one."""
    calls: CallTally = field(default_factory=CallTally)

    def __add__(self, later: "Tally") -> "Tally":
        anchor: UsageAnchor | None = later.anchor
        after = later.after_anchor
        if anchor is None:
            anchor, after = self.anchor, self.after_anchor + sum(later.sections) + later.reasoning
        sections = tuple(mine + theirs for mine, theirs in zip(self.sections, later.sections, strict=True))
        return Tally(sections, self.reasoning + later.reasoning, anchor, after, self.calls + later.calls)


def stale_through(messages: Sequence[EngineMessage], applied: str | None) -> float:
    """The seq of the applied compaction's boundary: usage recorded up to it counted the history that
    compaction replaced, so it is stale."""
    return next((m.seq for m in messages if m.id == applied), -math.inf) if applied else -math.inf


def tally(
    messages: Sequence[EngineMessage], sent: Sequence[ProjectedMessage], ctx: ProjectionContext, stale: float
) -> Tally:
    """The tally of ``messages`` (a window, or a run of one) and ``sent``, what the model view sends of them;
    ``stale``: ``stale_through`` of the window."""
    # A usage counts whether or not the view sends its message: an answer left empty measured the context too.
    # The calls' cache figures read the same messages (those with a usage), so the window is filtered once.
    candidates = [m for m in messages if "usage" in m.metadata and m.seq > stale]
    anchor = _anchor(candidates, target_ref(ctx.provider, ctx.model), ctx.run_models)
    if anchor is not None:
        anchor = _less_pruned_since(messages, anchor)
    anchor_seq = -math.inf if anchor is None else anchor.seq
    totals = dict.fromkeys(_SECTION_NAMES, 0)
    reasoning = 0
    after_anchor = 0
    # One pass over what the view sends: a whole live history's worth when nothing was kept.
    for message, section, tokens, with_reasoning in _costed(sent, messages):
        totals[section] += tokens
        reasoning += with_reasoning
        if message.seq > anchor_seq:
            after_anchor += tokens + with_reasoning
    calls = call_tally(candidates)
    return Tally(tuple(totals.values()), reasoning, anchor, after_anchor, calls)


def account_context(
    messages: Sequence[EngineMessage],
    *,
    window: ContextWindow,
    policy: ThresholdPolicy,
    ctx: ProjectionContext = DEFAULT_CONTEXT,
    max_output_tokens: int | None = None,
    request_tokens: int = 0,
    view: Projection | None = None,
) -> ContextReport:
    """Count a session's model context for ``ctx.model`` against ``window``.

    ``messages``: the session's engine messages, or the store's slice of them from the live history's start.
    ``ctx``: the projection parameters of the request, so that what is counted is what the model view sends.
    ``view``: the model view of ``messages`` under ``ctx`` when the caller has built it already (``POST
    /chat`` does, for the payload), so that it is not built twice. ``request_tokens``: system text and tool
    schemas sent with the request but not stored, counted only when no provider usage already includes
    them. ``ctx.run_models`` names the model of each run, for assistant messages that do not name theirs.
    """
    if view is None:
        view = project_model(messages, ctx)
    applied = view.diagnostics.applied_compact_boundary_id
    counted = tally(messages, view.messages, ctx, stale_through(messages, applied))
    return context_report(
        counted,
        window=window,
        policy=policy,
        ctx=ctx,
        max_output_tokens=max_output_tokens,
        request_tokens=request_tokens,
        applied=applied,
    )


def context_report(
    counted: Tally,
    *,
    window: ContextWindow,
    policy: ThresholdPolicy,
    ctx: ProjectionContext,
    max_output_tokens: int | None,
    request_tokens: int,
    applied: str | None,
) -> ContextReport:
    """The report of a window's tally (``account_context``'s arguments besides)."""
    target = target_ref(ctx.provider, ctx.model)
    padding = PADDING_BY_FAMILY.get(target.family or "", 1.0) if target is not None else 1.0
    system, summary, sent_messages_, tool_results = counted.sections
    sections = TokenSections(
        system=_padded(max(request_tokens, 0) + system, padding),
        summary=_padded(summary, padding),
        messages=_padded(sent_messages_, padding),
        tool_results=_padded(tool_results, padding),
        reasoning=_padded(counted.reasoning, padding),
    )
    anchor = counted.anchor
    if anchor is None:
        total, after = sections.total, sections.total
    else:
        after = _padded(counted.after_anchor, padding)
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
        applied_compact_boundary_id=applied,
        max_output_tokens=max_output_tokens,
        cache=counted.calls.report(sections.total - sections.system),
    )


def _padded(estimate: int, padding: float) -> int:
    return estimate if padding == 1.0 else math.ceil(estimate * padding)


def _decision(
    window: ContextWindow, total: int, policy: ThresholdPolicy, max_output_tokens: int | None
) -> tuple[int | None, bool, str]:
    if window.tokens is None:
        return None, False, "no context window is known, so compaction is never proposed"
    threshold = compaction_threshold(window.tokens, policy, max_output_tokens)
    if total > window.tokens:
        overflow = f"{total} tokens exceed the window of {window.tokens}: the provider will refuse the request"
        return threshold, True, f"{overflow} until the history is compacted or pruned"
    if total >= threshold:
        return threshold, True, f"{total} tokens reach the threshold of {threshold}"
    return threshold, False, f"{total} tokens are below the threshold of {threshold}"


def _anchor(
    candidates: Sequence[EngineMessage], target: ModelRef | None, run_models: Mapping[str, object]
) -> UsageAnchor | None:
    # Newest first; the sort is stable, so among equal seqs the one given first is tried first.
    for message in sorted(candidates, key=_SEQ, reverse=True):
        tokens = usage_tokens(message, target, run_models)
        if tokens is not None:
            return UsageAnchor(message.id, message.seq, tokens)
    return None


def _less_pruned_since(messages: Sequence[EngineMessage], anchor: UsageAnchor) -> UsageAnchor:
    """The anchor less what results before it, pruned since it was answered, no longer send: its usage
    counted them whole, the next request sends their stubs. (A prune invalidates a kept turn whose cut lies
    after what it marked, so the marked results and the anchor are in the one run tallied.)"""
    answered = next(m.created_at for m in messages if m.id == anchor.message_id)
    saved = 0
    for message in messages:
        if message.seq < anchor.seq and (stamp := message.metadata.get("compactedAt")):
            pruned_at = from_iso(stamp)
            if pruned_at is not None and pruned_at > answered:
                saved += max(message.token_estimate - pruned_tokens(message), 0)
    return replace(anchor, tokens=max(anchor.tokens - saved, 0)) if saved else anchor


def pruned_tokens(message: EngineMessage) -> int:
    """What a tool result costs once pruned: the model view's stub in place of every result part."""
    if isinstance(message.content, str):
        return message.token_estimate
    policy = ResultPolicy(
        compacted=True, include=True, soft_limit=0, message_id=message.id, readable=None, media_style="explain"
    )
    parts = message.content
    return estimate_tokens([result_for_model(p, policy).part if p.get("type") == "tool-result" else p for p in parts])


def _section(kind: Kind) -> Section:
    match kind:
        case (
            Kind.SYSTEM_NOTE
            | Kind.RUNTIME_REMINDER
            | Kind.AGENT_SWITCH_NOTE
            | Kind.MODEL_SWITCH_NOTE
            | Kind.COMPACT_BOUNDARY
        ):
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

_SECTION_NAMES: tuple[Section, ...] = ("system", "summary", "messages", "tool_results")
_SEQ = attrgetter("seq")


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value)
