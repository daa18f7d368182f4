"""The live history: the messages from the newest complete compaction on, which the model view starts from.

A boundary is *complete* when a ``compact_summary`` names it (``metadata.summaryForBoundaryId``, else
``metadata.compactBoundaryId``, or for a summary opencode wrote, ``metadata.parentID``: the compaction
request it answers) with non-blank text and is not flagged ``eligibleForModelContext: false``; only the
newest complete boundary applies, so a failed or running compaction never replaces history. The live
history is that compaction's summary, its kept tail (the messages after ``metadata.compactThroughMessageId``,
when the boundary names one that precedes it) and everything after the boundary; with no complete compaction
it is the whole history.

The store reads only ``seq >= live_history_start_seq(history)`` plus the linked summary, so the live history
must come out the same from that slice as from the whole history. When the named through-message is missing from the
input, the input is taken to be such a slice if it does not begin at seq 1 (every session starts at seq 1
and seq has no gaps), and the kept tail is then everything given before the boundary; a whole history that
names a message it does not hold has a dangling pointer, and only the messages after the boundary count.
Never reads storage; works on the values given.
"""

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.plain_text import is_blank, plain_text

_SEQ = attrgetter("seq")
FIRST_SEQ = 1
COMPACTION_KINDS = frozenset({Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY})
"""A set, for scans of whole histories: reading an enum member costs a descriptor call each time."""


@dataclass(frozen=True, slots=True)
class Compaction:
    boundary: EngineMessage
    summary: EngineMessage


@dataclass(frozen=True, slots=True)
class AppliedCompaction:
    compaction: Compaction
    tail_start_seq: int
    """The lowest seq the live history keeps (besides the summary, which is always sent first)."""


@dataclass(frozen=True, slots=True)
class LiveHistory:
    """The live history laid out as the model view sends it: the applied summary first, then every message
    from the start by seq, without boundaries and without any other summary (the model view hides those).
    Accounting, compaction and pruning all start here, so they agree with the model view about what the
    model sees. Flags such as ``eligibleForModelContext`` are left for each caller to apply."""

    compaction: Compaction | None
    messages: tuple[EngineMessage, ...]
    """The summary first (when a compaction applies), then the kept tail and newer messages by seq."""


def summary_for(message: EngineMessage) -> str | None:
    """The boundary id a summary names, when it is a summary that names one."""
    if message.kind is not Kind.COMPACT_SUMMARY:
        return None
    for key in _BOUNDARY_KEYS:
        target = message.metadata.get(key)
        if isinstance(target, str) and target:
            return target
    return None


_BOUNDARY_KEYS = ("summaryForBoundaryId", "compactBoundaryId", "parentID")
"""Where a summary names its boundary: the design's key, the engine metadata's other boundary key, then
opencode's compaction request."""


def completes_its_boundary(message: EngineMessage) -> bool:
    """A summary with non-blank text that names a boundary and may be sent to the model: what makes that
    boundary complete. A summary flagged ``eligibleForModelContext: false`` cannot stand in for the history it
    covers (the model would see neither), so its boundary stays incomplete and the history before it is sent."""
    return (
        summary_for(message) is not None
        and message.metadata.get("eligibleForModelContext") is not False
        and not is_blank(plain_text(message.content))
    )


def newest_complete_compaction(messages: Sequence[EngineMessage]) -> Compaction | None:
    """The newest boundary (by seq) with a non-blank linked summary, and that summary (the newest one)."""
    # Only boundaries and summaries take part: one cheap pass picks them out of a long history.
    markers = [m for m in messages if m.kind in COMPACTION_KINDS]
    if not markers:
        return None
    summaries: dict[str, EngineMessage] = {}
    for message in sorted(markers, key=lambda m: m.seq):
        target = summary_for(message)
        if target is not None and completes_its_boundary(message):
            summaries[target] = message
    boundaries = [m for m in markers if m.kind is Kind.COMPACT_BOUNDARY and m.id in summaries]
    if not boundaries:
        return None
    boundary = max(boundaries, key=lambda m: m.seq)
    return Compaction(boundary, summaries[boundary.id])


def live_history_start_seq(history: Sequence[EngineMessage]) -> int | None:
    """S: the store reads ``seq >= S`` plus the linked summary; ``None`` means no complete compaction.

    S is the seq after ``compactThroughMessageId`` when the newest complete boundary names a message that
    precedes it, else the boundary's own seq.
    """
    compaction = newest_complete_compaction(history)
    if compaction is None:
        return None
    boundary = compaction.boundary
    through = _through_seq(history, boundary)
    return through + 1 if through is not None else boundary.seq


def applied_compaction(messages: Sequence[EngineMessage]) -> AppliedCompaction | None:
    compaction = newest_complete_compaction(messages)
    if compaction is None:
        return None
    boundary = compaction.boundary
    after_boundary = boundary.seq + 1
    through = _through_seq(messages, boundary)
    if through is not None:
        return AppliedCompaction(compaction, through + 1)
    named = boundary.metadata.get("compactThroughMessageId")
    if isinstance(named, str) and named and not any(m.id == named for m in messages):
        given = [m.seq for m in messages if m.id != compaction.summary.id]
        first = min(given)
        if first > FIRST_SEQ:
            return AppliedCompaction(compaction, min(first, after_boundary))
    return AppliedCompaction(compaction, after_boundary)


def _through_seq(messages: Sequence[EngineMessage], boundary: EngineMessage) -> int | None:
    named = boundary.metadata.get("compactThroughMessageId")
    if not isinstance(named, str) or not named:
        return None
    for message in messages:
        if message.id == named and message.seq < boundary.seq:
            return message.seq
    return None


def live_history(messages: Sequence[EngineMessage]) -> LiveHistory:
    """The messages from the newest complete compaction on; the whole history when there is none.

    ``messages``: a session's engine messages, or the store's slice of them (``seq >= live_history_start_seq``
    plus the linked summary), in any order; a message given twice counts once.
    """
    ordered = _by_seq(messages)
    # Boundaries and summaries are never in order (the applied summary goes first).
    kept = [m for m in ordered if m.kind not in COMPACTION_KINDS]
    # Without a boundary or a summary there is no compaction to look for: applied_compaction's scan is spared.
    applied = applied_compaction(ordered) if len(kept) < len(ordered) else None
    if applied is None:
        return LiveHistory(None, tuple(kept))
    # ``kept`` is by seq, so the tail's start is a bisection, not another pass.
    start = bisect_left(kept, applied.tail_start_seq, key=_SEQ)
    return LiveHistory(applied.compaction, (applied.compaction.summary, *kept[start:]))


def _by_seq(messages: Sequence[EngineMessage]) -> Sequence[EngineMessage]:
    """Each message once (the first given of an id), by seq, in a stable order.

    The store's reads already come that way; checking so is much cheaper than the dict and the keyed sort.
    """
    seqs = [m.seq for m in messages]
    if seqs == sorted(seqs) and len({m.id for m in messages}) == len(seqs):
        return messages
    unique: dict[str, EngineMessage] = {}
    for message in messages:
        unique.setdefault(message.id, message)
    return sorted(unique.values(), key=_SEQ)
