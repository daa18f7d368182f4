"""Following a session live: every appended message once, in seq order, and word of every other change.

Each process has one ``EventHub``. Its listener hears every notice the database sends (``app.store.events``)
and the hub hands each to the streams following that session. A stream never takes messages from a notice:
it reads them from the database by seq, after the last seq it sent. Since seq is assigned in commit order,
a read that sees seq *n* sees every seq before it, so a stream neither skips nor repeats a message, however
notices arrive, bunch up or get lost; a notice only says when to read.

A stream subscribes before it reads anything, so a change that commits after its first read is always
announced to it. What a stream holds while its client is slow is bounded: message notices fold into one
number (the highest seq announced) and other notices wait in a queue of ``events_queue_size``; when the
queue would overflow it is dropped and the stream *resyncs*: it reads the messages after its last seq and
tells its client (``resync``) that metadata may have changed unseen. The same happens to every stream when
the listening connection is re-established. While a client does not read, the stream waits on the socket
and reads nothing more. Streams per process are capped (``events_max_streams``); past the cap a new one is
refused with 503. Closing the hub ends every stream, which is how a shutting-down server gets its
connections back.

A stream follows one session: its id *and* its creation time, since a session deleted and created again
under the same id is another session whose seqs start again at 1. Every read checks that the session it
follows is still there, so a deletion (announced by its own notice, or missed and found by a resync) ends the
stream with a ``deleted`` event instead of leaving it to wait, or to read the new session's messages after
the old one's last seq. A resume point past the session's last seq cannot name one of its messages: it comes
from a session deleted since under this id, so that stream says ``resync`` and starts at the first message.

A stream reads on the primary, even with read replicas configured: a notice comes when its write commits on
the primary, before a replica may have replayed it, and it carries no WAL position to wait for; read on such a
replica, the announced messages would not be there yet, and the stream would wait for the next notice.
"""

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from app.errors import NotFound, ServiceUnavailable
from app.store.database import Database
from app.store.events import Notice, NoticeKind
from app.store.messages import MessageRepository, PageBudget
from app.store.records import MessageRecord
from app.store.sessions import SessionRepository


class TooManyStreams(ServiceUnavailable):
    slug, title = "too-many-streams", "This process serves as many event streams as it may"


class Subscription:
    """What one stream has been told and not yet acted on, bounded whatever the rate of changes."""

    def __init__(self, tenant_id: str, session_id: str, queue_size: int) -> None:
        self.key = (tenant_id, session_id)
        self.announced_seq = 0
        self.changes: deque[Notice] = deque()
        self.resync_reason: str | None = None
        self.closed = False
        self.wake = asyncio.Event()
        self._queue_size = queue_size

    def offer(self, notice: Notice) -> None:
        if notice.kind is NoticeKind.MESSAGE:
            self.announced_seq = max(self.announced_seq, notice.last_seq)
        elif len(self.changes) >= self._queue_size:
            self.changes.clear()
            self.resync("the stream fell behind the changes to this session")
        else:
            self.changes.append(notice)
        self.wake.set()

    def resync(self, reason: str) -> None:
        self.resync_reason = reason
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    def take(self) -> tuple[int, list[Notice], str | None]:
        """What arrived since the last take: the highest seq announced, the other notices, a resync reason."""
        changes, reason = list(self.changes), self.resync_reason
        self.changes.clear()
        self.resync_reason = None
        self.wake.clear()
        return self.announced_seq, changes, reason


