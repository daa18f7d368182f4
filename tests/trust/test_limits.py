"""Every limit is a setting and answers problem+json: batch, message and page sizes, and a per-statement
timeout that turns a stuck query into a quick 503 instead of a hung request."""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

from tests.api.wire import user
from tests.database import plain_dsn
from tests.trust.conftest import AppFactory, http_client

PROBLEM = "application/problem+json"


@asynccontextmanager
async def held(database_url: str, statement: str) -> AsyncIterator[None]:
    """Runs ``statement`` in an open transaction on another connection, holding its locks until the block ends."""
    connection = await asyncpg.connect(plain_dsn(database_url))
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute(statement)
        yield
    finally:
        await transaction.rollback()
        await connection.close()


async def test_a_statement_past_the_timeout_ends_in_a_quick_503(trust_app: AppFactory, database_url: str) -> None:
    async with trust_app(statement_timeout_ms=300, lock_timeout_ms=0) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        async with held(database_url, "LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE"):
            started = time.monotonic()
            read = await c.get("/sessions/s1")
            elapsed = time.monotonic() - started
        assert read.status_code == 503, read.text
        assert read.headers["content-type"] == PROBLEM
        assert read.headers["retry-after"] == "1"
        assert "statement timed out" in read.json()["detail"]
        assert elapsed < 3
        assert (await c.get("/sessions/s1")).status_code == 200


@pytest.mark.parametrize(
    "path", ["/sessions/s1/messages", "/sessions/s1/messages/m1", "/sessions/s1/projection?view=model"]
)
async def test_a_hot_read_past_the_timeout_ends_in_a_quick_503(
    trust_app: AppFactory, database_url: str, path: str
) -> None:
    """Pages, single messages and windows read through the asyncpg connection directly: same answer."""
    async with trust_app(statement_timeout_ms=300, lock_timeout_ms=0) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        await c.post("/sessions/s1/messages", json={"messages": [user("hi", id="m1")]})
        async with held(database_url, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE"):
            started = time.monotonic()
            read = await c.get(path)
            elapsed = time.monotonic() - started
        assert read.status_code == 503, read.text
        assert read.headers["content-type"] == PROBLEM
        assert "statement timed out" in read.json()["detail"]
        assert elapsed < 3
        again = await c.get(path)
        assert again.status_code == 200, again.text


async def test_an_append_waiting_past_the_lock_timeout_is_503_and_stores_nothing(
    trust_app: AppFactory, database_url: str
) -> None:
    async with trust_app(lock_timeout_ms=200) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        async with held(database_url, "SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE"):
            started = time.monotonic()
            response = await c.post("/sessions/s1/messages", json={"messages": [user("hi")]})
            elapsed = time.monotonic() - started
        assert response.status_code == 503
        assert "lock wait timed out" in response.json()["detail"]
        assert elapsed < 3
        assert (await c.get("/sessions/s1")).json()["messageCount"] == 0


async def test_writers_queued_on_one_busy_session_leave_the_pool_to_other_sessions(
    trust_app: AppFactory, database_url: str
) -> None:
    """Each writer waits for a session's lock holding a pooled connection: only a few of one session's may."""
    settings = {"pool_size": 3, "pool_max_overflow": 0, "pool_timeout_seconds": 1, "lock_timeout_ms": 10_000}
    async with trust_app(**settings) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "busy"})
        await c.post("/sessions", json={"id": "other"})
        async with held(database_url, "SELECT 1 FROM sessions WHERE id = 'busy' FOR UPDATE"):
            queued = [
                asyncio.create_task(c.post("/sessions/busy/messages", json={"messages": [user(f"q{n}", id=f"q{n}")]}))
                for n in range(8)
            ]
            await asyncio.sleep(0.3)
            elsewhere = await c.post("/sessions/other/messages", json={"messages": [user("hi")]})
            assert elsewhere.status_code == 201, elsewhere.text
            assert not any(task.done() for task in queued)
        assert [response.status_code for response in await asyncio.gather(*queued)] == [201] * 8
        stored = (await c.get("/sessions/busy/messages")).json()["messages"]
        assert [message["seq"] for message in stored] == list(range(1, 9))


