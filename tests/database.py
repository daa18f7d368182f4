"""The PostgreSQL the tests run against: ``TEST_DATABASE_URL`` when set, else an embedded one.

Either way each test run gets a fresh database of its own, migrated with alembic, and drops it at the end,
so a run never sees another's rows and the server's other databases are left alone.
"""

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from app.store.embedded import EmbeddedPostgres


def asyncpg_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def plain_dsn(url: str) -> str:
    """asyncpg.connect wants a plain DSN: no SQLAlchemy driver suffix."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def server_url() -> Iterator[tuple[str, EmbeddedPostgres | None]]:
    given = os.environ.get("TEST_DATABASE_URL")
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