class EventHub:
    """The process's streams by session, fed by the listener (one event loop: no locks)."""

    def __init__(
        self, *, max_streams: int, queue_size: int, on_deleted: Callable[[str, str], None] | None = None
    ) -> None:
        """``on_deleted``: told the tenant and id of every session whose deletion notice arrives, whichever
        process deleted it (the process's kept ``/chat`` windows forget it)."""
        self._max_streams = max_streams
        self._on_deleted = on_deleted
        self._queue_size = queue_size
        self._by_session: dict[tuple[str, str], set[Subscription]] = {}
        self._open = 0
        self._closed = False
        self._loop = asyncio.get_running_loop()

    @property
    def open_streams(self) -> int:
        return self._open

    def subscribe(self, tenant_id: str, session_id: str) -> Subscription:
        if self._closed:
            raise ServiceUnavailable("The server is shutting down; reconnect in a moment.")
        if self._open >= self._max_streams:
            raise TooManyStreams(f"This process already serves {self._max_streams} event streams; retry later.")
        subscription = Subscription(tenant_id, session_id, self._queue_size)
        self._by_session.setdefault(subscription.key, set()).add(subscription)
        self._open += 1
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        followers = self._by_session.get(subscription.key)
        if followers is None or subscription not in followers:
            return
        followers.discard(subscription)
        self._open -= 1
        if not followers:
            del self._by_session[subscription.key]

    def deliver(self, notice: Notice) -> None:
        if notice.kind is NoticeKind.DELETED and self._on_deleted is not None:
            self._on_deleted(notice.tenant_id, notice.session_id)
        for subscription in self._by_session.get((notice.tenant_id, notice.session_id), ()):
            subscription.offer(notice)

    def resync_all(self) -> None:
        """The listener (re)connected: notices sent before may never have arrived."""
        for followers in self._by_session.values():
            for subscription in followers:
                subscription.resync("the service's connection for change notices was re-established")

    def close(self) -> None:
        """Ends every stream and refuses new ones."""
        self._closed = True
        for followers in self._by_session.values():
            for subscription in followers:
                subscription.close()

    def close_soon(self) -> None:
        """``close`` from any thread or a signal handler."""
        self._loop.call_soon_threadsafe(self.close)


@dataclass(frozen=True, slots=True)
class MessageAppended:
    message: MessageRecord


@dataclass(frozen=True, slots=True)
class MessageAmended:
    message: MessageRecord


@dataclass(frozen=True, slots=True)
class SessionChanged:
    """A compaction, a prune, or the session's deletion (the stream's last event): ``details`` as the notice
    gave them."""

    kind: NoticeKind
    first_seq: int
    last_seq: int
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Resynced:
    reason: str


@dataclass(frozen=True, slots=True)
class Idle:
    """Nothing happened for a heartbeat interval."""


LiveEvent = MessageAppended | MessageAmended | SessionChanged | Resynced | Idle


@dataclass(frozen=True, slots=True)
class StreamOptions:
    page_size: int
    """Messages read per query while catching up; one page is all a stream holds at a time."""
    budget: PageBudget
    """What that page may hold besides its count."""
    heartbeat_seconds: float


class EventStream(AsyncIterator[LiveEvent]):
    """One stream's events. Closing it ends its subscription even when no event was ever asked for: an async
    generator that never started runs no ``finally`` (a stream refused, or whose client left before it began)."""

    def __init__(self, hub: EventHub, subscription: Subscription, events: AsyncGenerator[LiveEvent]) -> None:
        self._hub = hub
        self._subscription = subscription
        self._events = events

    async def __anext__(self) -> LiveEvent:
        return await anext(self._events)

    async def aclose(self) -> None:
        try:
            await self._events.aclose()
        finally:
            self._hub.unsubscribe(self._subscription)


