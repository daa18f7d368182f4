"""``MessageRepository``: the append-only message log of a session.

Hot reads (a page, the live history) go straight to the asyncpg connection under the request's SQLAlchemy
connection, with hand-written SQL: a 1,000-row window then costs one prepared statement and one tuple per
row, not a compiled Core statement and a ``RowMapping`` per row, and the live history's rows are promoted as
they come (``promote_rows``: one ``EngineMessage`` per row, no ``PersistedMessage`` in between). They still run
inside the request's transaction (and its snapshot); writes stay on SQLAlchemy Core.

Ordering: an append first locks the session row (``SELECT ... FOR UPDATE``), so appends to one session run
one at a time and ``seq`` is assigned gap-free in commit order; a reader paging with ``after=`` can never
skip a row that commits later with a smaller seq. Appends to different sessions never wait on each other.
"""

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Any, cast

import asyncpg
from sqlalchemy import ScalarSelect, bindparam, func, insert, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.engine.kinds import Kind, Role
from app.engine.message import EngineMessage
from app.engine.persisted import Content, PersistedMessage
from app.engine.promotion import promote_rows
from app.engine.search_text import MessageFacts
from app.lossless_json import dumps, same_json
from app.projections.live_history import FIRST_SEQ
from app.store.escaped_text import escape_strings, unescape_strings
from app.store.events import messages_notice_sql
from app.store.jsonb_numbers import jsonb_text
from app.store.live_start import MARKER_KINDS, LiveStart, changes_live_start, live_start, named_through_ids
from app.store.metadata import merged_metadata
from app.store.records import MessageRecord, core_columns, select_list
from app.store.replicas import driver
from app.store.search import search_columns
from app.store.tables import messages, sessions

MESSAGE_COLUMNS = core_columns(messages, MessageRecord._fields)

# The SQL below is assembled from these constants only; every value is a bind parameter.
_READ_COLUMNS = select_list(MessageRecord._fields)
_PERSISTED_FIELDS = [field.name for field in dataclasses.fields(PersistedMessage)]
_PERSISTED_COLUMNS = select_list(
    [name if name != "stored_bytes" else "content_bytes + metadata_bytes" for name in _PERSISTED_FIELDS]
)
"""``PersistedMessage``'s fields in declaration order: the row ``promote_rows`` takes (``stored_bytes`` from
the generated size columns)."""

_SCOPE = "tenant_id = $1 AND session_id = $2"


def _page_sql(columns: str) -> dict[tuple[bool, bool, bool], str]:
    """A page's query for each (after, before, backwards), selecting ``columns``."""
    return {
        (has_after, has_before, backwards): (
            f"SELECT {columns} FROM messages WHERE {_SCOPE}"  # noqa: S608
            + (" AND seq > $4" if has_after else "")
            + (f" AND seq < ${5 if has_after else 4}" if has_before else "")
            + (" ORDER BY seq DESC" if backwards else " ORDER BY seq")
            + " LIMIT $3"
        )
        for has_after in (False, True)
        for has_before in (False, True)
        for backwards in (False, True)
    }


