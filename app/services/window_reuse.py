"""The decoded window of a session, kept per process between turns, so the next ``/chat`` (or context report)
reads only the messages appended since.

An agent calls ``/chat`` once a turn on a window that grew by a message or two: fetching and promoting the
whole window again is most of a turn's cost on a long session. A kept window is brought up to date from what
the session row says changed since it was read:

- ``revision - last_seq`` (the *rewrites*): ``revision`` counts one per message appended and one per
  amendment, prune or new run that a message already names (``RunRepository.create``), so the difference is
  unchanged by appends and grows by one with every other change. Each such change stamps the messages whose
  view it rewrote with the revision it gives the session (``messages.amended_revision``).
- the live history's start (its boundary, summary and first seq on the session row): a compaction moves it.
- the session's ``created_at``: a session deleted and created again under the same id starts anew.
- ``last_seq`` and ``revision`` not below the kept ones (a replica behind the kept read is a miss, not a
  rewind).

When the last three hold, the window now is the kept one with the messages stamped since its revision put in
place of theirs (none after pure appends: a *hit*; some: a *refresh*), followed by the messages after its
last seq, read in the same snapshot as the session row. The stamps must name as many changes as the rewrites
count (a message rewritten twice keeps only its later stamp, and a change that stamped nothing would go
unseen): otherwise, and whenever the others fail, it is a *miss* and the window is read whole. Request
parameters do not enter the key: they change what is built from the window, never the window (only whether
the compaction applies does, and that is part of the key).

Beside each window, a ``/chat`` keeps what the next turn's build of the same parameters may splice
(``app.services.turn_splice.KeptTurn``, keyed by the window and the parameters' hash). It holds the very
message objects of the window it was built on and is used only while the window read now starts with them,
so whatever makes the window be read again makes it useless too; a refresh drops the kept turns whose cut lies
after a message it replaced (what they kept was built from the message as it was), and the others then check
for the new messages.

The kept messages are never changed by anyone: the pure pipeline builds new values from them (a property test
compares reused and fresh builds byte for byte), and a hit builds a new list rather than extending the kept
one. Entries are evicted least recently used first once their estimated size passes the budget
(``PROJECTOR_CHAT_REUSE_BYTES``; 0 keeps nothing). A deleted session's entries are dropped at once
(``forget_session``): by the process that deleted it, and by every other process when the deletion's notice
reaches its event hub (``app.services.events``), so windows nobody can ask for again do not push out live
ones. Only the room is at stake there, not the answers: a session created again under the same id has
another ``created_at``, so it is never served a window kept for the deleted one. The cache is touched only
from the event loop.
"""

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from app.engine.message import EngineMessage
from app.observability import WINDOW_REUSE, WINDOW_REUSE_BYTES
from app.services.turn_splice import KeptTurn
from app.store.live_start import LiveStart
from app.store.records import SessionRecord

MESSAGE_OVERHEAD = 1024
"""What a promoted message holds besides its text (the message, its dicts and lists), in bytes, roughly."""
PART_OVERHEAD = 256


ReadOutcome = Literal["hit", "refresh", "miss"]


@dataclass(frozen=True, slots=True)
class WindowKey:
    tenant_id: str
    session_id: str
    apply_compact_boundary: bool


@dataclass(frozen=True, slots=True)
class TurnKey:
    window: WindowKey
    params: str
    """The hash of the request parameters besides the history."""


@dataclass(frozen=True, slots=True)
class WindowStamp:
    """What must not have changed for a kept window to be brought up to date."""

    created_at: datetime
    live_start: LiveStart | None


def stamp_of(session: SessionRecord, live_start: LiveStart | None) -> WindowStamp:
    return WindowStamp(session.created_at, live_start)


@dataclass(frozen=True, slots=True)
class KeptWindow:
    stamp: WindowStamp
    last_seq: int
    revision: int
    """The session's revision when the window was read."""
    messages: tuple[EngineMessage, ...]
    size: int
    weight: int = 0
    """The messages' ``heavy_work.content_weight``, so a request on the window weighs only what came since."""

    def rewrites_since(self, session: SessionRecord) -> int:
        """How many changes other than appends the session has seen since this window was read."""
        return rewrites(session) - (self.revision - self.last_seq)

    def with_replaced(self, amended: Sequence[EngineMessage]) -> tuple["KeptWindow", dict[int, EngineMessage]]:
        """This window with ``amended`` put in place of the messages of the same seq (those it does not hold
        are left out), and what was replaced, by index. Content never changes, so the weight stays; the size
        follows the new metadata."""
        where = {message.seq: index for index, message in enumerate(self.messages)}
        replaced = {where[message.seq]: message for message in amended if message.seq in where}
        if not replaced:
            return self, replaced
        messages = list(self.messages)
        size = self.size
        for index, message in replaced.items():
            size += message_size(message) - message_size(messages[index])
            messages[index] = message
        return KeptWindow(self.stamp, self.last_seq, self.revision, tuple(messages), size, self.weight), replaced


