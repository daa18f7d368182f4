"""Reads on a real streaming replica, with read-your-writes: a write answers its commit position in
``Projector-Consistency``; a read sending it back is served by a replica past it, or after a bounded wait by
the primary. A replica held back with ``pg_wal_replay_pause()`` shows which server answered: it still has
the old rows.
"""

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from prometheus_client import REGISTRY

from app.main import create_app
from app.store import migrations
from app.store.consistency import parse_position
from tests.api.sse import open_stream
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.conftest import settings_for_tests
from tests.database import plain_dsn
from tests.scale.streaming import StreamingPair, streaming_pair, wait_for_replay
from tests.trust.live_server import serving

WAIT_MS = 300
PATIENT_WAIT_MS = 30_000
TOKEN = "Projector-Consistency"
MODEL = "anthropic/claude-sonnet-4-5"


@pytest.fixture(scope="module")
def pair() -> Iterator[StreamingPair]:
    with streaming_pair() as made:
        yield made


@pytest.fixture(scope="module")
async def replicated_database(pair: StreamingPair) -> str:
    """A migrated database on the primary, already replayed on the replica; its primary URL."""
    admin = await asyncpg.connect(plain_dsn(pair.primary_url()))
    try:
        await admin.execute('CREATE DATABASE "projector"')
    finally:
        await admin.close()
    url = pair.primary_url("projector")
    await asyncio.to_thread(migrations.upgrade, url)
    await wait_for_replay(pair)
    return url


@dataclass
class Servers:
    pair: StreamingPair
    client: httpx.AsyncClient
    """Reads on the replica, writes on the primary."""
    patient: httpx.AsyncClient
    """The same, waiting far longer for a replica past a token than any replay could take."""
    primary_only: httpx.AsyncClient
    """Another process of the service, configured with no replica."""

    async def pause_replay(self) -> None:
        """Holds the replica back, and returns once it has stopped replaying (a pause is only requested by
        ``pg_wal_replay_pause()``; a record replayed before it takes effect would spoil the test)."""
        connection = await asyncpg.connect(plain_dsn(self.pair.replica_url()))
        try:
            await connection.execute("SELECT pg_wal_replay_pause()")
            deadline = time.monotonic() + 10
            while await connection.fetchval("SELECT pg_get_wal_replay_pause_state()") != "paused":
                assert time.monotonic() < deadline, "the replica did not pause"
                await asyncio.sleep(0.01)
        finally:
            await connection.close()

    async def until_a_read_found_the_replica_behind(self, since: Any) -> None:
        """Returns once a read has asked the replica how far it has replayed, after ``since`` (the replica's
        clock), and had its answer: with replay paused, that read now waits for it."""
        connection = await asyncpg.connect(plain_dsn(self.pair.replica_url()))
        try:
            deadline = time.monotonic() + 10
            while not await connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'idle'"
                " AND query LIKE '%pg_last_wal_replay_lsn%' AND query_start >= $1",
                since,
            ):
                assert time.monotonic() < deadline, "no read asked the replica how far it has replayed"
                await asyncio.sleep(0.01)
        finally:
            await connection.close()

    async def replica_clock(self) -> Any:
        connection = await asyncpg.connect(plain_dsn(self.pair.replica_url()))
        try:
            return await connection.fetchval("SELECT clock_timestamp()")
        finally:
            await connection.close()

    async def resume_replay(self) -> None:
        connection = await asyncpg.connect(plain_dsn(self.pair.replica_url()))
        try:
            await connection.execute("SELECT pg_wal_replay_resume()")
        finally:
            await connection.close()


