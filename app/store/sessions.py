"""``SessionRepository``: sessions, scoped by tenant. Another tenant's session is simply not found."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store.escaped_text import escape_fields, unescape_record
from app.store.live_start import LiveStart
from app.store.records import SessionRecord, core_columns, select_list
from app.store.replicas import driver
from app.store.tables import sessions

SESSION_COLUMNS = core_columns(sessions, SessionRecord._fields)
_LIVE_START_FIELDS = ("compaction_boundary_seq", "compaction_summary_seq", "live_history_start_seq")
_WITH_LIVE_START_SQL = (
    f"SELECT {select_list([*SessionRecord._fields, *_LIVE_START_FIELDS])}"  # noqa: S608
    " FROM sessions WHERE tenant_id = $1 AND id = $2"
)

_CREATED_AT_SQL = "SELECT created_at FROM sessions WHERE tenant_id = $1 AND id = $2"


class SessionRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    async def create(
        self,
        session_id: str,
        *,
        title: str | None,
        metadata: dict[str, Any],
        model: str | Mapping[str, Any] | None,
        context_window_tokens: int | None,
    ) -> SessionRecord | None:
        """Returns the new session, or None when the id is taken in this tenant."""
        statement = (
            pg_insert(sessions)
            .values(
                tenant_id=self._tenant,
                id=session_id,
                context_window_tokens=context_window_tokens,
                **escape_fields({"title": title, "metadata": metadata, "model": model}),
            )
            .on_conflict_do_nothing(index_elements=[sessions.c.tenant_id, sessions.c.id])
            .returning(*SESSION_COLUMNS)
        )
        row = (await self._db.execute(statement)).first()
        return unescape_record(SessionRecord._make(row)) if row else None

    async def get(self, session_id: str) -> SessionRecord | None:
        statement = select(*SESSION_COLUMNS).where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
        row = (await self._db.execute(statement)).first()
        return unescape_record(SessionRecord._make(row)) if row else None

    async def hold(self, session_id: str) -> bool:
        """Whether the session exists, kept so until the transaction ends: its row is locked ``FOR KEY SHARE``,
        the lock a foreign key's check takes, so a deletion that commits meanwhile is waited for and seen here
        (the row is then gone), rather than refusing a row written after this that refers to the session."""
        statement = (
            select(sessions.c.id)
            .where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
            .with_for_update(read=True, key_share=True)
        )
        return (await self._db.execute(statement)).first() is not None

    async def created_at(self, session_id: str) -> datetime | None:
        """When the session was created, None without it: what tells it from one deleted and created again
        under the same id. A hand-written hot read (an event stream makes it before each read)."""
        created_at: datetime | None = await (await driver(self._db)).fetchval(_CREATED_AT_SQL, self._tenant, session_id)
        return created_at

    async def get_with_live_start(self, session_id: str) -> tuple[SessionRecord, LiveStart | None] | None:
        """The session and where its live history starts as the row keeps it (``MessageRepository.
        stored_live_start``), in one statement: a hand-written hot read (every ``/chat`` and context report
        makes it) in the snapshot ``Database.reading`` began."""
        row = await (await driver(self._db)).fetchrow(_WITH_LIVE_START_SQL, self._tenant, session_id)
        if row is None:
            return None
        record = unescape_record(SessionRecord._make(row[: len(SessionRecord._fields)]))
        boundary, summary, start = row[len(SessionRecord._fields) :]
        return record, None if boundary is None else LiveStart(boundary, summary, start)

    async def page(
        self, *, limit: int, newest_first: bool, after: tuple[datetime, str] | None
    ) -> tuple[list[SessionRecord], bool]:
        """Keyset page over (created_at, id); ``after`` is the last key of the previous page."""
        key = tuple_(sessions.c.created_at, sessions.c.id)
        statement = select(*SESSION_COLUMNS).where(sessions.c.tenant_id == self._tenant)
        if after is not None:
            statement = statement.where(key < tuple_(*after) if newest_first else key > tuple_(*after))
        order = (
            (sessions.c.created_at.desc(), sessions.c.id.desc())
            if newest_first
            else (
                sessions.c.created_at.asc(),
                sessions.c.id.asc(),
            )
        )
        rows = (await self._db.execute(statement.order_by(*order).limit(limit + 1))).all()
        return [unescape_record(SessionRecord._make(row)) for row in rows[:limit]], len(rows) > limit

    async def delete(self, session_id: str) -> bool:
        statement = delete(sessions).where(sessions.c.tenant_id == self._tenant, sessions.c.id == session_id)
        return (await self._db.execute(statement)).rowcount > 0
