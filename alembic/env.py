"""Async migration environment. The URL comes from the caller (``app.store.migrations``) or the settings.

Migrations run under a PostgreSQL advisory lock so that processes starting together migrate once. The lock is
transaction-scoped and taken inside the migrations' one transaction: it ends with it, and it holds through a
transaction-pooling PgBouncer, where a session-scoped lock could be left behind on a server connection that
another client gets next. For the same reason no prepared statement is kept.
"""

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from app.settings import get_settings
from app.store.database import WITHOUT_KEPT_STATEMENTS
from app.store.tables import metadata

MIGRATION_LOCK_KEY = 0x70726F6A  # "proj"


def _database_url() -> str:
    url = context.config.attributes.get("database_url") or get_settings().database_url
    if not url:
        raise RuntimeError("no database URL: set DATABASE_URL or run `projector migrate`")
    return url


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, compare_type=True)
    with context.begin_transaction():
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        context.run_migrations()


async def _run_online() -> None:
    engine = create_async_engine(_database_url(), connect_args=WITHOUT_KEPT_STATEMENTS)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=_database_url(), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_online())
