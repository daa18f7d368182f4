"""``RunRepository``: a turn's request settings (agent, model, system, tools), amended when it ends."""

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store.escaped_text import escape_fields, unescape_record, unescape_text
from app.store.metadata import merged_metadata
from app.store.records import RunRecord, core_columns
from app.store.tables import runs

RUN_COLUMNS = core_columns(runs, RunRecord._fields)


class RunRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    def _where(self, session_id: str, run_id: str) -> tuple[Any, ...]:
        return runs.c.tenant_id == self._tenant, runs.c.session_id == session_id, runs.c.id == run_id

    async def create(self, session_id: str, run_id: str, settings: dict[str, Any]) -> RunRecord | None:
        """Returns the new run, or None when the id is taken in this session."""
        statement = (
            pg_insert(runs)
            .values(tenant_id=self._tenant, session_id=session_id, id=run_id, **escape_fields(settings))
            .on_conflict_do_nothing(index_elements=[runs.c.tenant_id, runs.c.session_id, runs.c.id])
            .returning(*RUN_COLUMNS)
        )
        row = (await self._db.execute(statement)).first()
        return unescape_record(RunRecord._make(row)) if row else None

    async def get(self, session_id: str, run_id: str) -> RunRecord | None:
        row = (await self._db.execute(select(*RUN_COLUMNS).where(*self._where(session_id, run_id)))).first()
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

    async def models(self, session_id: str) -> dict[str, str]:
        """Model per run, for assistant messages that do not name the model that wrote them."""
        statement = select(runs.c.id, runs.c.model).where(
            runs.c.tenant_id == self._tenant, runs.c.session_id == session_id, runs.c.model.is_not(None)
        )
        return {row.id: unescape_text(row.model) for row in await self._db.execute(statement)}
