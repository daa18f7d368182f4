"""The part of a session's history that the model view is built from, in the order it is sent.

The window rule itself lives in ``app.projections.window`` (newest complete compaction, kept tail named by
``compactThroughMessageId``, store slices that start after it); this module only lays that window out as a
list of engine messages: the applied summary first, then every message from the window's start by seq,
without boundaries and without any other summary (the model view hides those). Accounting, compaction and
pruning all start here, so they agree with the model view about what the model sees. Flags such as
``eligibleForModelContext`` are left for each caller to apply. Pure.
"""

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from app.engine.message import EngineMessage
from app.projections.window import COMPACTION_KINDS, Compaction, select_window

_SEQ = attrgetter("seq")


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    compaction: Compaction | None
    messages: tuple[EngineMessage, ...]
    """The summary first (when a compaction applies), then the kept tail and newer messages by seq."""


def history_window(messages: Sequence[EngineMessage]) -> HistoryWindow:
    """The window after the newest complete compaction; the whole history when there is none.

    ``messages``: a session's engine messages, or the store's slice of them (``seq >= window_start_seq``
    plus the linked summary), in any order; a message given twice counts once.
    """
    ordered = _by_seq(messages)
    # Boundaries and summaries are never in order (the applied summary goes first).
    kept = [m for m in ordered if m.kind not in COMPACTION_KINDS]
    # Without a boundary or a summary there is no compaction to look for: select_window's scan is spared.
    window = select_window(ordered) if len(kept) < len(ordered) else None
    if window is None:
        return HistoryWindow(None, tuple(kept))
    # ``kept`` is by seq, so the window's start is a bisection, not another pass.
    start = bisect_left(kept, window.tail_start_seq, key=_SEQ)
    return HistoryWindow(window.compaction, (window.compaction.summary, *kept[start:]))


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
