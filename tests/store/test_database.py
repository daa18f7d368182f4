"""The unit of work: what each kind of connection the store hands out may see and do."""

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store import consistency
from app.store.database import Database, create_engine
from tests.conftest import settings_for_tests
from tests.database import plain_dsn


@pytest.fixture
async def one_connection_database(database_url: str) -> AsyncIterator[Database]:
    """A pool of exactly one connection, so every block below runs on the same server session."""
    database = Database(create_engine(database_url, settings_for_tests(pool_size=1, pool_max_overflow=0)))
    yield database
    await database.dispose()


async def transaction_characteristics(connection: AsyncConnection) -> tuple[str, str]:
    isolation = (await connection.execute(text("SHOW transaction_isolation"))).scalar_one()
    read_only = (await connection.execute(text("SHOW transaction_read_only"))).scalar_one()
    return isolation, read_only


async def test_a_read_is_one_repeatable_read_read_only_snapshot(one_connection_database: Database) -> None:
    async with one_connection_database.reading() as connection:
        assert await transaction_characteristics(connection) == ("repeatable read", "on")


async def test_a_write_after_a_read_on_the_same_connection_is_read_committed_and_writable(
    one_connection_database: Database,
) -> None:
    async with one_connection_database.reading() as connection:
        await transaction_characteristics(connection)
    async with one_connection_database.transaction() as connection:
        assert await transaction_characteristics(connection) == ("read committed", "off")


async def test_a_pooled_connection_the_server_ended_is_replaced_at_checkout(
    one_connection_database: Database, direct_database_url: str
) -> None:
    """A restart or a terminated backend costs a new connection, not an error, and no ping per checkout."""
    async with one_connection_database.transaction() as connection:
        ended = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
    other = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        assert await other.fetchval("SELECT pg_terminate_backend($1)", ended)
    finally:
        await other.close()
    await asyncio.sleep(0.2)
    async with one_connection_database.reading() as connection:
        assert (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one() != ended


async def test_a_write_whose_connection_breaks_after_its_commit_still_gets_its_position(
    database_url: str, direct_database_url: str
) -> None:
    """The commit stands: a failure to read its WAL position never turns the write into an error (a client
    told a write failed retries it). The position is server-wide, so a fresh connection reads it."""
    engine = create_engine(database_url, settings_for_tests())
    database = Database(engine, [engine])  # the primary read as a replica of itself: positions still compare
    other = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        with consistency.tracking(None) as request:
            async with database.single_write() as connection:
                await connection.execute(text("SELECT txid_current()"))
                ended = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
                assert await other.fetchval("SELECT pg_terminate_backend($1)", ended)
                await asyncio.sleep(0.2)
        now = await other.fetchval("SELECT pg_current_wal_insert_lsn()::text")
        assert request.written is not None and request.written <= consistency.parse_position(now)
    finally:
        await other.close()
        await database.dispose()
