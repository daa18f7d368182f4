"""Counting the statements a request sends to PostgreSQL, where they leave: SQLAlchemy's cursor (its Core
statements, which asyncpg runs as prepared statements its query logger does not see) and asyncpg's query
logger (raw driver statements, and the BEGIN, COMMIT and ROLLBACK the adapter sends). The app's pool holds one
connection, so every statement passes these two loggers."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import event

from app.main import create_app
from tests.conftest import settings_for_tests


@pytest.fixture
async def one_connection_app(database_url: str) -> AsyncIterator[FastAPI]:
    """An app whose pool holds one connection, so every statement a request sends passes one logger."""
    application = create_app(settings_for_tests(pool_size=1, pool_max_overflow=0), database_url=database_url)
    async with LifespanManager(application):
        yield application


@asynccontextmanager
async def statements_sent(app: FastAPI) -> AsyncIterator[list[str]]:
    """Every statement ``app``'s one connection sends while the block runs, in the order the loggers see them."""
    sent: list[str] = []
    engine = app.state.database.engine
    async with engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
    assert raw is not None

    def log_query(record: asyncpg.connection.LoggedQuery) -> None:
        sent.append(record.query)

    def log_cursor(_connection: object, _cursor: object, statement: str, *_args: object) -> None:
        sent.append(statement)

    raw.add_query_logger(log_query)
    event.listen(engine.sync_engine, "before_cursor_execute", log_cursor)
    try:
        yield sent
    finally:
        raw.remove_query_logger(log_query)
        event.remove(engine.sync_engine, "before_cursor_execute", log_cursor)
