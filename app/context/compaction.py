"""Planning a compaction: what to summarise, what to keep verbatim, and the two messages that record it.

A compaction appends a ``compact_boundary`` (role system, naming the last summarised message in
``compactThroughMessageId``) and its ``compact_summary`` (role system, ``summaryForBoundaryId``); nothing
is deleted or rewritten. The kept tail (the messages after the summarised part) is sent verbatim after the
summary, and it never starts between a tool call and its result: a result whose call was summarised away is
the "unexpected tool_use_id" error, a call whose result was is the "tool_use without tool_result" one.

Pure: engine messages, a policy and a summary in; the messages to write out. The store writes them
atomically; ids come from the caller, so a retried request can be made idempotent.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.context.accounting import DEFAULT_CONTEXT, model_costs
from app.context.config import TailPolicy
from app.context.errors import CompactionRefused
from app.engine.kinds import Kind, Role
from app.engine.message import EngineMessage
from app.engine.persisted import Content
from app.engine.tokens import estimate_tokens
from app.projections.compact import project_compact
from app.projections.live_history import Compaction, live_history
from app.projections.plain_text import plain_text
from app.projections.types import ProjectedMessage, ProjectionContext

BOUNDARY_TEXT = "Conversation compacted"
Trigger = Literal["manual", "auto"]
SummarySource = Literal["caller", "summarizer"]


@dataclass(frozen=True, slots=True)
class MessageToWrite:
    """A message for the store to append, in the shape of ``POST /sessions/{id}/messages``."""

    id: str
    role: Role
    content: Content
    metadata: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "content": self.content, "metadata": self.metadata}


@dataclass(frozen=True, slots=True)
class CompactionSelection:
    """What a new summary must cover, and what stays verbatim."""

    previous: Compaction | None
    previous_summary: str | None
    """The current summary's text: the summariser updates it rather than starting over."""
    to_summarize: tuple[EngineMessage, ...]
    """The messages the new summary covers, by seq, without the previous summary (given apart)."""
    kept_tail: tuple[EngineMessage, ...]
    through_message_id: str
    tokens_before: int
    """Estimated tokens the model view sends now (summary, messages, tail)."""
    kept_tokens: int


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    boundary: MessageToWrite
    summary: MessageToWrite
    selection: CompactionSelection
    tokens_after: int
    """Estimated tokens the model view sends right after the compaction: the summary plus the tail."""

    @property
    def messages(self) -> tuple[MessageToWrite, MessageToWrite]:
        """In write order: the boundary, then its summary."""
        return (self.boundary, self.summary)


def select_compaction(
    messages: Sequence[EngineMessage],
    *,
    policy: TailPolicy,
    window_tokens: int | None = None,
    through_message_id: str | None = None,
    ctx: ProjectionContext = DEFAULT_CONTEXT,
) -> CompactionSelection:
    """Split the live history into the part to summarise and the kept tail.

    With ``through_message_id`` (a caller who wrote its own summary says what it covers) the cut is exactly
    there, and refused if it would split a tool call from its result: moving it would make the summary claim
    less or more than it does. Otherwise the tail follows ``policy`` and moves to the nearest cut that keeps
    every call with its result, preferring to keep more. Token costs are what the model view sends under
    ``ctx``; ``window_tokens`` caps the tail at ``policy.max_window_fraction`` of the window.
    """
    live = live_history(messages)
    previous = live.compaction
    body = [m for m in live.messages if previous is None or m is not previous.summary]
    if not body:
        raise CompactionRefused("nothing_to_compact", "there are no messages after the last compaction")
    splits = _splitting_cuts(body)
    costs = model_costs(messages, ctx)
    tokens = [costs.get(m.id, 0) for m in body]
    if through_message_id is not None:
        cut = _explicit_cut(body, splits, through_message_id)
    else:
        cut = _policy_cut(body, splits, tokens, _tail_budget(policy, window_tokens), policy.max_user_turns)
    summary_tokens = costs.get(previous.summary.id, 0) if previous else 0
    return CompactionSelection(
        previous=previous,
        previous_summary=plain_text(previous.summary.content).strip() if previous else None,
        to_summarize=tuple(body[:cut]),
        kept_tail=tuple(body[cut:]),
        through_message_id=body[cut - 1].id,
        tokens_before=summary_tokens + sum(tokens),
        kept_tokens=sum(tokens[cut:]),
    )