class WindowReuse:
    """A bounded, least-recently-used map of kept windows and turns."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity = capacity_bytes
        self._kept: OrderedDict[WindowKey | TurnKey, KeptWindow | KeptTurn] = OrderedDict()
        self._size = 0
        self.hits = 0
        self.refreshes = 0
        self.misses = 0

    @property
    def size(self) -> int:
        return self._size

    def usable(self, key: WindowKey, stamp: WindowStamp, session: SessionRecord) -> KeptWindow | None:
        """The kept window ``key`` names when it may be brought up to the session read now; the caller counts
        the outcome (``counted``), which depends on the stamps it then reads."""
        kept = self._kept.get(key)
        if (
            not isinstance(kept, KeptWindow)
            or kept.stamp != stamp
            or kept.last_seq > session.last_seq
            or kept.revision > session.revision
        ):
            return None
        self._kept.move_to_end(key)
        return kept

    def counted(self, outcome: ReadOutcome) -> None:
        """Counts a read of the window: ``hit`` (the kept window and the messages since), ``refresh`` (with
        rewritten messages re-read) or ``miss`` (read whole)."""
        if outcome == "miss":
            self.misses += 1
        elif outcome == "refresh":
            self.refreshes += 1
        else:
            self.hits += 1
        WINDOW_REUSE.labels(outcome).inc()

    def keep(
        self,
        key: WindowKey,
        stamp: WindowStamp,
        session: SessionRecord,
        messages: Sequence[EngineMessage],
        size: int,
        weight: int = 0,
    ) -> None:
        """Keeps ``messages``, the window of ``session`` as read, which ``size`` bytes estimate
        (``window_size``) and which weigh ``weight``. A window older than the one kept (a slower concurrent
        read) is dropped."""
        if self.capacity <= 0:
            return
        current = self._kept.get(key)
        if isinstance(current, KeptWindow) and current.stamp == stamp and current.revision > session.revision:
            return
        self._put(key, KeptWindow(stamp, session.last_seq, session.revision, tuple(messages), size, weight))

    def refresh_turns(
        self, key: WindowKey, before: Sequence[EngineMessage], replaced: Mapping[int, EngineMessage]
    ) -> None:
        """Brings the kept turns of window ``key`` up to a refresh that put ``replaced`` (by index) in place of
        messages of ``before``. A turn kept on ``before`` whose cut lies before every replaced message now
        checks for the new messages (its tail is built again from the window, replaced messages included);
        any other is dropped: it kept something built from a replaced message, or was kept on another
        window and would fail its check anyway."""
        first = min(replaced)
        for turn_key, kept in list(self._kept.items()):
            if not (isinstance(turn_key, TurnKey) and turn_key.window == key and isinstance(kept, KeptTurn)):
                continue
            on_before = kept.count <= len(before) and before[kept.count - 1] is kept.last
            if not on_before or before[kept.cut] is not kept.cut_message or first < kept.cut:
                self._drop(turn_key)
                continue
            last = replaced.get(kept.count - 1, kept.last)
            self._kept[turn_key] = replace(kept, last=last, cut_message=replaced.get(kept.cut, kept.cut_message))

    def kept_turn(self, key: TurnKey) -> KeptTurn | None:
        """What the last build of these parameters on this window kept for the next turn's."""
        kept = self._kept.get(key)
        if not isinstance(kept, KeptTurn):
            return None
        self._kept.move_to_end(key)
        return kept

    def keep_turn(self, key: TurnKey, turn: KeptTurn | None, session: SessionRecord) -> None:
        """Keeps ``turn``, built on the window of ``session`` as read, for the next build of these parameters
        (``None``: the build kept nothing). A turn built on a window the kept one has been refreshed from
        since (a concurrent build read it after an amendment) is not kept: it was built from the rewritten
        messages as they were, and the refresh that drops such turns (``refresh_turns``) came before it."""
        if turn is None or self.capacity <= 0:
            self._drop(key)
            return
        window = self._kept.get(key.window)
        if not isinstance(window, KeptWindow) or window.revision - window.last_seq != rewrites(session):
            return
        self._put(key, turn)

    def forget_session(self, tenant_id: str, session_id: str) -> None:
        """Drops every window and turn kept for the session (it was deleted). Deletions are rare next to
        reads, so this walks the entries rather than keep an index by session for every read to maintain."""
        for key in list(self._kept):
            window = key.window if isinstance(key, TurnKey) else key
            if window.tenant_id == tenant_id and window.session_id == session_id:
                self._drop(key)

    def _put(self, key: WindowKey | TurnKey, kept: KeptWindow | KeptTurn) -> None:
        self._drop(key)
        if kept.size > self.capacity:
            return
        self._kept[key] = kept
        self._size += kept.size
        while self._size > self.capacity:
            self._drop(next(iter(self._kept)))
        WINDOW_REUSE_BYTES.set(self._size)

    def _drop(self, key: WindowKey | TurnKey) -> None:
        gone = self._kept.pop(key, None)
        if gone is not None:
            self._size -= gone.size
            WINDOW_REUSE_BYTES.set(self._size)


def rewrites(session: SessionRecord) -> int:
    """How many changes other than appends the session has seen: unchanged by appends."""
    return session.revision - session.last_seq


def window_size(messages: Sequence[EngineMessage], kept: KeptWindow | None = None) -> int:
    """The estimated size of ``messages``, which start with ``kept``'s (not measured again) when given."""
    if kept is None:
        return sum(map(message_size, messages))
    return kept.size + sum(map(message_size, messages[len(kept.messages) :]))


def message_size(message: EngineMessage) -> int:
    """A promoted message's memory, estimated from its stored JSON when the store read it (about its text's
    length: a string costs about its length), else from its text."""
    if message.stored_bytes:
        return MESSAGE_OVERHEAD + message.stored_bytes
    content = message.content
    if isinstance(content, str):
        return MESSAGE_OVERHEAD + len(content)
    return MESSAGE_OVERHEAD + sum(map(_part_size, content)) + _part_size(message.metadata)


def _part_size(part: object) -> int:
    """A part's (or metadata's) text and the text of its fields' fields, plus an overhead."""
    if not isinstance(part, dict):
        return PART_OVERHEAD
    size = PART_OVERHEAD
    for value in part.values():
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, dict):
            size += PART_OVERHEAD + sum(len(inner) for inner in value.values() if isinstance(inner, str))
        elif isinstance(value, list):
            size += PART_OVERHEAD * len(value)
    return size
