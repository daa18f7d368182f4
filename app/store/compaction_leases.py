"""``CompactionLeaseRepository``: at most one compaction per session at a time, without holding a connection.

A compaction may wait minutes for its summarizer, so it cannot keep a transaction (or an advisory lock, which
lives as long as one) open meanwhile. Instead it takes a lease: one row per session naming the holder and an
expiry. Another compaction of the session is refused while the row is live; an expired row counts as absent
and is taken over, so a process that died mid-compaction frees the session by itself. Times come from the
database clock, so replicas agree on expiry.
"""

import uuid
from datetime import timedelta

from sqlalchemy import Interval, delete, func, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store.tables import compaction_leases


class CompactionLeaseRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    async def take(self, session_id: str, lease_seconds: float) -> str | None:
        """The new lease's holder token, or None while another compaction holds a live lease. The session
        must exist and stay so until the transaction ends (the row references it: ``SessionRepository.hold``)."""
        token = uuid.uuid4().hex
        table = compaction_leases
        new_lease = pg_insert(table).values(
            tenant_id=self._tenant,
            session_id=session_id,
            holder=token,
            expires_at=func.now() + literal(timedelta(seconds=lease_seconds), Interval()),
        )
        statement = new_lease.on_conflict_do_update(
            index_elements=[table.c.tenant_id, table.c.session_id],
            set_={"holder": new_lease.excluded.holder, "expires_at": new_lease.excluded.expires_at},
            where=table.c.expires_at <= func.now(),
        ).returning(table.c.holder)
        holder = (await self._db.execute(statement)).scalar_one_or_none()
        return token if holder == token else None

    async def holds(self, session_id: str, token: str) -> bool:
        """Whether ``token`` still holds the session's lease (it may have expired and been taken over)."""
        statement = select(compaction_leases.c.holder).where(
            compaction_leases.c.tenant_id == self._tenant,
            compaction_leases.c.session_id == session_id,
            compaction_leases.c.holder == token,
        )
        return (await self._db.execute(statement)).first() is not None

    async def extend(self, session_id: str, token: str, lease_seconds: float) -> bool:
        """Whether ``token`` still held the lease (as ``holds`` says), which then runs ``lease_seconds`` from
        now."""
        table = compaction_leases
        statement = (
            update(table)
            .where(
                table.c.tenant_id == self._tenant,
                table.c.session_id == session_id,
                table.c.holder == token,
            )
            .values(expires_at=func.now() + literal(timedelta(seconds=lease_seconds), Interval()))
            .returning(table.c.holder)
        )
        return (await self._db.execute(statement)).first() is not None

    async def release(self, session_id: str, token: str) -> None:
        """Ends the lease if ``token`` still holds it; a lease taken over since is left alone."""
        await self._db.execute(
            delete(compaction_leases).where(
                compaction_leases.c.tenant_id == self._tenant,
                compaction_leases.c.session_id == session_id,
                compaction_leases.c.holder == token,
            )
        )