def compact_transcript(
    selection: CompactionSelection, ctx: ProjectionContext = DEFAULT_CONTEXT
) -> list[ProjectedMessage]:
    """What the summariser reads: the compact view of the messages to summarise (tool outputs cut, media
    as stubs, no reminders), without the previous summary, which goes to the summariser apart so that it
    is updated rather than summarised as if it were conversation."""
    return project_compact(selection.to_summarize, ctx).messages


def build_compaction(
    selection: CompactionSelection,
    summary: str,
    *,
    boundary_id: str,
    summary_id: str,
    trigger: Trigger = "manual",
    summary_source: SummarySource = "caller",
    summarizer_model: str | None = None,
    summarizer_calls: int = 0,
) -> CompactionPlan:
    """The boundary and summary to write; an empty or whitespace-only summary is refused."""
    text = summary.strip()
    if not text:
        raise CompactionRefused(
            "empty_summary",
            "the summary is empty; a compaction without a summary would drop the history it replaces",
        )
    summary_tokens = estimate_tokens(text)
    record: dict[str, Any] = {
        "trigger": trigger,
        "summarySource": summary_source,
        "summarizedMessageCount": len(selection.to_summarize),
        "keptMessageCount": len(selection.kept_tail),
        "tokensBefore": selection.tokens_before,
        # A prefix cache is lost from the first byte that changes: the summary replaces all of it.
        "cacheInvalidatedTokens": selection.tokens_before,
        "keptTokens": selection.kept_tokens,
        "summaryTokens": summary_tokens,
        "previousBoundaryId": selection.previous.boundary.id if selection.previous else None,
    }
    if _splits_turn(selection):
        record["splitTurn"] = True
    if summarizer_model is not None:
        record["summarizerModel"] = summarizer_model
    if summarizer_calls > 1:
        record["summarizerCalls"] = summarizer_calls
    boundary = MessageToWrite(
        id=boundary_id,
        role="system",
        content=BOUNDARY_TEXT,
        metadata={
            "runtimeKind": Kind.COMPACT_BOUNDARY.value,
            "compactThroughMessageId": selection.through_message_id,
            "compaction": record,
        },
    )
    summary_message = MessageToWrite(
        id=summary_id,
        role="system",
        content=text,
        metadata={"runtimeKind": Kind.COMPACT_SUMMARY.value, "summaryForBoundaryId": boundary_id},
    )
    return CompactionPlan(boundary, summary_message, selection, summary_tokens + selection.kept_tokens)


def _splits_turn(selection: CompactionSelection) -> bool:
    """Whether the summary takes in the request still being worked on: the user's newest message is summarised
    and the turn it opened has not ended with an answer (the kept tail goes on with it, or it is all there is).
    The model view then frames the summary as holding that request, not as history to leave alone."""
    summarised, kept = selection.to_summarize, selection.kept_tail
    if not any(m.kind is Kind.USER_INPUT for m in summarised) or any(m.kind is Kind.USER_INPUT for m in kept):
        return False
    return bool(kept) or summarised[-1].role != "assistant"


def _tail_budget(policy: TailPolicy, window_tokens: int | None) -> int:
    if window_tokens is None:
        return policy.max_tokens
    return min(policy.max_tokens, math.floor(window_tokens * policy.max_window_fraction))


