"""The part of a session's history that the model view is built from, after the newest compaction.

A compaction appends a ``compact_boundary`` and its ``compact_summary`` at the end of the session. The
boundary may name the last message it summarised (``compactThroughMessageId``); the messages after that one
are the kept tail, sent verbatim after the summary, followed by everything newer than the boundary. A
boundary without a non-empty linked summary is incomplete and ignored (DESIGN section 3).

Accounting, compaction and pruning all start from this window, so they agree with each other about what the
model sees. Pure: messages in, a window out.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from app.engine.kinds import Kind
from app.engine.message import EngineMessage


@dataclass(frozen=True, slots=True)
class Compaction:
    """The newest complete compaction: its boundary, its summary and where the summarised part ended."""

    boundary: EngineMessage
    summary: EngineMessage
    through_message_id: str | None
    """The last summarised message, when the boundary names one that exists; else the boundary cuts."""


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    compaction: Compaction | None
    messages: tuple[EngineMessage, ...]
    """What the model view starts from, in the order it sends them: the summary first (when there is a
    compaction), then the kept tail and newer messages by seq. Boundaries and older summaries are left out;
    flags such as ``eligibleForModelContext`` are left for the view to apply."""

    @property
    def summary(self) -> EngineMessage | None:
        return self.compaction.summary if self.compaction else None

    @property
    def boundary_seq(self) -> int | None:
        """Provider usage recorded before this seq counted the history the compaction removed."""
        return self.compaction.boundary.seq if self.compaction else None


def summary_text(message: EngineMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.get("text", "") for part in message.content if part.get("type") == "text")


def newest_compaction(messages: Sequence[EngineMessage]) -> Compaction | None:
    """The newest boundary that has a non-empty summary naming it; incomplete boundaries are skipped."""
    summaries: dict[str, EngineMessage] = {}
    for message in messages:
        if message.kind is not Kind.COMPACT_SUMMARY or not summary_text(message).strip():
            continue
        boundary_id = message.metadata.get("summaryForBoundaryId")
        if isinstance(boundary_id, str):
            # The newest summary for a boundary wins, should a runtime ever write two.
            summaries[boundary_id] = message
    seqs = {message.id: message.seq for message in messages}
    for message in sorted(messages, key=lambda m: m.seq, reverse=True):
        if message.kind is not Kind.COMPACT_BOUNDARY or message.id not in summaries:
            continue
        through = message.metadata.get("compactThroughMessageId")
        # A named message must precede its boundary; anything else would drop history nobody summarised.
        valid = isinstance(through, str) and seqs.get(through, message.seq) < message.seq
        return Compaction(message, summaries[message.id], through if valid else None)
    return None


def history_window(messages: Sequence[EngineMessage]) -> HistoryWindow:
    """The window after the newest complete compaction; the whole history when there is none.

    ``messages`` are a session's engine messages (or any suffix that holds the newest compaction and the
    message it names), in any order.
    """
    ordered = sorted(messages, key=lambda m: m.seq)
    compaction = newest_compaction(ordered)
    if compaction is None:
        return HistoryWindow(None, tuple(m for m in ordered if m.kind is not Kind.COMPACT_BOUNDARY))
    start_after = compaction.boundary.seq
    if compaction.through_message_id is not None:
        start_after = next(m.seq for m in ordered if m.id == compaction.through_message_id)
    after = tuple(
        m for m in ordered if m.seq > start_after and m.kind not in (Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY)
    )
    return HistoryWindow(compaction, (compaction.summary, *after))