def client_of(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.fixture
async def servers(pair: StreamingPair, replicated_database: str) -> AsyncIterator[Servers]:
    replicated = create_app(
        settings_for_tests(database_read_url=[pair.replica_url("projector")], replica_wait_ms=WAIT_MS),
        database_url=replicated_database,
    )
    patient = create_app(
        settings_for_tests(database_read_url=[pair.replica_url("projector")], replica_wait_ms=PATIENT_WAIT_MS),
        database_url=replicated_database,
    )
    primary_only = create_app(settings_for_tests(), database_url=replicated_database)
    async with (
        LifespanManager(replicated),
        LifespanManager(patient),
        LifespanManager(primary_only),
        client_of(replicated) as client,
        client_of(patient) as patient_client,
        client_of(primary_only) as other,
    ):
        yield Servers(pair, client, patient_client, other)
    cleaner = await asyncpg.connect(plain_dsn(replicated_database))
    try:
        await cleaner.execute("TRUNCATE sessions CASCADE")
    finally:
        await cleaner.close()
    await wait_for_replay(pair)


def reads(server: str, reason: str) -> float:
    return REGISTRY.get_sample_value("projector_replica_reads_total", {"server": server, "reason": reason}) or 0.0


def token_of(response: httpx.Response) -> str:
    assert response.status_code in (200, 201), response.text
    return response.headers[TOKEN]


def message_ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [message["id"] for message in response.json()["messages"]]


async def test_a_write_answers_its_commit_position_and_reading_with_it_sees_the_write(servers: Servers) -> None:
    created = await servers.client.post("/sessions", json={"id": "s1"})
    appended = await append(servers.client, "s1", user("Why does the build fail?", id="m1"))
    assert parse_position(token_of(appended)) > parse_position(token_of(created))
    await wait_for_replay(servers.pair)
    caught_up = reads("replica", "caught_up")

    page = await servers.client.get("/sessions/s1/messages", headers={TOKEN: token_of(appended)})

    assert message_ids(page) == ["m1"]
    assert reads("replica", "caught_up") == caught_up + 1


async def test_a_paused_replica_never_hides_a_clients_own_write(servers: Servers) -> None:
    await new_session(servers.client, "s1")
    await wait_for_replay(servers.pair)
    await servers.pause_replay()
    try:
        token = token_of(await append(servers.client, "s1", user("Why does the build fail?", id="m1")))
        stale = await servers.client.get("/sessions/s1/messages")
        behind = reads("primary", "replicas_behind")
        started = time.perf_counter()
        own = await servers.client.get("/sessions/s1/messages", headers={TOKEN: token})
        waited = time.perf_counter() - started
    finally:
        await servers.resume_replay()
    assert message_ids(stale) == []
    assert message_ids(own) == ["m1"]
    assert reads("primary", "replicas_behind") == behind + 1
    assert waited >= WAIT_MS / 1000


async def test_a_replica_that_catches_up_within_the_wait_serves_the_read(servers: Servers) -> None:
    await new_session(servers.client, "s1")
    await wait_for_replay(servers.pair)
    await servers.pause_replay()
    try:
        token = token_of(await append(servers.client, "s1", user("Why does the build fail?", id="m1")))
        waited = reads("replica", "waited")
        since = await servers.replica_clock()
        pending = asyncio.ensure_future(servers.patient.get("/sessions/s1/messages", headers={TOKEN: token}))
        # Resumed only once the read has seen the replica behind: resumed earlier (a slow start under load),
        # the read would find it caught up at once and never wait.
        await servers.until_a_read_found_the_replica_behind(since)
        await servers.resume_replay()
        own = await pending
    finally:
        await servers.resume_replay()
    assert message_ids(own) == ["m1"]
    assert reads("replica", "waited") == waited + 1


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/sessions/s1/messages", None),
        ("/sessions/s1/projection?view=transcript", None),
        ("/sessions/s1/projection?view=model", None),
        ("/sessions/s1/projection?view=export&format=markdown", None),
        ("/sessions/s1/context", None),
        ("/sessions", None),
        ("/chat", {"sessionId": "s1", "provider": "anthropic"}),
        ("/search?q=failure", None),
        ("/sessions/s1/search?q=failure", None),
        ("/sessions/s1/analytics", None),
    ],
)
async def test_listings_projections_chat_context_search_and_analytics_read_from_the_replica(
    servers: Servers, path: str, body: dict[str, Any] | None
) -> None:
    await new_session(servers.client, "s1", model=MODEL)
    await append(servers.client, "s1", user("What is in the build log?", id="m1"), assistant("Let me look.", id="m2"))
    await wait_for_replay(servers.pair)
    await servers.pause_replay()
    try:
        token = token_of(await append(servers.client, "s1", user("And the second failure?", id="m3")))

        async def read(headers: dict[str, str]) -> httpx.Response:
            if body is None:
                return await servers.client.get(path, headers=headers)
            return await servers.client.post(path, json=body, headers=headers)

        from_replica, own = await read({}), await read({TOKEN: token})
    finally:
        await servers.resume_replay()
    assert from_replica.status_code == own.status_code == 200
    assert from_replica.content != own.content


