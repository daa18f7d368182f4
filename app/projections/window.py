"""The compaction window: which messages the model view starts from.

A boundary is *complete* when a ``compact_summary`` names it (``metadata.summaryForBoundaryId``) with
non-blank text; only the newest complete boundary applies, so a failed or running compaction never replaces
history. The window is the kept tail (the messages after ``metadata.compactThroughMessageId``, when the
boundary names one that precedes it) and everything after the boundary.

The store reads only ``seq >= window_start_seq(history)`` plus the linked summary, so the window must come
out the same from that slice as from the whole history. When the named through-message is missing from the
input, the input is taken to be such a slice if it does not begin at seq 1 (every session starts at seq 1
and seq has no gaps), and the kept tail is then everything given before the boundary; a whole history that
names a message it does not hold has a dangling pointer, and only the messages after the boundary count.
Never reads storage; works on the values given.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.plain_text import is_blank, plain_text

FIRST_SEQ = 1
COMPACTION_KINDS = frozenset({Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY})
"""A set, for scans of whole histories: reading an enum member costs a descriptor call each time."""


@dataclass(frozen=True, slots=True)
class Compaction:
    boundary: EngineMessage
    summary: EngineMessage


@dataclass(frozen=True, slots=True)
class Window:
    compaction: Compaction
    tail_start_seq: int
    """The lowest seq the window keeps (besides the summary, which is always sent first)."""


def summary_for(message: EngineMessage) -> str | None:
    """The boundary id a summary names, when it is a summary that names one."""
    target = message.metadata.get("summaryForBoundaryId")
    if message.kind is Kind.COMPACT_SUMMARY and isinstance(target, str) and target:
        return target
    return None


def completes_its_boundary(message: EngineMessage) -> bool:
    """A summary with non-blank text that names a boundary: what makes that boundary complete."""
    return summary_for(message) is not None and not is_blank(plain_text(message.content))


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


def window_start_seq(history: Sequence[EngineMessage]) -> int | None:
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


def select_window(messages: Sequence[EngineMessage]) -> Window | None:
    compaction = newest_complete_compaction(messages)
    if compaction is None:
        return None
    boundary = compaction.boundary
    after_boundary = boundary.seq + 1
    through = _through_seq(messages, boundary)
    if through is not None:
        return Window(compaction, through + 1)
    named = boundary.metadata.get("compactThroughMessageId")
    if isinstance(named, str) and named and not any(m.id == named for m in messages):
        given = [m.seq for m in messages if m.id != compaction.summary.id]
        first = min(given)
        if first > FIRST_SEQ:
            return Window(compaction, min(first, after_boundary))
    return Window(compaction, after_boundary)


def _through_seq(messages: Sequence[EngineMessage], boundary: EngineMessage) -> int | None:
    named = boundary.metadata.get("compactThroughMessageId")
    if not isinstance(named, str) or not named:
        return None
    for message in messages:
        if message.id == named and message.seq < boundary.seq:
            return message.seq
    return None
