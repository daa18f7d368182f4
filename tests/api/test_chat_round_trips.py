"""A ``/chat`` on a kept window sends few statements: the session row is read with its live start, the
remembered prefix in the same snapshot, and the prefix written back by one statement in autocommit."""

from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import event

from app.main import create_app
from tests.api.wire import append, assistant, new_session, user
from tests.conftest import settings_for_tests

pytestmark = pytest.mark.db

BODY = {"sessionId": "chat-rt", "provider": "anthropic", "model": "claude-sonnet-4-5"}


@pytest.fixture
async def one_connection_app(database_url: str) -> AsyncIterator[FastAPI]:
    """An app whose pool holds one connection, so every statement a request sends passes one logger."""
    application = create_app(settings_for_tests(pool_size=1, pool_max_overflow=0), database_url=database_url)
    async with LifespanManager(application):
        yield application


async def _statements_of_a_warm_chat(app: FastAPI) -> list[str]:
    """Counted as ``tests/store/test_append_round_trips.py`` counts them: SQLAlchemy's cursor and asyncpg's
    query logger (BEGIN, COMMIT, ROLLBACK and raw driver statements)."""
    sent: list[str] = []
    engine = app.state.database.engine
    async with engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
    assert raw is not None

    def log_query(record: asyncpg.connection.LoggedQuery) -> None:
        sent.append(record.query)

    def log_cursor(_connection: object, _cursor: object, statement: str, *_args: object) -> None:
        sent.append(statement)

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        await new_session(http, "chat-rt")
        await append(http, "chat-rt", user("hello"), assistant("hi"), user("and now?"))
        for _ in range(2):  # the window kept, every statement prepared once
            assert (await http.post("/chat", json=BODY)).status_code == 200
        raw.add_query_logger(log_query)
        event.listen(engine.sync_engine, "before_cursor_execute", log_cursor)
        try:
            response = await http.post("/chat", json=BODY)
        finally:
            raw.remove_query_logger(log_query)
            event.remove(engine.sync_engine, "before_cursor_execute", log_cursor)
    assert response.status_code == 200
    return sent


async def test_a_chat_on_a_kept_window_reads_its_prefix_in_the_snapshot_and_writes_it_in_one_statement(
    one_connection_app: FastAPI,
) -> None:
    """On main this was fourteen: the snapshot (its BEGIN, marker, session, run models, live start, ROLLBACK),
    a second snapshot for the prefix alone (BEGIN, marker, the read, ROLLBACK) and a write transaction (BEGIN,
    SET LOCAL, the upsert, COMMIT). Now seven: one snapshot (BEGIN, marker, the session row with its live
    start, the prefix, run models, ROLLBACK), then the upsert."""
    sent = await _statements_of_a_warm_chat(one_connection_app)
    words = [statement.split()[0].rstrip(";") for statement in sent]
    closed = words.index("ROLLBACK")
    snapshot, after = sent[:closed], sent[closed + 1 :]
    assert sum("REPEATABLE READ" in statement for statement in sent) == 1, sent
    assert any("FROM prompt_prefixes" in statement for statement in snapshot), sent
    writes = [statement for statement in after if "prompt_prefixes" in statement]
    if one_connection_app.state.settings.transaction_pooling:
        # Behind a transaction pooler the timeouts come with BEGIN: BEGIN, the statement, COMMIT.
        # (the driver's logger and SQLAlchemy's event see BEGIN at different moments, so order is not compared)
        assert sorted(words[closed + 1 :]) == ["BEGIN", "COMMIT", "INSERT"], sent
        assert len(writes) == 1, sent
    else:
        assert writes == after[-1:], sent
        assert words[closed + 1 :] == ["INSERT"], sent
        assert len(sent) == 7, sent