async def test_reads_fall_back_to_the_primary_while_the_replica_is_down(servers: Servers) -> None:
    await new_session(servers.client, "s1")
    token = token_of(await append(servers.client, "s1", user("Why does the build fail?", id="m1")))
    unreachable = reads("primary", "replicas_unreachable")
    servers.pair.stop_replica()
    try:
        without_token = await servers.client.get("/sessions/s1/messages")
        with_token = await servers.client.get("/sessions/s1/messages", headers={TOKEN: token})
    finally:
        servers.pair.start_replica()
    assert message_ids(without_token) == message_ids(with_token) == ["m1"]
    assert reads("primary", "replicas_unreachable") == unreachable + 2


async def test_etags_and_cursors_from_the_primary_hold_on_the_replica(servers: Servers) -> None:
    await new_session(servers.primary_only, "s1")
    await append(servers.primary_only, "s1", user("one", id="m1"), user("two", id="m2"), user("three", id="m3"))
    first_page = await servers.primary_only.get("/sessions/s1/messages", params={"limit": 2})
    view = await servers.primary_only.get("/sessions/s1/projection", params={"view": "model"})
    await wait_for_replay(servers.pair)
    from_replica = reads("replica", "no_token")

    rest = await servers.client.get("/sessions/s1/messages", params={"after": first_page.json()["nextCursor"]})
    revalidated = await servers.client.get(
        "/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": view.headers["etag"]}
    )

    assert message_ids(rest) == ["m3"]
    assert revalidated.status_code == 304
    assert revalidated.headers["etag"] == view.headers["etag"]
    assert reads("replica", "no_token") == from_replica + 2


async def test_a_compaction_reads_on_the_primary_what_it_is_about_to_write(servers: Servers) -> None:
    await new_session(servers.client, "s1")
    await wait_for_replay(servers.pair)
    await servers.pause_replay()
    try:
        await append(
            servers.client,
            "s1",
            user("Why does the build fail?", id="m1"),
            tool_call("call_1", "read_file", id="m2", path="build.log"),
            tool_result("call_1", "read_file", "error: missing semicolon", id="m3"),
            assistant("A semicolon is missing.", id="m4"),
        )
        compaction = {"summary": "The build failed on a missing semicolon.", "throughMessageId": "m3"}
        compacted = await servers.client.post("/sessions/s1/compactions", json=compaction)
    finally:
        await servers.resume_replay()
    assert compacted.status_code == 201, compacted.text


async def test_the_event_stream_reads_on_the_primary_what_its_notices_announce(
    servers: Servers, replicated_database: str
) -> None:
    """A notice arrives when the write commits on the primary, before any replica has replayed it, and it
    carries no WAL position: the stream reads what it announces on the primary, or would miss it."""
    app = create_app(
        settings_for_tests(database_read_url=[servers.pair.replica_url("projector")], replica_wait_ms=WAIT_MS),
        database_url=replicated_database,
    )
    await new_session(servers.client, "live")
    await wait_for_replay(servers.pair)
    with serving(app) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=20) as http:
            await servers.pause_replay()
            try:
                async with open_stream(http, "live") as stream:
                    await append(http, "live", user("Are you there?", id="m1"))
                    events = await stream.messages(1, within=5)
            finally:
                await servers.resume_replay()
    assert [event.id for event in events] == ["1"]