async def follow_session(
    database: Database,
    hub: EventHub,
    tenant_id: str,
    session_id: str,
    *,
    after_seq: int | None,
    options: StreamOptions,
) -> EventStream:
    """The session's events after ``after_seq`` (None: from now on). Raises ``NotFound`` before the first
    event for a session the tenant does not have; the stream must be closed (``aclose``) when done."""
    subscription = hub.subscribe(tenant_id, session_id)
    try:
        async with database.reading(on_primary=True) as connection:
            session = await SessionRepository(connection, tenant_id).get(session_id)
    except BaseException:
        hub.unsubscribe(subscription)
        raise
    if session is None:
        hub.unsubscribe(subscription)
        raise NotFound(f"session '{session_id}' does not exist")
    followed = _Followed(database, tenant_id, session_id, session.created_at, options)
    if after_seq is None:
        events = _events(hub, subscription, followed, session.last_seq)
    elif after_seq > session.last_seq:
        events = _events(hub, subscription, followed, 0, opening=Resynced(_RESUMED_FROM_ANOTHER))
    else:
        events = _events(hub, subscription, followed, after_seq)
    return EventStream(hub, subscription, events)


_RESUMED_FROM_ANOTHER = (
    "the resume point is past this session's last message: it came from a session deleted since under this id,"
    " so this one is sent from its first message"
)


class _Deleted(Exception):
    """The session a stream follows is gone (perhaps replaced by a new one under the same id)."""


@dataclass(frozen=True, slots=True)
class _Followed:
    """The session a stream follows, and how it reads it: ``created_at`` tells it from a session created
    again under the same id."""

    database: Database
    tenant_id: str
    session_id: str
    created_at: datetime
    options: StreamOptions

    async def messages_after(self, after_seq: int) -> AsyncIterator[MessageRecord]:
        """Every message after ``after_seq``, a page per short read: no connection is held while the client
        reads. Raises ``_Deleted`` once the session is gone."""
        while True:
            async with self.database.reading(on_primary=True) as connection:
                await self._check(connection)
                rows, has_more = await MessageRepository(connection, self.tenant_id).page(
                    self.session_id,
                    limit=self.options.page_size,
                    after_seq=after_seq,
                    before_seq=None,
                    backwards=False,
                    budget=self.options.budget,
                )
            for row in rows:
                yield row
            if not has_more or not rows:
                return
            after_seq = rows[-1].seq
            # Let the page go before the next is read: a stream catching up holds one page, not two.
            del rows, row

    async def change_event(self, notice: Notice) -> LiveEvent | None:
        if notice.kind is NoticeKind.DELETED:
            # Perhaps of an earlier session under this id, deleted before this stream read its own.
            async with self.database.reading(on_primary=True) as connection:
                await self._check(connection)
            return None
        if notice.kind is not NoticeKind.AMENDED:
            return SessionChanged(notice.kind, notice.first_seq, notice.last_seq, notice.details)
        async with self.database.reading(on_primary=True) as connection:
            row = await MessageRepository(connection, self.tenant_id).get(
                self.session_id, str(notice.details.get("messageId"))
            )
        return MessageAmended(row) if row is not None else None

    async def _check(self, connection: AsyncConnection) -> None:
        if await SessionRepository(connection, self.tenant_id).created_at(self.session_id) != self.created_at:
            raise _Deleted


async def _events(
    hub: EventHub, subscription: Subscription, followed: _Followed, start_seq: int, opening: LiveEvent | None = None
) -> AsyncGenerator[LiveEvent]:
    sent_seq = start_seq
    try:
        if opening is not None:
            yield opening
        async for message in followed.messages_after(sent_seq):
            sent_seq = message.seq
            yield MessageAppended(message)
        while True:
            try:
                await asyncio.wait_for(subscription.wake.wait(), followed.options.heartbeat_seconds)
            except TimeoutError:
                yield Idle()
                continue
            if subscription.closed:
                return
            announced_seq, changes, resync_reason = subscription.take()
            if resync_reason is not None or announced_seq > sent_seq:
                async for message in followed.messages_after(sent_seq):
                    sent_seq = message.seq
                    yield MessageAppended(message)
            for change in changes:
                event = await followed.change_event(change)
                if event is not None:
                    yield event
            if resync_reason is not None:
                yield Resynced(resync_reason)
    except _Deleted:
        yield SessionChanged(NoticeKind.DELETED, 0, 0)
    finally:
        hub.unsubscribe(subscription)