def _explicit_cut(body: Sequence[EngineMessage], splits: Sequence[bool], through_id: str) -> int:
    index = next((i for i, m in enumerate(body) if m.id == through_id), None)
    if index is None:
        raise CompactionRefused(
            "unknown_through_message",
            f"message {through_id!r} is not in the history after the last compaction",
        )
    cut = index + 1
    if not _valid_cut(body, splits, cut):
        raise CompactionRefused(
            "through_splits_tool_pair",
            f"compacting through {through_id!r} would separate a tool call from its result",
        )
    return cut


def _policy_cut(
    body: Sequence[EngineMessage], splits: Sequence[bool], costs: Sequence[int], budget: int, max_turns: int | None
) -> int:
    start, used, turns = len(body), 0, 0
    for index in range(len(body) - 1, -1, -1):
        if max_turns is not None and turns >= max_turns:
            break
        message, cost = body[index], costs[index]
        if used + cost > budget:
            break
        used += cost
        turns += message.kind is Kind.USER_INPUT
        start = index
    if start == 0:
        # Everything fits: keep only the latest user turn, so a requested compaction still compacts.
        start = max((i for i, m in enumerate(body) if m.kind is Kind.USER_INPUT), default=0)
    for cut in range(start, 0, -1):
        if _valid_cut(body, splits, cut):
            return cut
    # No valid cut keeps more: keep less.
    found = next((cut for cut in range(max(start, 1), len(body) + 1) if _valid_cut(body, splits, cut)), None)
    if found is None:
        raise CompactionRefused("nothing_to_compact", "every cut would separate a running tool call from its result")
    return found


def _valid_cut(body: Sequence[EngineMessage], splits: Sequence[bool], cut: int) -> bool:
    """Summarise ``body[:cut]``, keep ``body[cut:]``: at least one message summarised, no pair split,
    and the tail never opens on a tool message (a result with nothing before it to answer)."""
    if not 0 < cut <= len(body):
        return False
    if cut < len(body) and body[cut].role == "tool":
        return False
    return not splits[cut]


def _splitting_cuts(body: Sequence[EngineMessage]) -> list[bool]:
    """For each cut 0..n, whether it falls inside a call's span (from the call to its last result or
    approval). Each result belongs to the newest call with its id before it, so an id a runtime reused
    in another turn makes two short spans, not one that pins the whole history. The newest call of an id with
    no result after it and no user prompt since is still running: its result will arrive after any boundary
    and must find its call, so its span runs to the end."""
    spans: list[list[int]] = []
    answered: set[int] = set()
    open_span: dict[str, int] = {}
    call_of_approval: dict[str, str] = {}
    last_prompt = -1
    for index, message in enumerate(body):
        if message.kind is Kind.USER_INPUT:
            last_prompt = index
        for part in _parts(message):
            kind = part.get("type")
            if kind == "tool-approval-request":
                call_of_approval[str(part.get("approvalId"))] = str(part.get("toolCallId"))
            call_id = part.get("toolCallId")
            if call_id is None and kind == "tool-approval-response":
                call_id = call_of_approval.get(str(part.get("approvalId")))
            if call_id is None:
                continue
            if kind == "tool-call":
                open_span[str(call_id)] = len(spans)
                spans.append([index, index])
            elif str(call_id) in open_span:
                span = open_span[str(call_id)]
                spans[span][1] = index
                if kind == "tool-result":
                    answered.add(span)
    for span in open_span.values():
        if span not in answered and spans[span][0] > last_prompt:
            spans[span][1] = len(body)
    # A cut c splits a span (first, last) when first < c <= last: count open spans with a difference array.
    change = [0] * (len(body) + 2)
    for first, last in spans:
        if last > first:
            change[first + 1] += 1
            change[last + 1] -= 1
    splits: list[bool] = []
    running = 0
    for cut in range(len(body) + 1):
        running += change[cut]
        splits.append(running > 0)
    return splits


def _parts(message: EngineMessage) -> list[dict[str, Any]]:
    return [] if isinstance(message.content, str) else message.content
