"""Which server a read runs on: a streaming replica when one is reachable and has replayed far enough,
otherwise the primary.

Replicas take turns. A read without a consistency token takes the next reachable replica as it is (a replica
lags the primary by a moment). A read with one takes a replica that has replayed past the token; when none
has, it polls the ones it reached until one does or ``wait_seconds`` pass, then the primary serves it, so a
paused or lagging replica costs a client at most that wait and never hides its own write. A replica that
cannot be reached is skipped for a few seconds rather than retried by every read.
"""

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import cast

import asyncpg
from prometheus_client import Counter
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.store.consistency import parse_position

log = logging.getLogger("projector.replicas")

UNREACHABLE_SECONDS = 5.0
"""How long a replica that failed to connect or answer is left out before reads try it again."""
FIRST_POLL_SECONDS = 0.002
LONGEST_POLL_SECONDS = 0.05
"""A waiting read checks the replica's replay position after 2 ms, then twice as long each time up to this."""

READS = Counter(
    "projector_replica_reads_total",
    "Read snapshots when replicas are configured, by the server that served them and why",
    ["server", "reason"],
)

_REPLAYED_SQL = (
    "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text"
)
"""How far a server has replayed the primary's log. A server that is not in recovery is a primary and
current by definition (a read URL may name the primary itself, or a pooler in front of it)."""


@dataclass(slots=True)
class Replica:
    engine: AsyncEngine
    unreachable_until: float = 0.0


async def driver(connection: AsyncConnection) -> "asyncpg.Connection[asyncpg.Record]":
    """The asyncpg connection under ``connection``: for a hand-written hot read, which runs in whatever
    transaction ``Database`` began (so a read shares its snapshot) and decodes jsonb with the engine's codec,
    and for a statement SQLAlchemy must not wrap in a transaction."""
    raw = await connection.get_raw_connection()
    return cast("asyncpg.Connection[asyncpg.Record]", raw.driver_connection)


async def replayed_position(connection: AsyncConnection) -> int:
    """Read outside any transaction, before the read's snapshot is taken: a snapshot taken afterwards
    sees every commit up to this position."""
    text = await (await driver(connection)).fetchval(_REPLAYED_SQL)
    return parse_position(text) if text else 0


class ReadRouting:
    def __init__(self, primary: AsyncEngine, replicas: Sequence[AsyncEngine], wait_seconds: float) -> None:
        self.primary = primary
        self.replicas = [Replica(engine) for engine in replicas]
        self.wait_seconds = wait_seconds
        self._turn = 0

    @asynccontextmanager
    async def connect(self, wanted: int | None) -> AsyncIterator[AsyncConnection]:
        """A connection, out of any transaction, whose server has replayed past ``wanted`` (if given)."""
        replica = None
        if self.replicas:
            replica = await self._any_replica() if wanted is None else await self._replica_past(wanted)
        if replica is None:
            async with self.primary.connect() as connection:
                yield connection
            return
        try:
            yield replica
        finally:
            await replica.close()

    async def _any_replica(self) -> AsyncConnection | None:
        for replica in self._in_turn():
            connection = await self._reach(replica)
            if connection is not None:
                READS.labels("replica", "no_token").inc()
                return connection
        READS.labels("primary", "replicas_unreachable").inc()
        return None

    async def _replica_past(self, wanted: int) -> AsyncConnection | None:
        lagging: list[tuple[Replica, AsyncConnection]] = []
        try:
            for replica in self._in_turn():
                connection = await self._reach(replica)
                if connection is None:
                    continue
                position = await self._position(replica, connection)
                if position is not None and position >= wanted:
                    READS.labels("replica", "caught_up").inc()
                    return connection
                if position is not None:
                    lagging.append((replica, connection))
            if not lagging:
                READS.labels("primary", "replicas_unreachable").inc()
                return None
            deadline = time.monotonic() + self.wait_seconds
            delay = FIRST_POLL_SECONDS
            while lagging and (remaining := deadline - time.monotonic()) > 0:
                await asyncio.sleep(min(delay, remaining))
                delay = min(delay * 2, LONGEST_POLL_SECONDS)
                for index, (replica, connection) in enumerate(lagging):
                    position = await self._position(replica, connection)
                    if position is not None and position >= wanted:
                        del lagging[index]
                        READS.labels("replica", "waited").inc()
                        return connection
                lagging = [(replica, connection) for replica, connection in lagging if not connection.closed]
            READS.labels("primary", "replicas_behind" if lagging else "replicas_unreachable").inc()
            return None
        finally:
            for _, connection in lagging:
                await connection.close()

    def _in_turn(self) -> list[Replica]:
        """The reachable replicas, starting one further along each time, so reads spread over them."""
        start = self._turn % len(self.replicas)
        self._turn += 1
        now = time.monotonic()
        ordered = self.replicas[start:] + self.replicas[:start]
        return [replica for replica in ordered if replica.unreachable_until <= now]

    async def _reach(self, replica: Replica) -> AsyncConnection | None:
        try:
            return await replica.engine.connect()
        except Exception:
            self._left_out(replica)
            return None

    async def _position(self, replica: Replica, connection: AsyncConnection) -> int | None:
        """The replica's replay position; None (the connection closed, the replica left out) if it fails."""
        try:
            return await replayed_position(connection)
        except Exception:
            await connection.invalidate()
            await connection.close()
            self._left_out(replica)
            return None

    def _left_out(self, replica: Replica) -> None:
        replica.unreachable_until = time.monotonic() + UNREACHABLE_SECONDS
        log.warning(
            "read replica unreachable; reads go elsewhere for a while",
            exc_info=True,
            extra={"replica": replica.engine.url.render_as_string(hide_password=True)},
        )