async def test_a_writer_that_waits_its_turn_past_the_lock_timeout_is_503(
    trust_app: AppFactory, database_url: str
) -> None:
    settings = {"pool_size": 3, "pool_max_overflow": 0, "lock_timeout_ms": 300}
    async with trust_app(**settings) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "busy"})
        async with held(database_url, "SELECT 1 FROM sessions WHERE id = 'busy' FOR UPDATE"):
            answers = await asyncio.gather(
                *(c.post("/sessions/busy/messages", json={"messages": [user(f"q{n}")]}) for n in range(4))
            )
        assert [response.status_code for response in answers] == [503] * 4
        assert all(response.headers["content-type"] == PROBLEM for response in answers)
        assert (await c.get("/sessions/busy")).json()["messageCount"] == 0


async def test_batch_message_and_metadata_sizes_follow_their_settings(trust_app: AppFactory) -> None:
    async with (
        trust_app(max_batch_messages=2, max_message_bytes=200, max_metadata_bytes=50) as application,
        http_client(application) as c,
    ):
        await c.post("/sessions", json={"id": "s1"})
        too_many = await c.post("/sessions/s1/messages", json={"messages": [user("a"), user("b"), user("c")]})
        too_big = await c.post("/sessions/s1/messages", json={"messages": [user("x" * 300)]})
        big_metadata = await c.post("/sessions/s1/messages", json={"messages": [user("x", note="y" * 60)]})
        expected = ((too_many, "messages"), (too_big, "messages[0]"), (big_metadata, "messages[0].metadata"))
        for response, field in expected:
            assert response.status_code == 413, response.text
            assert response.headers["content-type"] == PROBLEM
            assert response.json()["field"] == field
        assert (await c.post("/sessions/s1/messages", json={"messages": [user("a"), user("b")]})).status_code == 201


async def test_page_sizes_follow_their_settings(trust_app: AppFactory) -> None:
    async with trust_app(default_page_size=2, max_page_size=3) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        await c.post("/sessions/s1/messages", json={"messages": [user(str(n)) for n in range(5)]})
        assert len((await c.get("/sessions/s1/messages")).json()["messages"]) == 2
        assert len((await c.get("/sessions/s1/messages", params={"limit": 3})).json()["messages"]) == 3
        over = await c.get("/sessions/s1/messages", params={"limit": 4})
        assert over.status_code == 422 and over.headers["content-type"] == PROBLEM


async def test_a_body_past_the_limit_is_413_before_it_is_read_whole(trust_app: AppFactory) -> None:
    async with trust_app(max_body_bytes=512) as application, http_client(application) as c:
        response = await c.post("/sessions", json={"title": "x" * 1024})
        assert response.status_code == 413
        assert response.headers["content-type"] == PROBLEM


@pytest.mark.parametrize(
    "headers",
    [{"x-big": "a" * 1_000_000}, {f"x-h{n}": "1" for n in range(10_000)}],
    ids=["one header of a megabyte", "ten thousand headers"],
)
async def test_too_large_or_too_many_headers_are_431(trust_app: AppFactory, headers: dict[str, str]) -> None:
    async with trust_app() as application, http_client(application) as c:
        refused = await c.get("/sessions", headers=headers)
        assert refused.status_code == 431
        assert refused.headers["content-type"] == PROBLEM
        assert refused.json()["field"] == "headers"
        assert (await c.get("/sessions")).status_code == 200


async def test_header_limits_follow_their_settings(trust_app: AppFactory) -> None:
    async with trust_app(max_header_bytes=2048, max_header_count=10) as application, http_client(application) as c:
        assert (await c.get("/sessions", headers={"x-a": "a" * 1500})).status_code == 200
        assert (await c.get("/sessions", headers={"x-a": "a" * 2100})).status_code == 431
        assert (await c.get("/sessions", headers={f"x-{n}": "1" for n in range(4)})).status_code == 200
        assert (await c.get("/sessions", headers={f"x-{n}": "1" for n in range(12)})).status_code == 431
