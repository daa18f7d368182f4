"""The connection pool and the unit of work: one transaction per request, committed by the caller."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from app import lossless_json
from app.settings import Settings


def _dumps(value: object) -> str:
    return lossless_json.dumps(value).decode()


def create_engine(url: str, settings: Settings) -> AsyncEngine:
    """An engine whose connections fail fast: bounded connect, statement and lock waits, and pre-ping so a
    restarted PostgreSQL costs one retry instead of an error per stale pooled connection."""
    server_settings = {"application_name": "projector"}
    if settings.statement_timeout_ms:
        server_settings["statement_timeout"] = str(settings.statement_timeout_ms)
    if settings.lock_timeout_ms:
        server_settings["lock_timeout"] = str(settings.lock_timeout_ms)
    engine = create_async_engine(
        url,
        pool_size=settings.pool_size,
        max_overflow=settings.pool_max_overflow,
        pool_timeout=settings.pool_timeout_seconds,
        pool_pre_ping=True,
        # Bound values are request data (message text, titles): keep them out of error messages and logs.
        hide_parameters=True,
        json_serializer=_dumps,
        json_deserializer=lossless_json.loads,
        connect_args={"timeout": settings.connect_timeout_seconds, "server_settings": server_settings},
    )
    event.listen(engine.sync_engine, "connect", _decode_jsonb_with_orjson)
    return engine


def _decode_jsonb_with_orjson(dbapi_connection: Any, _record: object) -> None:
    """Replaces the dialect's jsonb codec with orjson called by asyncpg itself, in the text format: the
    text arrives as one ``str`` and ``orjson.loads`` takes it with no Python call in between (the binary
    format needs a wrapper to strip its version byte: about 10% slower on a 10,000-message window, measured
    with both codecs on one database). SQLAlchemy hands over jsonb parameters already serialized
    (``json_serializer``), so ``str`` passes them on as they are. Runs after the dialect's own set-up, since
    it was registered later."""
    dbapi_connection.run_async(
        lambda connection: connection.set_type_codec(
            "jsonb", schema="pg_catalog", encoder=str, decoder=orjson.loads, format="text"
        )
    )
    # Message content is ``json``, whose text may spell an unpaired surrogate, which orjson refuses: the
    # rare value it refuses is read again by the standard library (``lossless_json``).
    dbapi_connection.run_async(
        lambda connection: connection.set_type_codec(
            "json", schema="pg_catalog", encoder=str, decoder=lossless_json.loads, format="text"
        )
    )


_TAKE_SNAPSHOT = text("SELECT 1")
"""Any statement begins the transaction and fixes its snapshot; this one reads nothing."""


class Database:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """Commits when the block ends normally and rolls back on any exception."""
        async with self.engine.begin() as connection:
            yield connection

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncConnection]:
        """A read-only snapshot: every read in the block, Core or raw driver, in whatever order, sees the same
        committed state. The snapshot is taken here, by the first statement, before the block runs: a
        REPEATABLE READ transaction fixes its snapshot at its first statement, and a raw driver read issued
        before any Core statement would otherwise run outside the transaction, in autocommit."""
        async with self.engine.connect() as connection:
            # As execution options, the level goes into the BEGIN itself (one round trip, not BEGIN then
            # SET TRANSACTION); the pool resets both when the connection goes back.
            await connection.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            await connection.execute(_TAKE_SNAPSHOT)
            yield connection
            await connection.rollback()

    @asynccontextmanager
    async def single_read(self) -> AsyncIterator[AsyncConnection]:
        """A connection in autocommit for one read that shares no snapshot with another (an ETag check):
        no BEGIN, SET or ROLLBACK round trips around it."""
        async with self.engine.connect() as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            yield connection

    async def ping(self) -> None:
        async with self.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()
