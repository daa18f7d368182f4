"""The PostgreSQL the tests run against: ``TEST_DATABASE_URL`` when set, else an embedded one.

Either way each test run gets a fresh database of its own, migrated with alembic, and drops it at the end,
so a run never sees another's rows and the server's other databases are left alone.

``TEST_DATABASE_URL`` is how the service reaches the server, which may be through a transaction-pooling
PgBouncer; ``TEST_DIRECT_DATABASE_URL`` then names the same server without it, for what needs a server session
of its own (creating and dropping databases). Without it the two are the same.
"""

import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from app.store.embedded import EmbeddedPostgres


def asyncpg_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def plain_dsn(url: str) -> str:
    """asyncpg.connect wants a plain DSN: no SQLAlchemy driver suffix."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def as_served(url: str) -> str:
    """The database of ``url`` reached the way the service reaches the server (``TEST_DATABASE_URL``)."""
    served = os.environ.get("TEST_DATABASE_URL")
    if not served:
        return url
    return asyncpg_url(make_url(served).set(database=make_url(url).database).render_as_string(hide_password=False))


@contextmanager
def server_url() -> Iterator[tuple[str, EmbeddedPostgres | None]]:
    """The server's administrative URL, direct (no pooler), and the embedded server when one was started."""
    given = os.environ.get("TEST_DIRECT_DATABASE_URL") or os.environ.get("TEST_DATABASE_URL")
    if given:
        yield asyncpg_url(given), None
        return
    embedded = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="projector-test-")), delete_on_stop=True)
    try:
        yield embedded.url("postgres"), embedded
    finally:
        embedded.stop()


async def create_database(admin_url: str) -> str:
    name = f"projector_test_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(plain_dsn(admin_url))
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return asyncpg_url(str(make_url(admin_url).set(database=name).render_as_string(hide_password=False)))


async def drop_database(admin_url: str, url: str) -> None:
    name = make_url(url).database
    connection = await asyncpg.connect(plain_dsn(admin_url))
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


async def until_waiting_for(direct_url: str, holder: int, work: asyncio.Future[Any]) -> None:
    """Returns once some backend waits for a lock the backend ``holder`` (a pid) holds, or once ``work`` ended
    without waiting (the caller's assertions then say what went wrong). A fixed sleep before releasing the
    lock is a guess that a loaded machine loses: the work may not have reached the lock yet. ``direct_url``:
    no pooler, whose transaction mode could give each poll another server session."""
    watching = await asyncpg.connect(plain_dsn(direct_url))
    deadline = time.monotonic() + 60
    try:
        while not work.done() and time.monotonic() < deadline:
            if await watching.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", holder
            ):
                return
            await asyncio.sleep(0.01)
    finally:
        await watching.close()
