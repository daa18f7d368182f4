"""The migrations build the schema on an empty database, match the table definitions, and come down cleanly."""

import asyncio

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from app.store import migrations
from app.store.tables import metadata
from tests.database import create_database, drop_database, plain_dsn


@pytest.fixture
async def empty_database(database_server: str, database_url: str) -> str:
    url = await create_database(database_server)
    yield url
    await drop_database(database_server, url)


async def tables(url: str) -> set[str]:
    connection = await asyncpg.connect(plain_dsn(url))
    try:
        rows = await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await connection.close()
    return {row["tablename"] for row in rows}


async def test_upgrade_on_an_empty_database_then_downgrade_leaves_it_empty(empty_database: str) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database)
    assert {"sessions", "runs", "messages", "alembic_version"} <= await tables(empty_database)
    await asyncio.to_thread(migrations.downgrade, empty_database)
    assert await tables(empty_database) == {"alembic_version"}
    await asyncio.to_thread(migrations.upgrade, empty_database)
    assert {"sessions", "runs", "messages"} <= await tables(empty_database)


async def test_migrated_schema_matches_the_table_definitions(empty_database: str) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database)
    engine = create_async_engine(empty_database)
    async with engine.connect() as connection:
        differences = await connection.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync), metadata)
        )
    await engine.dispose()
    assert differences == []


async def test_model_references_stored_as_text_come_through_as_the_same_strings(empty_database: str) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database, "0004")
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        await connection.execute(
            "INSERT INTO sessions (tenant_id, id, model) VALUES ('t', 's1', 'anthropic/claude-sonnet-4-5')"
        )
        await connection.execute(
            "INSERT INTO runs (tenant_id, session_id, id, model) VALUES ('t', 's1', 'r1', 'gpt-5')"
        )
        await asyncio.to_thread(migrations.upgrade, empty_database)
        session_model = await connection.fetchval("SELECT model #>> '{}' FROM sessions")
        run_model = await connection.fetchval("SELECT jsonb_typeof(model) || ':' || (model #>> '{}') FROM runs")
    finally:
        await connection.close()
    assert (session_model, run_model) == ("anthropic/claude-sonnet-4-5", "string:gpt-5")
