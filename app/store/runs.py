"""``RunRepository``: a turn's request settings (agent, model, system, tools), amended when it ends."""

from datetime import datetime
from typing import Any

from sqlalchemy import func, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store.escaped_text import escape_fields, unescape_record, unescape_strings
from app.store.messages import PageBudget
from app.store.metadata import merged_metadata
from app.store.records import RunRecord, core_columns
from app.store.replicas import driver
from app.store.tables import runs

RUN_COLUMNS = core_columns(runs, RunRecord._fields)
_MODELS_SQL = "SELECT id, model FROM runs WHERE tenant_id = $1 AND session_id = $2 AND model IS NOT NULL"
"""A hand-written hot read (every ``/chat`` makes it), in the snapshot ``Database.reading`` began."""
_COUNT_IF_NAMED_SQL = (
    "WITH named AS ("
    " UPDATE messages SET amended_revision ="
    " (SELECT revision + 1 FROM sessions WHERE tenant_id = $1 AND id = $2)"
    " WHERE tenant_id = $1 AND session_id = $2 AND run_id = $3 RETURNING 1)"
    " UPDATE sessions SET revision = revision + 1 WHERE tenant_id = $1 AND id = $2"
    " AND EXISTS (SELECT 1 FROM named)"
)
"""A new run counts as a change of the session when a message names it already, and those messages are
stamped with the revision it gives (their view changed): one index range (the messages that name a run are
indexed by session and run), whatever the session's length."""


class RunRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    def _where(self, session_id: str, run_id: str) -> tuple[Any, ...]:
        return runs.c.tenant_id == self._tenant, runs.c.session_id == session_id, runs.c.id == run_id

    async def create(
        self, session_id: str, run_id: str, settings: dict[str, Any], *, created_at: datetime | None = None
    ) -> RunRecord | None:
        """Returns the new run, or None when the id is taken in this session. Call it holding the session's
        append lock (``MessageRepository.lock_session``).

        Messages may name a run before it exists, and its model then decides whose reasoning they hold: when
        one already does, the new run changes the session's views, and it counts as a change of the session
        (its revision), so that no kept window or cached view outlives it. A run no message names yet changes
        no view (the messages that will name it are appends), so it leaves the revision alone and the next
        ``/chat`` still extends the window it kept: runtimes that create a run a turn keep their reuse. The
        lock makes the check see every append that committed before it, and holds back those that did not.
        ``created_at``: when the run was first created (an archive's), which orders a session's runs; now by
        default."""
        written = {"created_at": created_at} if created_at is not None else {}
        statement = (
            pg_insert(runs)
            .values(tenant_id=self._tenant, session_id=session_id, id=run_id, **escape_fields(settings), **written)
            .on_conflict_do_nothing(index_elements=[runs.c.tenant_id, runs.c.session_id, runs.c.id])
            .returning(*RUN_COLUMNS)
        )
        row = (await self._db.execute(statement)).first()
        if row is None:
            return None
        await self._db.exec_driver_sql(_COUNT_IF_NAMED_SQL, (self._tenant, session_id, run_id))
        return unescape_record(RunRecord._make(row))

    async def get(self, session_id: str, run_id: str, *, lock: bool = False) -> RunRecord | None:
        """With ``lock``, the row stays locked until the transaction ends (an amendment checks, then writes)."""
        statement = select(*RUN_COLUMNS).where(*self._where(session_id, run_id))
        row = (await self._db.execute(statement.with_for_update() if lock else statement)).first()
        return unescape_record(RunRecord._make(row)) if row else None

    async def amend(self, session_id: str, run_id: str, changes: dict[str, Any]) -> RunRecord | None:
        """Replaces ``usage`` and ``result``; merges ``metadata`` like a message's (null removes a key)."""
        escaped = escape_fields(changes)
        values = {key: value for key, value in escaped.items() if key != "metadata"}
        if "metadata" in escaped:
            values["metadata"] = merged_metadata(runs.c.metadata, escaped["metadata"])
        statement = (
            update(runs)
            .where(*self._where(session_id, run_id))
            .values(**values, updated_at=func.now())
            .returning(*RUN_COLUMNS)
        )
        row = (await self._db.execute(statement)).first()
        return unescape_record(RunRecord._make(row)) if row else None

    async def page(
        self,
        session_id: str,
        *,
        limit: int,
        after: tuple[datetime, str] | None,
        before: tuple[datetime, str] | None,
        backwards: bool,
        budget: PageBudget,
    ) -> tuple[list[RunRecord], bool]:
        """The ``limit`` runs next to a key (``(created_at, id)``, exclusive) in walk order, newest first when
        ``backwards``, fewer when they pass the ``budget``'s bytes, and whether more lie beyond them."""
        key = tuple_(runs.c.created_at, runs.c.id)
        where = [runs.c.tenant_id == self._tenant, runs.c.session_id == session_id]
        if after is not None:
            where.append(key > tuple_(*after))
        if before is not None:
            where.append(key < tuple_(*before))
        order = (runs.c.created_at.desc(), runs.c.id.desc()) if backwards else (runs.c.created_at, runs.c.id)
        sizes = await self._db.execute(select(runs.c.stored_bytes).where(*where).order_by(*order).limit(limit + 1))
        sized = [(size, 0) for (size,) in sizes]
        fitting = budget.rows_within(sized)
        cut = fitting < min(limit, len(sized))
        statement = select(*RUN_COLUMNS).where(*where).order_by(*order).limit(fitting if cut else limit + 1)
        rows = (await self._db.execute(statement)).all()
        records = [unescape_record(RunRecord._make(row)) for row in rows[:limit]]
        return records, cut or len(rows) > limit

    async def models(self, session_id: str) -> dict[str, object]:
        """Model reference per run (as stored), for assistant messages that do not name the model that wrote
        them."""
        rows = await (await driver(self._db)).fetch(_MODELS_SQL, self._tenant, session_id)
        return {run_id: unescape_strings(model) for run_id, model in rows}
