"""Where a session's live history starts, kept on its session row so the model view never searches for it.

The model view starts at the newest complete compaction (``app.projections.live_history``). Finding it means
reading the session's boundaries and summaries through the kind index; how much of the session that query
walks depends on the planner: without fresh statistics, or under a generic plan, PostgreSQL answers
``kind = ANY(...)`` by walking the session's whole primary-key range. So the answer is worked out once,
when it can change, and kept on the session row (``compaction_boundary_seq``, ``compaction_summary_seq``,
``live_history_start_seq``); the model view then reads that row and one seq range.

It changes only when a boundary or a summary is appended, or one's metadata is amended (the link from a
summary to its boundary, or a boundary's ``compactThroughMessageId``): content, kinds and seqs never change,
and pruning marks tool results only. Each such write runs under the session's append lock and refreshes
the row with the search below, so the row always holds what the search would find.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.live_history import COMPACTION_KINDS, FIRST_SEQ, live_history_start_seq, newest_complete_compaction

MARKER_KINDS = (Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY)


@dataclass(frozen=True, slots=True)
class LiveStart:
    """The newest complete compaction, by seq, and the first seq of the live history it starts."""

    boundary_seq: int
    summary_seq: int
    start_seq: int
    """The kept tail's first seq when the boundary names a message before it, else the boundary's seq."""


def live_start(markers: Sequence[EngineMessage], named: Sequence[EngineMessage]) -> LiveStart | None:
    """From a session's boundaries and summaries (``markers``) and the messages its boundaries name as the
    last one they summarised (``named``; more than needed is harmless); None without a complete compaction."""
    compaction = newest_complete_compaction(markers)
    if compaction is None:
        return None
    start = live_history_start_seq([*markers, *named]) or FIRST_SEQ
    return LiveStart(compaction.boundary.seq, compaction.summary.seq, start)


def named_through_ids(markers: Sequence[EngineMessage]) -> list[str]:
    """The ids the boundaries name as the last message they summarised."""
    named = (m.metadata.get("compactThroughMessageId") for m in markers if m.kind is Kind.COMPACT_BOUNDARY)
    return sorted({name for name in named if isinstance(name, str) and name})


def changes_live_start(kinds: Sequence[Kind]) -> bool:
    """Whether writing messages of these kinds (or amending their metadata) may move the live history."""
    return any(kind in COMPACTION_KINDS for kind in kinds)
