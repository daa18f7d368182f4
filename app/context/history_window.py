"""The part of a session's history that the model view is built from, in the order it is sent.

The window rule itself lives in ``app.projections.window`` (newest complete compaction, kept tail named by
``compactThroughMessageId``, store slices that start after it); this module only lays that window out as a
list of engine messages: the applied summary first, then every message from the window's start by seq,
without boundaries and without any other summary (the model view hides those). Accounting, compaction and
pruning all start here, so they agree with the model view about what the model sees. Flags such as
``eligibleForModelContext`` are left for each caller to apply. Pure.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.projections.window import Compaction, select_window

_NEVER_IN_ORDER = (Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY)


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    compaction: Compaction | None
    messages: tuple[EngineMessage, ...]
    """The summary first (when a compaction applies), then the kept tail and newer messages by seq."""

    @property
    def summary(self) -> EngineMessage | None:
        return self.compaction.summary if self.compaction else None

    @property
    def boundary_seq(self) -> int | None:
        """Provider usage recorded before this seq counted the history the compaction removed."""
        return self.compaction.boundary.seq if self.compaction else None


def history_window(messages: Sequence[EngineMessage]) -> HistoryWindow:
    """The window after the newest complete compaction; the whole history when there is none.

    ``messages``: a session's engine messages, or the store's slice of them (``seq >= window_start_seq``
    plus the linked summary), in any order; a message given twice counts once.
    """
    unique: dict[str, EngineMessage] = {}
    for message in messages:
        unique.setdefault(message.id, message)
    ordered = sorted(unique.values(), key=lambda m: m.seq)
    window = select_window(ordered)
    if window is None:
        return HistoryWindow(None, tuple(m for m in ordered if m.kind not in _NEVER_IN_ORDER))
    after = tuple(m for m in ordered if m.seq >= window.tail_start_seq and m.kind not in _NEVER_IN_ORDER)
    return HistoryWindow(window.compaction, (window.compaction.summary, *after))
