"""Compaction holds no connection while its summarizer writes: a lease in the database keeps a second compaction
out, and the write re-checks that nothing the summary relied on changed."""

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import text

from app.api.auth import DEFAULT_TENANT
from app.main import create_app
from app.services import compaction
from app.services.compaction import LEASE_SECONDS
from app.store.compaction_leases import CompactionLeaseRepository
from tests.api.wire import append, assistant, boundary, new_session, summary, tool_call, tool_result, user
from tests.conftest import settings_for_tests
from tests.context.fake_model_server import (
    CHAT_PATH,
    HANG_LIMIT_SECONDS,
    FakeModelServer,
    RecordedRequest,
    Reply,
    chat_completion,
)

POOL = {"pool_size": 5, "pool_max_overflow": 0, "pool_timeout_seconds": 2.0}
"""Five connections and no more; a request that cannot get one within 2 s fails (503) instead of hanging."""


@pytest.fixture
def summarizer() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        # Held until released, then a usable summary.
        server.reply(CHAT_PATH, Reply(hang=True, json=chat_completion("## Goal\nRead the files.")))
        yield server


@asynccontextmanager
async def service(database_url: str, summarizer: FakeModelServer) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    settings = settings_for_tests(
        summarizer_base_url=summarizer.base_url, summarizer_model="summarizer", model_server_timeout_seconds=0.5, **POOL
    )
    app = create_app(settings, database_url=database_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        try:
            yield app, client
        finally:
            summarizer.release()
            for listed in (await client.get("/sessions", params={"limit": 500})).json()["sessions"]:
                await client.delete(f"/sessions/{listed['id']}")


async def seed(client: httpx.AsyncClient, session_id: str, turns: int = 3) -> None:
    await new_session(client, session_id)
    for turn in range(turns):
        await append(
            client,
            session_id,
            user(f"step {turn}", id=f"u{turn}"),
            tool_call(f"c{turn}", "read", id=f"call{turn}"),
            tool_result(f"c{turn}", "read", "r" * 200, id=f"result{turn}"),
            assistant(f"done {turn}", id=f"a{turn}"),
        )


async def summarizer_called(server: FakeModelServer, times: int = 1, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while len(server.requests_to(CHAT_PATH)) < times:
        assert time.monotonic() < deadline, f"the summarizer was called {len(server.requests_to(CHAT_PATH))} times"
        await asyncio.sleep(0.01)


async def read_or_append(client: httpx.AsyncClient, session_id: str, index: int) -> httpx.Response:
    """Reads of every kind the held compactions' sessions serve, and appends to them."""
    if index % 4 == 0:
        return await client.post(f"/sessions/{session_id}/messages", json={"messages": [user(f"more {index}")]})
    if index % 4 == 1:
        return await client.get(f"/sessions/{session_id}/projection", params={"view": "model"})
    if index % 4 == 2:
        return await client.get(f"/sessions/{session_id}/messages")
    return await client.get(f"/sessions/{session_id}/context")


def still_running(compactions: list[asyncio.Task[httpx.Response]]) -> bool:
    return not any(task.done() for task in compactions)


async def test_requests_on_a_pool_of_five_never_wait_for_compactions_held_by_their_summarizer(
    database_url: str, summarizer: FakeModelServer
) -> None:
    sessions = [f"s{index}" for index in range(5)]
    async with service(database_url, summarizer) as (app, client):
        for session_id in sessions:
            await seed(client, session_id)
        # As many held compactions as the pool has connections: had each kept one, nothing else could run.
        compactions = [
            asyncio.create_task(client.post(f"/sessions/{session_id}/compactions", json={})) for session_id in sessions
        ]
        await summarizer_called(summarizer, times=len(sessions))
        assert app.state.database.engine.pool.checkedout() == 0

        started = time.monotonic()
        others = await asyncio.gather(*(read_or_append(client, sessions[index % 5], index) for index in range(20)))
        took = time.monotonic() - started
        assert [response.status_code for response in others if response.status_code >= 300] == []
        assert len(others) == 20
        assert still_running(compactions), "the requests finished only after a compaction let go"
        assert took < POOL["pool_timeout_seconds"]

        summarizer.release()
        done = await asyncio.gather(*compactions)
    # Appends after the summarised range are normal: every compaction still lands.
    assert [response.status_code for response in done] == [201] * len(sessions), [r.text for r in done]


async def test_a_second_compaction_while_the_lease_is_live_is_409(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await summarizer_called(summarizer)
        second = await client.post("/sessions/s1/compactions", json={"summary": "mine"})
        assert second.status_code == 409
        assert second.json()["type"].endswith("/compaction-running")
        summarizer.release()
        assert (await running).status_code == 201
        # The lease ended with the write: the next compaction runs.
        await append(client, "s1", user("next step", id="u9"))
        third = await client.post("/sessions/s1/compactions", json={"summary": "Later."})
        assert third.status_code == 201, third.text


async def test_another_compaction_landing_meanwhile_makes_the_write_409_and_writes_nothing(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await summarizer_called(summarizer)
        landed = await append(client, "s1", boundary("b-other", through="a1"), summary("b-other", "Theirs.", id="s-o"))
        assert landed.status_code == 201
        summarizer.release()
        response = await running
        assert response.status_code == 409, response.text
        assert response.json()["type"].endswith("/compaction-stale")
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 14


async def test_an_amended_summarised_message_makes_the_write_409(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await summarizer_called(summarizer)
        amended = await client.patch("/sessions/s1/messages/result0", json={"metadata": {"visibleInTranscript": False}})
        assert amended.status_code == 200
        summarizer.release()
        response = await running
        assert response.status_code == 409, response.text
        assert response.json()["type"].endswith("/compaction-stale")
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 12


async def test_a_keyed_compaction_refused_while_another_runs_says_when_to_retry_and_its_key_runs_it_later(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await summarizer_called(summarizer)
        ask = {"summary": "Ours.", "trigger": "auto"}
        refused = await client.post("/sessions/s1/compactions", json=ask, headers={"idempotency-key": "k-1"})
        summarizer.release()
        assert (await running).status_code == 201
        await append(client, "s1", user("next step", id="u9"), assistant("on it", id="a9"))
        retried = await client.post("/sessions/s1/compactions", json=ask, headers={"idempotency-key": "k-1"})
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("/compaction-running")
    assert refused.headers["retry-after"] == "5"
    # The refusal recorded nothing the request did: the same key runs it once the other compaction is done.
    assert retried.status_code == 201, retried.text
    assert "idempotent-replayed" not in retried.headers


async def test_a_keyed_compaction_gone_stale_says_to_retry_and_its_key_runs_it_again(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        running = asyncio.create_task(
            client.post("/sessions/s1/compactions", json={}, headers={"idempotency-key": "k"})
        )
        await summarizer_called(summarizer)
        await client.patch("/sessions/s1/messages/result0", json={"metadata": {"visibleInTranscript": False}})
        summarizer.release()
        stale = await running
        retried = await client.post("/sessions/s1/compactions", json={}, headers={"idempotency-key": "k"})
    assert stale.status_code == 409
    assert stale.json()["type"].endswith("/compaction-stale")
    assert stale.headers["retry-after"] == "1"
    assert retried.status_code == 201, retried.text
    assert "idempotent-replayed" not in retried.headers


async def test_a_compaction_that_lost_the_database_frees_the_session_within_half_a_minute(
    database_url: str, summarizer: FakeModelServer
) -> None:
    """The compaction could not end its lease (the database went away while its summarizer wrote, and its
    answer was a 503 saying to retry shortly): the retry must not meet that lease for minutes."""
    async with service(database_url, summarizer) as (app, client):
        await seed(client, "s1")
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await summarizer_called(summarizer)
        async with app.state.database.transaction() as connection:
            left_for = (
                await connection.execute(
                    text("SELECT extract(epoch FROM expires_at - now()) FROM compaction_leases WHERE session_id = 's1'")
                )
            ).scalar_one()
        summarizer.release()
        assert (await running).status_code == 201
    assert left_for <= 30


async def test_a_compaction_whose_summarizer_outlasts_the_lease_keeps_it_by_renewing_it(
    database_url: str, summarizer: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compaction, "LEASE_SECONDS", 0.6)
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        running = asyncio.create_task(client.post("/sessions/s1/compactions", json={}))
        await summarizer_called(summarizer)
        await asyncio.sleep(1.5)
        second = await client.post("/sessions/s1/compactions", json={"summary": "Mine."})
        summarizer.release()
        first = await running
    assert second.status_code == 409, second.text
    assert first.status_code == 201, first.text


async def test_a_failed_summary_ends_the_lease(database_url: str, summarizer: FakeModelServer) -> None:
    summarizer.fail(CHAT_PATH)
    async with service(database_url, summarizer) as (_, client):
        await seed(client, "s1")
        assert (await client.post("/sessions/s1/compactions", json={})).status_code == 502
        retried = await client.post("/sessions/s1/compactions", json={"summary": "Ours.", "throughMessageId": "a1"})
        assert retried.status_code == 201, retried.text


async def test_a_lease_left_by_a_crashed_process_frees_the_session_when_it_expires(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (app, client):
        await seed(client, "s1")
        async with app.state.database.transaction() as connection:
            assert await CompactionLeaseRepository(connection, DEFAULT_TENANT).take("s1", LEASE_SECONDS) is not None
        held = await client.post("/sessions/s1/compactions", json={"summary": "Ours.", "throughMessageId": "a1"})
        assert held.status_code == 409
        async with app.state.database.transaction() as connection:
            await connection.execute(text("UPDATE compaction_leases SET expires_at = now() - interval '1 second'"))
        freed = await client.post("/sessions/s1/compactions", json={"summary": "Ours.", "throughMessageId": "a1"})
        assert freed.status_code == 201, freed.text


# Renewing the lease between the parts of a long history's summary ---------------------------------------


async def lease_row(app: FastAPI, session_id: str) -> tuple[str, datetime]:
    async with app.state.database.transaction() as connection:
        row = (
            await connection.execute(
                text("SELECT holder, expires_at FROM compaction_leases WHERE session_id = :id"), {"id": session_id}
            )
        ).one()
    return row.holder, row.expires_at


async def expire_leases(app: FastAPI) -> None:
    async with app.state.database.transaction() as connection:
        await connection.execute(text("UPDATE compaction_leases SET expires_at = now() - interval '1 second'"))


async def take_lease(app: FastAPI, session_id: str, seconds: float = LEASE_SECONDS) -> str:
    async with app.state.database.transaction() as connection:
        token = await CompactionLeaseRepository(connection, DEFAULT_TENANT).take(session_id, seconds)
    assert token is not None
    return token


async def extend_lease(app: FastAPI, session_id: str, token: str) -> bool:
    async with app.state.database.transaction() as connection:
        return await CompactionLeaseRepository(connection, DEFAULT_TENANT).extend(session_id, token, LEASE_SECONDS)


async def test_extending_the_lease_moves_its_expiry_forward_for_its_holder(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (app, client):
        await new_session(client, "s1")
        token = await take_lease(app, "s1", seconds=10.0)
        _, before = await lease_row(app, "s1")
        assert await extend_lease(app, "s1", token)
        holder, after = await lease_row(app, "s1")
    assert holder == token
    assert after - before >= timedelta(seconds=LEASE_SECONDS - 10.0)


async def test_extending_a_lease_taken_over_after_it_expired_is_false_and_changes_nothing(
    database_url: str, summarizer: FakeModelServer
) -> None:
    async with service(database_url, summarizer) as (app, client):
        await new_session(client, "s1")
        first = await take_lease(app, "s1")
        await expire_leases(app)
        second = await take_lease(app, "s1", seconds=10.0)
        taken_over = await lease_row(app, "s1")
        assert not await extend_lease(app, "s1", first)
        assert await lease_row(app, "s1") == taken_over
    assert taken_over[0] == second


class Gates:
    """Holds the summarizer's answer to each request until the test opens that request's gate."""

    def __init__(self) -> None:
        self.opened: list[threading.Event] = [threading.Event() for _ in range(64)]  # more than any test sends
        self.arrived = 0
        self._lock = threading.Lock()

    def answer(self, request: RecordedRequest) -> Reply:
        with self._lock:
            index = self.arrived
            self.arrived += 1
        self.opened[index].wait(HANG_LIMIT_SECONDS)
        return Reply(json=chat_completion("## Goal\nRead the files."))

    def open(self, index: int) -> None:
        self.opened[index].set()

    def open_all(self) -> None:
        for gate in self.opened:
            gate.set()


@pytest.fixture
def parts_summarizer() -> Iterator[tuple[FakeModelServer, Gates]]:
    """A summarizer whose window of 12,000 tokens takes the history of ``compaction_at_its_first_part`` in several
    parts."""
    gates = Gates()
    with FakeModelServer(models={"summarizer": 12_000}) as server:
        server.reply_with(CHAT_PATH, gates.answer)
        try:
            yield server, gates
        finally:
            gates.open_all()


async def compaction_at_its_first_part(
    client: httpx.AsyncClient, server: FakeModelServer
) -> "asyncio.Task[httpx.Response]":
    """A long history whose compaction is under way: the summarizer holds the first part's answer."""
    await new_session(client, "s1", contextWindowTokens=200_000)
    for turn in range(4):
        await append(client, "s1", user(f"step {turn} " + "w" * 14_000, id=f"u{turn}"), assistant(f"a{turn}"))
    running = asyncio.create_task(client.post("/sessions/s1/compactions", json={"throughMessageId": "u3"}))
    await summarizer_called(server)
    return running


async def test_a_compaction_in_parts_renews_its_lease_before_each_further_part(
    database_url: str, parts_summarizer: tuple[FakeModelServer, Gates]
) -> None:
    server, gates = parts_summarizer
    async with service(database_url, server) as (app, client):
        running = await compaction_at_its_first_part(client, server)
        holder, first_term = await lease_row(app, "s1")
        gates.open(0)
        await summarizer_called(server, times=2)
        renewed = await lease_row(app, "s1")
        gates.open_all()
        response = await running
    assert response.status_code == 201, response.text
    calls = response.json()["boundary"]["metadata"]["compaction"]["summarizerCalls"]
    assert calls == len(server.requests_to(CHAT_PATH)) > 1
    assert renewed[0] == holder and renewed[1] > first_term


async def test_a_compaction_whose_lease_is_taken_over_between_parts_stops_with_409_and_writes_nothing(
    database_url: str, parts_summarizer: tuple[FakeModelServer, Gates]
) -> None:
    server, gates = parts_summarizer
    async with service(database_url, server) as (app, client):
        running = await compaction_at_its_first_part(client, server)
        await expire_leases(app)
        other = await take_lease(app, "s1")
        gates.open_all()
        response = await running
        assert response.status_code == 409, response.text
        assert response.json()["type"].endswith("/compaction-running")
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 8
        # It stopped at the renewal, before a second part, and left the new holder's lease alone.
        assert len(server.requests_to(CHAT_PATH)) == 1
        assert (await lease_row(app, "s1"))[0] == other