_PAGE_SQL = _page_sql(_READ_COLUMNS)
_PAGE_SIZES_SQL = _page_sql("content_bytes + metadata_bytes, content_parts")
"""The same page's stored sizes, read from the generated size columns without touching content."""
_FROM_SEQ_SQL = f"SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE} AND seq >= $3 ORDER BY seq"  # noqa: S608
_SEQ_RANGE_SQL = f"SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE} AND seq BETWEEN $3 AND $4 ORDER BY seq"  # noqa: S608
_BY_KINDS_SQL = f"SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE} AND kind = ANY($3::text[]) ORDER BY seq"  # noqa: S608
_AMENDED_SQL = (
    f"SELECT {_PERSISTED_COLUMNS}, amended_revision FROM messages"  # noqa: S608
    f" WHERE {_SCOPE} AND amended_revision > $3 ORDER BY seq"
)
_GET_SQL = f"SELECT {_READ_COLUMNS} FROM messages WHERE {_SCOPE} AND id = $3"  # noqa: S608
_METADATA_SQL = f"SELECT id, metadata, unusual_text FROM messages WHERE {_SCOPE} AND id = ANY($3::text[])"  # noqa: S608
_BY_IDS_SQL = f"SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE} AND id = ANY($3::text[])"  # noqa: S608
_LIVE_HISTORY_SQL = (
    "WITH start AS (SELECT live_history_start_seq AS first_seq, compaction_summary_seq AS summary_seq,"  # noqa: S608
    " last_seq FROM sessions WHERE tenant_id = $1 AND id = $2)"
    f" (SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE}"
    " AND seq = (SELECT summary_seq FROM start) AND seq < (SELECT first_seq FROM start))"
    f" UNION ALL (SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE}"
    f" AND seq BETWEEN coalesce((SELECT first_seq FROM start), {FIRST_SEQ}) AND (SELECT last_seq FROM start)"
    " ORDER BY seq)"
)
"""The live history from the session row's start: one session row and one seq range (the summary comes
first when it was written before the range, a one-row lookup by seq). Both reads are index conditions on
seq, and the range is closed at the session's last seq: a plan made without the values (a generic plan)
estimates a closed range as a small one and walks the primary key, where ``seq >= $n`` alone is guessed at
a third of the session and, once statistics say the table is large, answered by scanning all of it."""
_LIVE_START_SQL = (
    "SELECT compaction_boundary_seq, compaction_summary_seq, live_history_start_seq FROM sessions"
    " WHERE tenant_id = $1 AND id = $2"
)
_SET_LIVE_START_SQL = (
    "UPDATE sessions SET compaction_boundary_seq = $3, compaction_summary_seq = $4, live_history_start_seq = $5"
    " WHERE tenant_id = $1 AND id = $2"
)

_APPENDED = (
    ("id", "text"),
    ("run_id", "text"),
    ("role", "text"),
    ("kind", "text"),
    ("content", "json"),
    ("metadata", "jsonb"),
    ("token_estimate", "integer"),
    ("created_at", "timestamptz"),
    ("unusual_text", "boolean"),
    ("search_config", "regconfig"),
    ("search_text", "text"),
    ("tool_calls", "text[]"),
    ("tool_results", "text[]"),
    ("tool_errors", "text[]"),
)
"""The columns an append writes besides tenant, session and seq, and their types. Each goes over the wire as
one array parameter; values of types asyncpg would need a codec for (json, arrays) go as their text and are
cast per row, which keeps the text of a ``json`` content exactly as written."""
_AS_ARRAY = {"integer": "integer[]", "timestamptz": "timestamptz[]", "boolean": "boolean[]"}
_NEW_ROWS = ", ".join(f"${index + 4}::{_AS_ARRAY.get(kind, 'text[]')}" for index, (_, kind) in enumerate(_APPENDED))
_NEW_VALUES = ", ".join(
    f"row.{name}" if kind in ("text", *_AS_ARRAY) else f"row.{name}::{kind}" for name, kind in _APPENDED
)
_APPEND_NEW_SQL = (
    "WITH taken AS (SELECT 1 FROM messages WHERE tenant_id = $1 AND session_id = $2"  # noqa: S608
    " AND id = ANY($4::text[]) LIMIT 1),"
    " bumped AS (UPDATE sessions SET last_seq = last_seq + $3, revision = revision + $3, updated_at = now()"
    " WHERE tenant_id = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM taken) RETURNING last_seq - $3 AS base),"
    f" inserted AS (INSERT INTO messages (tenant_id, session_id, seq, {', '.join(name for name, _ in _APPENDED)})"
    f" SELECT $1, $2, bumped.base + row.position, {_NEW_VALUES} FROM bumped,"
    f" unnest({_NEW_ROWS}) WITH ORDINALITY AS row({', '.join(name for name, _ in _APPENDED)}, position))"
    f" SELECT base, {messages_notice_sql('$1', '$2', 'base + 1', 'base + $3')} FROM bumped"
)
"""An append of new messages as one statement, which PostgreSQL runs atomically (no BEGIN, no COMMIT): the
session row's update takes its lock (waiting for an append in flight, then reading its newest last seq), the
rows go in after the last seq, and the notice is sent on commit. It writes nothing when an id is already
stored or the session does not exist; a concurrent append of the same id (which this statement's snapshot
cannot see) makes the insert fail on the unique id instead (``IdTakenMeanwhile``), and the caller falls back to
``append``."""
_PERSISTED_UNUSUAL = itemgetter(_PERSISTED_FIELDS.index("unusual_text"))
_PERSISTED_METADATA = _PERSISTED_FIELDS.index("metadata")
_RECORD_UNUSUAL = attrgetter("unusual_text")


