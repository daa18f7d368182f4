"""Behind a transaction-pooling PgBouncer: what breaks without ``transaction_pooling``, and that with it every
route works, the timeouts hold per transaction, and no prepared statement or lock outlives its transaction.

The PgBouncer here shares one server connection among every client, so anything a client left on it (a
prepared statement, a setting, a lock) would reach the next one.
"""

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from app.main import create_app
from app.settings import Settings
from app.store.database import Database, create_engine
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.conftest import settings_for_tests
from tests.database import create_database, drop_database, plain_dsn
from tests.scale import pgbouncer as bouncer

pytestmark = [pytest.mark.db, pytest.mark.skipif(bouncer.EXECUTABLE is None, reason=bouncer.MISSING)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shared_server_connection(database_server: str) -> Iterator[str]:
    """A PgBouncer with one server connection for all its clients; its URL for the server's admin database."""
    with bouncer.pgbouncer(database_server, pool_size=1) as url:
        yield url


def through(pooler_url: str, database_url: str) -> str:
    return make_url(pooler_url).set(database=make_url(database_url).database).render_as_string(hide_password=False)


@pytest.fixture
def pooled_url(shared_server_connection: str, database_url: str) -> str:
    """The test database, migrated, reached through the one-connection PgBouncer."""
    return through(shared_server_connection, database_url)


def behind_the_pooler(direct_database_url: str, **overrides: object) -> Settings:
    """A deployment's settings behind PgBouncer: the event stream's LISTEN keeps a direct connection."""
    return settings_for_tests(listen_database_url=direct_database_url, **overrides)


@pytest.fixture
async def pooled_client(pooled_url: str, direct_database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(behind_the_pooler(direct_database_url, transaction_pooling=True), database_url=pooled_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        yield client
        async with app.state.database.transaction() as connection:
            await connection.execute(text("TRUNCATE sessions CASCADE"))


async def server_connection_state(pooled_url: str) -> tuple[int, str, str, int]:
    """What the shared server connection carries between transactions: prepared statements, the two
    timeouts, advisory locks (read by a plain client, which gets that same connection)."""
    connection = await asyncpg.connect(plain_dsn(pooled_url), statement_cache_size=0)
    try:
        row = await connection.fetchrow(
            "SELECT (SELECT count(*) FROM pg_prepared_statements), current_setting('statement_timeout'),"
            " current_setting('lock_timeout'),"
            " (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())"
        )
    finally:
        await connection.close()
    assert row is not None
    return row[0], row[1], row[2], row[3]


async def test_with_start_up_timeouts_pgbouncer_refuses_the_connection_so_every_request_is_503(
    pooled_url: str, direct_database_url: str
) -> None:
    app = create_app(behind_the_pooler(direct_database_url, transaction_pooling=False), database_url=pooled_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        response = await client.post("/sessions", json={"id": "refused"})
    assert response.status_code == 503


async def test_with_transaction_pooling_every_kind_of_request_works_on_one_shared_server_connection(
    pooled_client: httpx.AsyncClient,
) -> None:
    await new_session(pooled_client, "s1", model="anthropic/claude-sonnet-4-5")
    batch = [
        user("Why does the build fail?", id="m1"),
        tool_call("call_1", "read_file", id="m2", path="build.log"),
        tool_result("call_1", "read_file", "error: missing semicolon", id="m3"),
        assistant("A semicolon is missing.", id="m4"),
    ]
    assert (await append(pooled_client, "s1", *batch)).status_code == 201
    assert (await append(pooled_client, "s1", *batch)).status_code == 200
    assert (await pooled_client.patch("/sessions/s1/messages/m4", json={"metadata": {"k": 1}})).status_code == 200
    page = await pooled_client.get("/sessions/s1/messages", params={"limit": 1})
    rest = await pooled_client.get("/sessions/s1/messages", params={"after": page.json()["nextCursor"]})
    assert [message["seq"] for message in rest.json()["messages"]] == [2, 3, 4]
    view = await pooled_client.get("/sessions/s1/projection", params={"view": "model"})
    assert view.status_code == 200
    revalidated = await pooled_client.get(
        "/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": view.headers["etag"]}
    )
    assert revalidated.status_code == 304
    assert (await pooled_client.post("/chat", json={"sessionId": "s1", "provider": "anthropic"})).status_code == 200
    assert (await pooled_client.get("/sessions/s1/context")).status_code == 200
    assert (await pooled_client.get("/sessions")).status_code == 200
    compaction = {"summary": "The build failed on a missing semicolon.", "throughMessageId": "m3"}
    assert (await pooled_client.post("/sessions/s1/compactions", json=compaction)).status_code == 201
    assert (await pooled_client.delete("/sessions/s1")).status_code == 204


async def test_with_transaction_pooling_the_timeouts_hold_inside_each_transaction_and_leave_nothing_behind(
    pooled_url: str,
) -> None:
    settings = settings_for_tests(transaction_pooling=True, statement_timeout_ms=1234, lock_timeout_ms=567)
    database = Database(create_engine(pooled_url, settings))
    try:
        async with database.reading() as connection:
            reading = (await connection.execute(text("SELECT current_setting('statement_timeout')"))).scalar_one()
        async with database.transaction() as connection:
            writing = (await connection.execute(text("SELECT current_setting('lock_timeout')"))).scalar_one()
    finally:
        await database.dispose()
    assert (reading, writing) == ("1234ms", "567ms")
    assert await server_connection_state(pooled_url) == (0, "0", "0", 0)


async def test_with_transaction_pooling_a_statement_past_the_timeout_is_cancelled(pooled_url: str) -> None:
    settings = settings_for_tests(transaction_pooling=True, statement_timeout_ms=100)
    database = Database(create_engine(pooled_url, settings))
    try:
        async with database.reading() as connection:
            with pytest.raises(DBAPIError, match="statement timeout"):
                await connection.execute(text("SELECT pg_sleep(2)"))
    finally:
        await database.dispose()


async def test_on_the_direct_path_the_timeouts_are_start_up_parameters_and_statements_are_kept(
    database_url: str, direct_database_url: str
) -> None:
    """The contrast: without a pooler the connection carries the timeouts from its start (no statement per
    transaction) and keeps its prepared statements, which behind PgBouncer 1.18 would be left on a shared
    server connection."""
    settings = settings_for_tests(transaction_pooling=False, statement_timeout_ms=1234)
    database = Database(create_engine(direct_database_url, settings))
    try:
        async with database.single_read() as connection:
            timeout = (await connection.execute(text("SELECT current_setting('statement_timeout')"))).scalar_one()
            kept = (await connection.execute(text("SELECT count(*) FROM pg_prepared_statements"))).scalar_one()
    finally:
        await database.dispose()
    assert timeout == "1234ms"
    assert kept > 0


async def test_this_pgbouncer_passes_a_named_prepared_statement_on_to_the_next_client(
    shared_server_connection: str,
) -> None:
    """Why the service's statement caches go off behind it: PgBouncer before 1.21 has no prepared-statement
    support of its own, so a statement one client names stays on the server connection and the next client
    collides with it (asyncpg and SQLAlchemy name and cache theirs)."""
    if bouncer.version() >= (1, 21):
        pytest.skip("PgBouncer 1.21 and later can track prepared statements itself (max_prepared_statements)")
    first = await asyncpg.connect(plain_dsn(shared_server_connection))
    second = await asyncpg.connect(plain_dsn(shared_server_connection))
    try:
        await first.prepare("SELECT 1", name="projector_probe")
        await first.execute("SELECT 1")  # ends the exchange, so PgBouncer hands the server connection on
        with pytest.raises(asyncpg.DuplicatePreparedStatementError):
            await second.prepare("SELECT 2", name="projector_probe")
    finally:
        await second.execute("DEALLOCATE ALL")
        await first.close()
        await second.close()


async def test_with_transaction_pooling_requests_leave_no_prepared_statement_on_the_server_connection(
    pooled_client: httpx.AsyncClient, pooled_url: str
) -> None:
    await new_session(pooled_client, "s2")
    await append(pooled_client, "s2", user("hello", id="m1"))
    for _ in range(3):
        assert (await pooled_client.get("/sessions/s2/messages")).status_code == 200
        assert (await pooled_client.get("/sessions/s2/projection", params={"view": "transcript"})).status_code == 200
    assert (await server_connection_state(pooled_url))[0] == 0


async def test_processes_migrating_together_through_pgbouncer_migrate_once(database_server: str) -> None:
    """The migrations' advisory lock is taken inside their transaction, so it holds through transaction
    pooling and ends with the transaction: three ``projector migrate`` started at once all succeed."""
    url = await create_database(database_server)
    try:
        with bouncer.pgbouncer(database_server, pool_size=4) as pooler:
            pooled = through(pooler, url)
            environment = {**os.environ, "DATABASE_URL": pooled}
            processes = [
                await asyncio.create_subprocess_exec(sys.executable, "-m", "app", "migrate", cwd=ROOT, env=environment)
                for _ in range(3)
            ]
            codes = [await asyncio.wait_for(process.wait(), 120) for process in processes]
            connection = await asyncpg.connect(plain_dsn(pooled), statement_cache_size=0)
            try:
                versions = await connection.fetch("SELECT version_num FROM alembic_version")
            finally:
                await connection.close()
    finally:
        await drop_database(database_server, url)
    assert codes == [0, 0, 0]
    assert len(versions) == 1


SESSION_LOCK = re.compile(r"pg_(try_)?advisory_lock(_shared)?\s*\(")


def test_every_advisory_lock_is_transaction_scoped() -> None:
    """A session-scoped advisory lock taken through a transaction pooler stays on a server connection that
    another client gets next; only ``pg_advisory_xact_lock`` and its kin end with their transaction."""
    sources = [*(ROOT / "app").rglob("*.py"), *(ROOT / "alembic").rglob("*.py")]
    offenders = [str(path.relative_to(ROOT)) for path in sources if SESSION_LOCK.search(path.read_text())]
    assert offenders == []


async def test_transaction_pooling_without_a_direct_listen_url_is_warned_about_at_start(
    pooled_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings_for_tests(transaction_pooling=True, listen_database_url=None), database_url=pooled_url)
    async with LifespanManager(app):
        pass
    assert any("PROJECTOR_LISTEN_DATABASE_URL is unset" in record.getMessage() for record in caplog.records)
