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
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from app.engine.kinds import Kind, Role
from app.engine.message import EngineMessage
from app.engine.persisted import Content, PersistedMessage
from app.engine.promotion import promote, promote_rows
from app.engine.search_text import MessageFacts
from app.projections.live_history import FIRST_SEQ, live_history_start_seq, newest_complete_compaction
from app.store.escaped_text import escape_strings, unescape_strings
from app.store.metadata import merged_metadata
from app.store.records import MessageRecord, core_columns, select_list
from app.store.search import search_columns
from app.store.tables import messages, sessions

MESSAGE_COLUMNS = core_columns(messages, MessageRecord._fields)

# The SQL below is assembled from these constants only; every value is a bind parameter.
_READ_COLUMNS = select_list(MessageRecord._fields)
_PERSISTED_COLUMNS = select_list([field.name for field in dataclasses.fields(PersistedMessage)])
"""``PersistedMessage``'s fields in declaration order: the row ``promote_rows`` takes."""

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
_BY_KINDS_SQL = f"SELECT {_PERSISTED_COLUMNS} FROM messages WHERE {_SCOPE} AND kind = ANY($3::text[]) ORDER BY seq"  # noqa: S608
_GET_SQL = f"SELECT {_READ_COLUMNS} FROM messages WHERE {_SCOPE} AND id = $3"  # noqa: S608
_METADATA_SQL = f"SELECT id, metadata, unusual_text FROM messages WHERE {_SCOPE} AND id = ANY($3::text[])"  # noqa: S608
_PERSISTED_UNUSUAL = itemgetter(len(_PERSISTED_COLUMNS.split(", ")) - 1)
_PERSISTED_METADATA = [field.name for field in dataclasses.fields(PersistedMessage)].index("metadata")
_RECORD_UNUSUAL = attrgetter("unusual_text")


def _unpackable(records: list[asyncpg.Record]) -> list[Sequence[Any]]:
    """asyncpg's ``Record`` is a tuple-like row (indexed, iterated, unpacked) that its type stubs do not call
    a ``Sequence``; ``promote_rows`` only unpacks each row, so it takes them as they are, with no copy."""
    return cast("list[Sequence[Any]]", records)


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
        return stored.role == self.role and stored.content == self.content and stored.run_id == self.run_id


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


def _promoted(rows: list[asyncpg.Record]) -> list[EngineMessage]:
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


def _insertable(tenant_id: str, row: MessageRecord) -> dict[str, Any]:
    values = {"tenant_id": tenant_id, **row._asdict()}
    if row.unusual_text:
        values["metadata"] = escape_strings(row.metadata)
    return values


class MessageRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    async def _driver(self) -> "asyncpg.Connection[asyncpg.Record]":
        """The asyncpg connection under this request's connection; its jsonb codec (set by the engine)
        decodes with orjson. Its reads run in the transaction ``Database`` began, so they share its snapshot."""
        raw = await self._db.get_raw_connection()
        return cast("asyncpg.Connection[asyncpg.Record]", raw.driver_connection)

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
            row = MessageRecord(
                id=message.id,
                session_id=session_id,
                seq=last_seq,
                role=message.role,
                kind=str(message.kind),
                content=message.content,
                metadata=message.metadata,
                run_id=message.run_id,
                created_at=message.created_at,
                token_estimate=message.token_estimate,
                unusual_text=message.unusual_text,
            )
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
                .values(last_seq=last_seq, revision=sessions.c.revision + 1, updated_at=func.now())
            )
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
        driver = await self._driver()
        if budget is not None:
            sizes = await driver.fetch(_PAGE_SIZES_SQL[shape], self._tenant, session_id, limit + 1, *cursors)
            fitting = budget.rows_within([(row[0], row[1]) for row in sizes])
            if fitting < min(limit, len(sizes)):
                # Cut by the budget: the same snapshot reads exactly the rows that fit, and more lie beyond.
                rows = _records(await driver.fetch(_PAGE_SQL[shape], self._tenant, session_id, fitting, *cursors))
                return rows, True
        rows = _records(await driver.fetch(_PAGE_SQL[shape], self._tenant, session_id, limit + 1, *cursors))
        return rows[:limit], len(rows) > limit

    async def get(self, session_id: str, message_id: str, *, lock: bool = False) -> MessageRecord | None:
        """With ``lock``, the row stays locked until the transaction ends (an amendment checks, then writes)."""
        sql = _GET_SQL + " FOR UPDATE" if lock else _GET_SQL
        row = await (await self._driver()).fetchrow(sql, self._tenant, session_id, message_id)
        return _records([row])[0] if row is not None else None

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
            .values(metadata=merged, unusual_text=messages.c.unusual_text | unusual_text)
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
        return _records([row])[0]

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
            .values(metadata=messages.c.metadata.op("||", return_type=JSONB)(patch))
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
        rows = await (await self._driver()).fetch(
            _BY_KINDS_SQL, self._tenant, session_id, [str(kind) for kind in kinds]
        )
        return _promoted(rows)

    async def live_history(self, session_id: str) -> list[EngineMessage]:
        """The messages from the newest complete compaction on, which is what the model view needs and no
        more: that compaction's summary, its kept tail and everything after its boundary; the whole session
        when it has never been compacted.

        The compaction records are found through the kind index (a handful of rows), so the cost is set by
        the window, not by the length of the history.
        """
        markers = await self.by_kinds(session_id, (Kind.COMPACT_BOUNDARY, Kind.COMPACT_SUMMARY))
        compaction = newest_complete_compaction(markers)
        if compaction is None:
            return await self.from_seq(session_id, FIRST_SEQ)
        known = [*markers]
        through_id = compaction.boundary.metadata.get("compactThroughMessageId")
        if isinstance(through_id, str) and through_id:
            through = await self.get(session_id, through_id)
            if through is not None:
                known.append(promote(to_persisted(through)))
        first_seq = live_history_start_seq(known) or FIRST_SEQ
        window = await self.from_seq(session_id, first_seq)
        if compaction.summary.seq < first_seq:
            window.insert(0, compaction.summary)
        return window

    async def metadata_of(self, session_id: str, message_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The current metadata of the given messages, by id (content never changes, metadata may)."""
        rows = await (await self._driver()).fetch(_METADATA_SQL, self._tenant, session_id, list(message_ids))
        return {row[0]: unescape_strings(row[1]) if row[2] else row[1] for row in rows}

    async def from_seq(self, session_id: str, first_seq: int) -> list[EngineMessage]:
        """Every message from ``first_seq`` on, oldest first, promoted."""
        rows = await (await self._driver()).fetch(_FROM_SEQ_SQL, self._tenant, session_id, first_seq)
        return _promoted(rows)