def _unpackable(records: list[asyncpg.Record] | list[tuple[Any, ...]]) -> list[Sequence[Any]]:
    """asyncpg's ``Record`` is a tuple-like row (indexed, iterated, unpacked) that its type stubs do not call
    a ``Sequence``; ``promote_rows`` only unpacks each row, so it takes them as they are, with no copy."""
    return cast("list[Sequence[Any]]", records)


UNIQUE_VIOLATION = "23505"


@dataclass(frozen=True, slots=True)
class Amended:
    """The messages rewritten since a revision, and how many changes stamped them."""

    messages: list[EngineMessage]
    stamps: int


class IdTakenMeanwhile(Exception):
    """A concurrent append stored an id of this batch after the statement's snapshot was taken: nothing was
    written, and the locked path (which sees that append) replays or refuses it."""


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A validated message ready to store; ``kind`` and ``token_estimate`` are derived before the write."""

    id: str
    role: Role
    kind: Kind
    content: Content
    metadata: dict[str, Any]
    run_id: str | None
    created_at: datetime
    token_estimate: int
    facts: MessageFacts
    """What search and analytics read, derived from the parts before the write."""
    search_config: str
    """The text search configuration the searchable text is indexed with."""
    unusual_text: bool = False
    """Content or metadata holds a NUL or an unpaired surrogate: its metadata is stored escaped."""

    def same_fact_as(self, stored: "NewMessage | MessageRecord") -> bool:
        """A retry is the same message when what happened is the same; metadata may have been amended."""
        return stored.role == self.role and stored.run_id == self.run_id and same_json(stored.content, self.content)


@dataclass(frozen=True, slots=True)
class PageBudget:
    """How much one page may hold, besides its count: stored bytes (content and metadata) and content parts.
    A single message larger than the budget still makes a page alone, so a walk always moves on."""

    max_bytes: int
    max_parts: int

    def rows_within(self, sizes: Sequence[tuple[int, int]]) -> int:
        """How many of the leading rows (their (bytes, parts)) fit; at least one when there is one."""
        total_bytes = total_parts = 0
        for taken, (size, parts) in enumerate(sizes):
            total_bytes += size
            total_parts += parts
            if taken and (total_bytes > self.max_bytes or total_parts > self.max_parts):
                return taken
        return len(sizes)


@dataclass(frozen=True, slots=True)
class AppendResult:
    messages: list[MessageRecord]
    """The stored messages in request order, already-stored ones included."""
    created: int
    conflicts: list[tuple[int, str]]
    """(request index, id) of ids already stored with different content; nothing is written then."""


def to_persisted(row: MessageRecord) -> PersistedMessage:
    return PersistedMessage(
        id=row.id,
        session_id=row.session_id,
        seq=row.seq,
        role=row.role,
        content=row.content,
        created_at=row.created_at,
        metadata=row.metadata,
        run_id=row.run_id,
        token_estimate=row.token_estimate,
        unusual_text=row.unusual_text,
    )


def _records(rows: Iterable[Any]) -> list[MessageRecord]:
    """Rows of ``MessageRecord``'s columns as records, the metadata of marked ones unescaped; one check in C
    for the whole read when none is marked (the common case)."""
    records = list(map(MessageRecord._make, rows))
    if any(map(_RECORD_UNUSUAL, records)):
        return [_restored(record) if record.unusual_text else record for record in records]
    return records


def _restored(record: MessageRecord) -> MessageRecord:
    return record._replace(metadata=unescape_strings(record.metadata))


def _promoted(rows: list[asyncpg.Record] | list[tuple[Any, ...]]) -> list[EngineMessage]:
    """Rows of ``PersistedMessage``'s columns promoted, the metadata of marked ones unescaped first."""
    unpackable = _unpackable(rows)
    if not any(map(_PERSISTED_UNUSUAL, unpackable)):
        return promote_rows(unpackable)
    restored = [
        _with_metadata(row, unescape_strings(row[_PERSISTED_METADATA])) if _PERSISTED_UNUSUAL(row) else row
        for row in unpackable
    ]
    return promote_rows(restored)


def _with_metadata(row: Sequence[Any], metadata: dict[str, Any]) -> tuple[Any, ...]:
    return (*row[:_PERSISTED_METADATA], metadata, *row[_PERSISTED_METADATA + 1 :])


