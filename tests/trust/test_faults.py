"""PostgreSQL stopped mid-run: requests answer 503 problem+json quickly and /readyz fails; once it is back the
service recovers by itself, and retries (same message ids, same Idempotency-Keys) leave every message stored
exactly once with a gap-free seq.

The test runs its own embedded PostgreSQL, which it stops and starts; it never touches the shared one.
"""

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.main import create_app
from app.store import migrations
from app.store.embedded import EmbeddedPostgres
from tests.api.wire import user
from tests.conftest import settings_for_tests
from tests.database import plain_dsn

OUTAGES = 3
QUICK_SECONDS = 3.0
"""An outage must be answered well within a client's timeout: no request may hang on a dead database."""


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(Path(tempfile.mkdtemp(prefix="projector-faults-")), delete_on_stop=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
async def service(own_postgres: EmbeddedPostgres) -> AsyncIterator[httpx.AsyncClient]:
    url = await asyncio.to_thread(own_postgres.ensure_database)
    await asyncio.to_thread(migrations.upgrade, url)
    # Default timeouts: a refused connection must fail fast without tuning. A short lease frees the key of
    # the append the outage cut, so its retry does not wait the default 30 s.
    settings = settings_for_tests(idempotency_lease_seconds=1)
    application = create_app(settings, database_url=url)
    async with LifespanManager(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client


async def timed(request: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await request
    return response, time.monotonic() - started


async def append_until_stored(client: httpx.AsyncClient, key: str, batch: list[dict[str, Any]]) -> httpx.Response:
    """What a well-behaved client does after an outage: retry the same request, honouring Retry-After."""
    deadline = time.monotonic() + 20
    while True:
        response = await client.post(
            "/sessions/s1/messages", json={"messages": batch}, headers={"idempotency-key": key}
        )
        if response.status_code in (200, 201) or time.monotonic() > deadline:
            return response
        assert response.status_code in (409, 503), response.text
        await asyncio.sleep(float(response.headers.get("retry-after", "1")) / 4)


async def wait_ready(client: httpx.AsyncClient) -> float:
    started = time.monotonic()
    while (await client.get("/readyz")).status_code != 200:
        assert time.monotonic() - started < 20, "the service did not recover by itself"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def test_outages_answer_503_fast_and_recovery_loses_and_duplicates_nothing(
    own_postgres: EmbeddedPostgres, service: httpx.AsyncClient
) -> None:
    assert (await service.post("/sessions", json={"id": "s1"})).status_code == 201
    expected: list[str] = []
    for outage in range(OUTAGES):
        before = [user(f"before outage {outage}", id=f"o{outage}-a")]
        assert (await append_until_stored(service, f"before-{outage}", before)).status_code == 201
        expected.append(f"o{outage}-a")

        await asyncio.to_thread(own_postgres.pause)
        during = [user(f"during outage {outage} #{n}", id=f"o{outage}-b{n}") for n in range(3)]
        answers = [
            await timed(service.post("/sessions/s1/messages", json={"messages": during})),
            await timed(
                service.post(
                    "/sessions/s1/messages", json={"messages": during}, headers={"idempotency-key": f"during-{outage}"}
                )
            ),
            await timed(service.get("/sessions/s1/messages")),
            await timed(service.post("/sessions", json={"id": f"new-{outage}"})),
            await timed(service.get("/readyz")),
        ]
        for response, elapsed in answers:
            assert response.status_code == 503, response.text
            assert response.headers["content-type"] == "application/problem+json"
            assert elapsed < QUICK_SECONDS
        assert (await service.get("/healthz")).status_code == 200

        await asyncio.to_thread(own_postgres.resume)
        await wait_ready(service)
        assert (await append_until_stored(service, f"during-{outage}", during)).status_code == 201
        expected.extend(message["id"] for message in during)
        # The retry of the plain append (same ids, no key) finds them stored: 200, nothing new.
        assert (await append_until_stored(service, f"again-{outage}", during)).status_code == 200

    await assert_stored_exactly(service, expected)


async def test_an_append_cut_by_the_outage_is_retried_into_exactly_one_copy(
    own_postgres: EmbeddedPostgres, service: httpx.AsyncClient
) -> None:
    await service.post("/sessions", json={"id": "s1"})
    stored = [m["id"] for m in (await service.get("/sessions/s1/messages", params={"limit": 500})).json()["messages"]]
    url = own_postgres.url()
    blocker = await asyncpg.connect(plain_dsn(url))
    transaction = blocker.transaction()
    await transaction.start()
    await blocker.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")
    batch = [user("caught in flight", id="cut-1"), user("also in flight", id="cut-2")]
    in_flight = asyncio.create_task(
        service.post("/sessions/s1/messages", json={"messages": batch}, headers={"idempotency-key": "cut"})
    )
    await asyncio.sleep(0.3)
    assert not in_flight.done()
    await asyncio.to_thread(own_postgres.pause)  # cuts the blocked append's connection, and the blocker's
    cut, elapsed = await timed(in_flight)
    # The append is one statement: when the blocker's backend ends a moment before its own, it may still
    # commit, whether or not its answer gets out. Either way the retry below must leave exactly one copy:
    # 201 when it stores the messages, 200 when it finds them stored.
    assert cut.status_code in (201, 503) and elapsed < QUICK_SECONDS + 0.3, cut.text
    blocker.terminate()
    await asyncio.to_thread(own_postgres.resume)
    await wait_ready(service)
    assert (await append_until_stored(service, "cut", batch)).status_code in (200, 201)
    replay = await append_until_stored(service, "cut", batch)
    assert replay.headers["idempotent-replayed"] == "true"
    await assert_stored_exactly(service, [*stored, "cut-1", "cut-2"])


async def assert_stored_exactly(client: httpx.AsyncClient, expected: list[str]) -> None:
    listed = (await client.get("/sessions/s1/messages", params={"limit": 500})).json()["messages"]
    assert [message["id"] for message in listed] == expected  # nothing lost, nothing duplicated, in order
    assert [message["seq"] for message in listed] == list(range(1, len(expected) + 1))
    session = (await client.get("/sessions/s1")).json()
    assert (session["messageCount"], session["lastSeq"]) == (len(expected), len(expected))