def _array_literal(values: Sequence[str]) -> str:
    """``values`` as PostgreSQL array text, each element quoted (``text[]`` input syntax)."""
    quoted = ('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"


def _json_text(value: object) -> str:
    return dumps(value).decode()


def _appended_columns(batch: Sequence[NewMessage]) -> list[list[Any]]:
    """One list per column of ``_APPENDED``, in its order: the array parameters of ``_APPEND_NEW_SQL``."""
    return [
        [message.id for message in batch],
        [message.run_id for message in batch],
        [message.role for message in batch],
        [str(message.kind) for message in batch],
        [_json_text(message.content) for message in batch],
        [jsonb_text(escape_strings(m.metadata) if m.unusual_text else m.metadata) for m in batch],
        [message.token_estimate for message in batch],
        [message.created_at for message in batch],
        [message.unusual_text for message in batch],
        [message.search_config for message in batch],
        [message.facts.search_text for message in batch],
        [_array_literal(message.facts.tool_calls) for message in batch],
        [_array_literal(message.facts.tool_results) for message in batch],
        [_array_literal(message.facts.tool_errors) for message in batch],
    ]


def _insertable(tenant_id: str, row: MessageRecord) -> dict[str, Any]:
    values = {"tenant_id": tenant_id, **row._asdict()}
    if row.unusual_text:
        values["metadata"] = escape_strings(row.metadata)
    return values


class MessageRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    def _in_session(self, session_id: str) -> tuple[Any, Any]:
        return messages.c.tenant_id == self._tenant, messages.c.session_id == session_id

    async def lock_session(self, session_id: str) -> int | None:
        """Takes the session's append lock for this transaction; returns its last seq, None if unknown."""
        statement = (
            select(sessions.c.last_seq)
            .where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
            .with_for_update()
        )
        return (await self._db.execute(statement)).scalar_one_or_none()

    async def append_new(self, session_id: str, batch: list[NewMessage]) -> AppendResult | None:
        """Stores a batch of new messages in one statement, and announces them; None when it wrote nothing
        (an id is already stored, the session is unknown, or the batch holds a boundary or a summary), and
        ``IdTakenMeanwhile`` when a concurrent append stored one of its ids: then take the lock and
        ``append``, which sorts each case out.

        Call it on a connection in autocommit (``Database.single_write``): the statement is its own
        transaction, so the whole append is one round trip."""
        if changes_live_start([message.kind for message in batch]):
            return None
        parameters = (self._tenant, session_id, len(batch), *_appended_columns(batch))
        try:
            # Through the Core connection, not the driver's, so that a connection in a transaction (behind a
            # transaction pooler) sends its BEGIN first.
            row = (await self._db.exec_driver_sql(_APPEND_NEW_SQL, parameters)).first()
        except IntegrityError as error:
            if getattr(error.orig, "sqlstate", None) == UNIQUE_VIOLATION:
                raise IdTakenMeanwhile(session_id) from error
            raise
        if row is None:
            return None
        base: int = row[0]
        stored = [self._record(session_id, base + position, message) for position, message in enumerate(batch, 1)]
        return AppendResult(messages=stored, created=len(stored), conflicts=[])

    @staticmethod
    def _record(session_id: str, seq: int, message: NewMessage) -> MessageRecord:
        return MessageRecord(
            id=message.id,
            session_id=session_id,
            seq=seq,
            role=message.role,
            kind=str(message.kind),
            content=message.content,
            metadata=message.metadata,
            run_id=message.run_id,
            created_at=message.created_at,
            token_estimate=message.token_estimate,
            unusual_text=message.unusual_text,
        )

    async def append(self, session_id: str, last_seq: int, batch: list[NewMessage]) -> AppendResult:
        """Stores ``batch`` after ``last_seq``; call with the session lock held (``lock_session``)."""
        ids = list({message.id for message in batch})
        existing_rows = await self._db.execute(
            select(*MESSAGE_COLUMNS).where(*self._in_session(session_id), messages.c.id.in_(ids))
        )
        stored = {row.id: row for row in _records(existing_rows)}
        conflicts = [
            (index, message.id)
            for index, message in enumerate(batch)
            if message.id in stored and not message.same_fact_as(stored[message.id])
        ]
        if conflicts:
            return AppendResult(messages=[], created=0, conflicts=conflicts)

        new_rows: list[MessageRecord] = []
        searchable: list[dict[str, Any]] = []
        for message in batch:
            if message.id in stored:
                continue
            last_seq += 1
            row = self._record(session_id, last_seq, message)
            stored[message.id] = row
            new_rows.append(row)
            searchable.append(search_columns(message.facts, message.search_config))

        if new_rows:
            await self._db.execute(
                insert(messages),
                [
                    {**_insertable(self._tenant, row), **search}
                    for row, search in zip(new_rows, searchable, strict=True)
                ],
            )
            await self._db.execute(
                update(sessions)
                .where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
                .values(last_seq=last_seq, revision=sessions.c.revision + len(new_rows), updated_at=func.now())
            )
            if changes_live_start([message.kind for message in batch]):
                await self.refresh_live_start(session_id)
        return AppendResult(messages=[stored[message.id] for message in batch], created=len(new_rows), conflicts=[])

    async def page(
        self,
        session_id: str,
        *,
        limit: int,
        after_seq: int | None,
        before_seq: int | None,
        backwards: bool,
        budget: PageBudget | None = None,
    ) -> tuple[list[MessageRecord], bool]:
        """The ``limit`` rows next to the cursor in walk order (newest first when ``backwards``), fewer when
        they pass the ``budget``, and whether more lie beyond them. Reads within the caller's snapshot."""
        cursors = [seq for seq in (after_seq, before_seq) if seq is not None]
        shape = after_seq is not None, before_seq is not None, backwards
        connection = await driver(self._db)
        if budget is not None:
            sizes = await connection.fetch(_PAGE_SIZES_SQL[shape], self._tenant, session_id, limit + 1, *cursors)
            fitting = budget.rows_within([(row[0], row[1]) for row in sizes])
            if fitting < min(limit, len(sizes)):
                # Cut by the budget: the same snapshot reads exactly the rows that fit, and more lie beyond.
                rows = _records(await connection.fetch(_PAGE_SQL[shape], self._tenant, session_id, fitting, *cursors))
                return rows, True
        rows = _records(await connection.fetch(_PAGE_SQL[shape], self._tenant, session_id, limit + 1, *cursors))
        return rows[:limit], len(rows) > limit

    async def get(self, session_id: str, message_id: str, *, lock: bool = False) -> MessageRecord | None:
        """With ``lock``, the row stays locked until the transaction ends (an amendment checks, then writes)."""
        sql = _GET_SQL + " FOR UPDATE" if lock else _GET_SQL
        row = await (await driver(self._db)).fetchrow(sql, self._tenant, session_id, message_id)
        return _records([row])[0] if row is not None else None

    def _next_revision(self, session_id: str) -> ScalarSelect[Any]:
        """The revision the change being written will give the session (its rows stamped with it are what a
        window kept before it re-reads); call with the session lock held, before bumping it."""
        return (
            select(sessions.c.revision + 1)
            .where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
            .scalar_subquery()
        )

    async def amend_metadata(
        self, session_id: str, message_id: str, changes: dict[str, Any], *, unusual_text: bool = False
    ) -> MessageRecord | None:
        """Shallow merge: keys with a None value are removed. Content is never touched. ``unusual_text``:
        the changes hold text that is stored escaped, and the message is marked."""
        if unusual_text:
            changes = escape_strings(changes)
        merged = merged_metadata(messages.c.metadata, changes)
        statement = (
            update(messages)
            .where(*self._in_session(session_id), messages.c.id == message_id)
            .values(
                metadata=merged,
                unusual_text=messages.c.unusual_text | unusual_text,
                amended_revision=self._next_revision(session_id),
            )
            .returning(*MESSAGE_COLUMNS)
        )
        row = (await self._db.execute(statement)).first()
        if row is None:
            return None
        await self._db.execute(
            update(sessions)
            .where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
            .values(revision=sessions.c.revision + 1, updated_at=func.now())
        )
        record = _records([row])[0]
        if changes_live_start([Kind(record.kind)]):
            await self.refresh_live_start(session_id)
        return record

    async def mark_compacted(self, session_id: str, message_ids: list[str], compacted_at: str) -> list[str]:
        """Sets ``compactedAt`` on the given tool results that do not have it yet; returns those marked."""
        patch = bindparam("patch", {"compactedAt": compacted_at}, type_=JSONB)
        statement = (
            update(messages)
            .where(
                *self._in_session(session_id),
                messages.c.id.in_(message_ids),
                messages.c.kind == str(Kind.TOOL_RESULT),
                ~messages.c.metadata.has_key("compactedAt"),
            )
            .values(
                metadata=messages.c.metadata.op("||", return_type=JSONB)(patch),
                amended_revision=self._next_revision(session_id),
            )
            .returning(messages.c.id)
        )
        marked = [row.id for row in await self._db.execute(statement)]
        if marked:
            await self._db.execute(
                update(sessions)
                .where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
                .values(revision=sessions.c.revision + 1, updated_at=func.now())
            )
        return marked

    async def by_kinds(self, session_id: str, kinds: tuple[Kind, ...]) -> list[EngineMessage]:
        """Every message of the given kinds, oldest first: one index range per kind."""
        rows = await (await driver(self._db)).fetch(
            _BY_KINDS_SQL, self._tenant, session_id, [str(kind) for kind in kinds]
        )
        return _promoted(rows)

    async def live_history(self, session_id: str) -> list[EngineMessage]:
        """The messages from the newest complete compaction on, which is what the model view needs and no
        more: that compaction's summary, its kept tail and everything after its boundary; the whole session
        when it has never been compacted.

        Where that starts is kept on the session row (``app.store.live_start``), so this is one statement
        reading that row and one seq range: its cost follows the live history, whatever the planner knows.
        """
        return _promoted(await (await driver(self._db)).fetch(_LIVE_HISTORY_SQL, self._tenant, session_id))

    async def stored_live_start(self, session_id: str) -> LiveStart | None:
        """The live history's start as the session row keeps it; None without a complete compaction (or
        without the session)."""
        row = await (await driver(self._db)).fetchrow(_LIVE_START_SQL, self._tenant, session_id)
        if row is None or row[0] is None:
            return None
        return LiveStart(row[0], row[1], row[2])

    async def find_live_start(self, session_id: str) -> LiveStart | None:
        """The live history's start found by searching the session: its boundaries and summaries through the
        kind index, then the messages the boundaries name. What ``refresh_live_start`` keeps on the row."""
        markers = await self.by_kinds(session_id, MARKER_KINDS)
        named = named_through_ids(markers)
        rows = await (await driver(self._db)).fetch(_BY_IDS_SQL, self._tenant, session_id, named) if named else []
        return live_start(markers, _promoted(rows))

    async def refresh_live_start(self, session_id: str) -> None:
        """Writes what ``find_live_start`` finds onto the session row; call with the session lock held."""
        found = await self.find_live_start(session_id)
        seqs = (found.boundary_seq, found.summary_seq, found.start_seq) if found else (None, None, None)
        await (await driver(self._db)).execute(_SET_LIVE_START_SQL, self._tenant, session_id, *seqs)

    async def metadata_of(self, session_id: str, message_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The current metadata of the given messages, by id (content never changes, metadata may)."""
        rows = await (await driver(self._db)).fetch(_METADATA_SQL, self._tenant, session_id, list(message_ids))
        return {row[0]: unescape_strings(row[1]) if row[2] else row[1] for row in rows}

    async def amended_since(self, session_id: str, revision: int) -> Amended:
        """The messages whose view a change after ``revision`` rewrote (``amended_revision``), oldest first,
        promoted, and how many such changes their stamps name: one index range, whatever the session's
        length. A message rewritten twice keeps only the later stamp."""
        rows = await (await driver(self._db)).fetch(_AMENDED_SQL, self._tenant, session_id, revision)
        return Amended(_promoted([row[:-1] for row in rows]), len({row[-1] for row in rows}))

    async def seq_range(self, session_id: str, first_seq: int, last_seq: int) -> list[EngineMessage]:
        """The messages from ``first_seq`` to ``last_seq``, both included, oldest first, promoted: a closed
        range, which every plan answers from the primary key."""
        rows = await (await driver(self._db)).fetch(_SEQ_RANGE_SQL, self._tenant, session_id, first_seq, last_seq)
        return _promoted(rows)

    async def from_seq(self, session_id: str, first_seq: int) -> list[EngineMessage]:
        """Every message from ``first_seq`` on, oldest first, promoted."""
        rows = await (await driver(self._db)).fetch(_FROM_SEQ_SQL, self._tenant, session_id, first_seq)
        return _promoted(rows)
