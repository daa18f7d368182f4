"""``Idempotency-Key`` on POSTs, Stripe's semantics: the first response is kept and replayed byte for byte,
another request under the same key is 422, a duplicate of a running request is 409, refused requests are
not kept, keys are per tenant and expire."""

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import httpx
import orjson
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from app.store.idempotency import purge_expired_keys
from tests.api.wire import user
from tests.database import plain_dsn
from tests.trust.conftest import AppFactory, http_client, raw_request
from tests.trust.keys import API_KEYS, OTHER_TENANT, READER, RUNTIME, WRITER

OTHER_KEYS = [entry for entry in API_KEYS if entry["tenant"] != "acme"]


def keyed(key: str) -> dict[str, str]:
    return {"idempotency-key": key}


async def kept_keys(app: FastAPI) -> list[tuple[str, str, int | None]]:
    async with app.state.database.reading() as connection:
        rows = await connection.execute(text("SELECT tenant_id, key, status_code FROM idempotency_keys ORDER BY key"))
        return [tuple(row) for row in rows]


@pytest.fixture
async def writer(keyed_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(keyed_app, WRITER) as client:
        assert (await client.post("/sessions", json={"id": "s1"})).status_code == 201
        yield client


async def test_a_retry_replays_the_first_response_byte_for_byte_and_writes_once(writer: httpx.AsyncClient) -> None:
    body = {"messages": [user("hello")]}  # no client id: without the key a retry would store it twice
    first = await writer.post("/sessions/s1/messages", json=body, headers=keyed("k-1"))
    again = await writer.post("/sessions/s1/messages", json=body, headers=keyed("k-1"))
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert again.headers["content-type"] == first.headers["content-type"]
    assert (await writer.get("/sessions/s1")).json()["messageCount"] == 1


async def test_a_created_session_replays_with_its_location(keyed_app: FastAPI) -> None:
    async with http_client(keyed_app, WRITER) as client:
        first = await client.post("/sessions", json={"title": "t"}, headers=keyed("create"))
        again = await client.post("/sessions", json={"title": "t"}, headers=keyed("create"))
        assert first.status_code == again.status_code == 201
        assert again.headers["location"] == first.headers["location"]
        assert again.json()["id"] == first.json()["id"]
        assert len((await client.get("/sessions")).json()["sessions"]) == 1


async def test_the_same_key_with_another_body_or_path_is_422(writer: httpx.AsyncClient) -> None:
    await writer.post("/sessions/s1/messages", json={"messages": [user("a")]}, headers=keyed("k-2"))
    other_body = await writer.post("/sessions/s1/messages", json={"messages": [user("b")]}, headers=keyed("k-2"))
    assert other_body.status_code == 422
    assert other_body.headers["content-type"] == "application/problem+json"
    assert other_body.json()["type"].endswith("/idempotency-key-reused")
    other_path = await writer.post("/sessions", json={"messages": [user("a")]}, headers=keyed("k-2"))
    assert other_path.status_code == 422
    assert (await writer.get("/sessions/s1")).json()["messageCount"] == 1


async def test_a_duplicate_while_the_first_runs_is_409_and_the_first_still_lands(
    keyed_app: FastAPI, writer: httpx.AsyncClient, database_url: str
) -> None:
    # Hold the session's row lock from another connection so the first append waits inside its route.
    blocker = await asyncpg.connect(plain_dsn(database_url))
    try:
        transaction = blocker.transaction()
        await transaction.start()
        await blocker.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")
        body = {"messages": [user("slow")]}
        first = asyncio.create_task(writer.post("/sessions/s1/messages", json=body, headers=keyed("k-3")))
        # The first has claimed its key once the claim's row is committed; then it waits on the lock.
        for _ in range(200):
            if await blocker.fetchval("SELECT count(*) FROM idempotency_keys WHERE key = 'k-3'"):
                break
            await asyncio.sleep(0.05)
        duplicate = await writer.post("/sessions/s1/messages", json=body, headers=keyed("k-3"))
        assert duplicate.status_code == 409
        assert duplicate.json()["type"].endswith("/idempotency-key-in-flight")
        assert duplicate.headers["retry-after"] == "1"
        assert not first.done()
        await transaction.commit()
        assert (await first).status_code == 201
    finally:
        await blocker.close()
    replay = await writer.post("/sessions/s1/messages", json=body, headers=keyed("k-3"))
    assert replay.headers["idempotent-replayed"] == "true"
    assert (await writer.get("/sessions/s1")).json()["messageCount"] == 1


async def test_concurrent_duplicates_execute_once(writer: httpx.AsyncClient) -> None:
    body = {"messages": [user("once")]}
    answers = await asyncio.gather(
        *(writer.post("/sessions/s1/messages", json=body, headers=keyed("k-4")) for _ in range(8))
    )
    statuses = sorted(response.status_code for response in answers)
    assert set(statuses) <= {201, 409}
    assert statuses.count(201) >= 1
    created = [response for response in answers if response.status_code == 201]
    assert len({response.content for response in created}) == 1
    assert (await writer.get("/sessions/s1")).json()["messageCount"] == 1


async def test_a_request_refused_before_it_ran_is_not_kept(keyed_app: FastAPI, writer: httpx.AsyncClient) -> None:
    invalid = await writer.post("/sessions/s1/messages", json={"messages": [{"role": "nobody"}]}, headers=keyed("k-5"))
    assert invalid.status_code == 422
    missing = await writer.post("/sessions/nope/messages", json={"messages": [user("x")]}, headers=keyed("k-6"))
    assert missing.status_code == 404
    assert await kept_keys(keyed_app) == []
    # The corrected request may reuse the key: it runs instead of being called a mismatch.
    fixed = await writer.post("/sessions/s1/messages", json={"messages": [user("x")]}, headers=keyed("k-5"))
    assert fixed.status_code == 201
    assert await kept_keys(keyed_app) == [("acme", "k-5", 201)]


async def test_a_conflict_that_ran_is_kept_and_replayed(writer: httpx.AsyncClient) -> None:
    await writer.post("/sessions/s1/messages", json={"messages": [user("first", id="m1")]})
    clash = {"messages": [user("changed", id="m1")]}
    first = await writer.post("/sessions/s1/messages", json=clash, headers=keyed("k-7"))
    again = await writer.post("/sessions/s1/messages", json=clash, headers=keyed("k-7"))
    assert first.status_code == again.status_code == 409
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"


@pytest.mark.parametrize("key", ["", "   ", "k" * 256])
async def test_an_empty_or_overlong_key_is_400(writer: httpx.AsyncClient, key: str) -> None:
    response = await writer.post("/sessions/s1/messages", json={"messages": [user("x")]}, headers=keyed(key))
    assert response.status_code == 400
    assert response.json()["type"].endswith("/idempotency-key-invalid")
    assert (await writer.get("/sessions/s1")).json()["messageCount"] == 0


async def test_a_key_of_255_characters_is_accepted(writer: httpx.AsyncClient) -> None:
    key = "k" * 255
    first = await writer.post("/sessions/s1/messages", json={"messages": [user("x")]}, headers=keyed(key))
    again = await writer.post("/sessions/s1/messages", json={"messages": [user("x")]}, headers=keyed(key))
    assert (first.status_code, again.headers["idempotent-replayed"]) == (201, "true")


async def test_keys_belong_to_a_tenant(keyed_app: FastAPI) -> None:
    body = {"id": "shared", "title": "mine"}
    async with http_client(keyed_app, WRITER) as acme, http_client(keyed_app, OTHER_TENANT) as globex:
        first = await acme.post("/sessions", json=body, headers=keyed("same-key"))
        other = await globex.post("/sessions", json=body, headers=keyed("same-key"))
        assert first.status_code == other.status_code == 201
        assert "idempotent-replayed" not in other.headers
    assert [row[0] for row in await kept_keys(keyed_app)] == ["acme", "globex"]


async def test_a_runtime_key_of_the_same_tenant_shares_the_key_space(keyed_app: FastAPI) -> None:
    async with http_client(keyed_app, WRITER) as writer, http_client(keyed_app, RUNTIME) as runtime:
        first = await writer.post("/sessions", json={"id": "s9"}, headers=keyed("tenant-wide"))
        again = await runtime.post("/sessions", json={"id": "s9"}, headers=keyed("tenant-wide"))
        assert again.content == first.content and again.headers["idempotent-replayed"] == "true"


async def test_an_expired_key_runs_again_and_expired_rows_are_purged(
    keyed_app: FastAPI, writer: httpx.AsyncClient
) -> None:
    body = {"messages": [user("x")]}
    await writer.post("/sessions/s1/messages", json=body, headers=keyed("old"))
    await writer.post("/sessions/s1/messages", json=body, headers=keyed("stale"))
    async with keyed_app.state.database.transaction() as connection:
        await connection.execute(text("UPDATE idempotency_keys SET expires_at = now() - interval '1 second'"))
    rerun = await writer.post("/sessions/s1/messages", json=body, headers=keyed("old"))
    assert rerun.status_code == 201 and "idempotent-replayed" not in rerun.headers
    assert (await writer.get("/sessions/s1")).json()["messageCount"] == 3
    async with keyed_app.state.database.transaction() as connection:
        assert await purge_expired_keys(connection) == 1
    assert [row[1] for row in await kept_keys(keyed_app)] == ["old"]


async def test_the_kept_response_lasts_the_configured_time(trust_app: AppFactory) -> None:
    async with trust_app(idempotency_ttl_seconds=3600) as application, http_client(application) as client:
        await client.post("/sessions", json={"id": "s1"}, headers=keyed("ttl"))
        async with application.state.database.reading() as connection:
            lasting = text("SELECT extract(epoch FROM expires_at - created_at) FROM idempotency_keys")
            seconds = (await connection.execute(lasting)).scalar_one()
    assert 3590 <= float(seconds) <= 3610


async def test_posts_without_a_key_and_other_methods_are_untouched(
    keyed_app: FastAPI, writer: httpx.AsyncClient
) -> None:
    await writer.post("/sessions/s1/messages", json={"messages": [user("x", id="m1")]})
    patched = await writer.patch("/sessions/s1/messages/m1", json={"metadata": {"a": 1}}, headers=keyed("patch"))
    assert patched.status_code == 200 and "idempotent-replayed" not in patched.headers
    assert await kept_keys(keyed_app) == []


async def test_a_body_over_the_limit_with_a_key_is_413_and_not_kept(trust_app: AppFactory) -> None:
    async with trust_app(max_body_bytes=1024) as application, http_client(application) as client:
        await client.post("/sessions", json={"id": "s1"})
        payload = orjson.dumps({"messages": [user("x" * 4096)]})

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit must count what arrives
            for start in range(0, len(payload), 512):
                yield payload[start : start + 512]

        response = await client.post(
            "/sessions/s1/messages",
            content=chunks(),
            headers={**keyed("big"), "content-type": "application/json"},
        )
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/problem+json"
        assert await kept_keys(application) == []


async def test_a_request_outliving_its_lease_keeps_the_key_by_renewing_it(
    trust_app: AppFactory, database_url: str
) -> None:
    async with trust_app(idempotency_lease_seconds=1) as application, http_client(application) as client:
        await client.post("/sessions", json={"id": "s1"})
        blocker = await asyncpg.connect(plain_dsn(database_url))
        try:
            transaction = blocker.transaction()
            await transaction.start()
            await blocker.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")
            body = {"messages": [user("slow")]}
            first = asyncio.create_task(client.post("/sessions/s1/messages", json=body, headers=keyed("long")))
            await asyncio.sleep(2.5)  # well past the one-second lease
            duplicate = await client.post("/sessions/s1/messages", json=body, headers=keyed("long"))
            assert duplicate.status_code == 409
            await transaction.commit()
            assert (await first).status_code == 201
        finally:
            await blocker.close()
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 1


async def test_a_key_abandoned_in_flight_is_free_once_its_lease_ends(keyed_app: FastAPI) -> None:
    async with keyed_app.state.database.transaction() as connection:
        await connection.execute(
            text(
                "INSERT INTO idempotency_keys (tenant_id, key, fingerprint, claim, expires_at) "
                "VALUES ('acme', 'orphan', :fingerprint, 'dead-process', now() - interval '1 second')"
            ),
            {"fingerprint": "0" * 64},
        )
    async with http_client(keyed_app, WRITER) as client:
        response = await client.post("/sessions", json={"id": "s1"}, headers=keyed("orphan"))
        assert response.status_code == 201
    assert await kept_keys(keyed_app) == [("acme", "orphan", 201)]


async def test_two_replicas_sharing_the_database_run_a_key_once(trust_app: AppFactory) -> None:
    async with trust_app() as one, trust_app() as two, http_client(one) as first, http_client(two) as second:
        await first.post("/sessions", json={"id": "s1"})
        body = {"messages": [user("exactly once")]}
        answers = await asyncio.gather(
            *(
                replica.post("/sessions/s1/messages", json=body, headers=keyed("replicas"))
                for replica in (first, second) * 4
            )
        )
        assert {response.status_code for response in answers} <= {201, 409}
        assert (await second.get("/sessions/s1")).json()["messageCount"] == 1


async def test_a_payload_built_by_chat_is_not_kept_under_its_key(keyed_app: FastAPI) -> None:
    """``POST /chat`` writes nothing: keeping its answers would let a reader fill the database."""
    async with http_client(keyed_app, WRITER) as writer:
        await writer.post("/sessions", json={"id": "s1"})
        await writer.post("/sessions/s1/messages", json={"messages": [user("hi")]})
    request = {"sessionId": "s1", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    async with http_client(keyed_app, READER) as reader:
        first = await reader.post("/chat", json=request, headers=keyed("chat"))
        again = await reader.post("/chat", json=request, headers=keyed("chat"))
    assert first.status_code == again.status_code == 200
    assert "idempotent-replayed" not in again.headers
    assert await kept_keys(keyed_app) == []


@pytest.mark.parametrize(("first_key", "later_key"), [(RUNTIME, READER), (RUNTIME, WRITER), (WRITER, READER)])
async def test_a_kept_response_does_not_replay_to_a_lesser_role(
    keyed_app: FastAPI, first_key: str, later_key: str
) -> None:
    async with http_client(keyed_app, first_key) as first, http_client(keyed_app, later_key) as later:
        assert (await first.post("/sessions", json={"id": "s1"}, headers=keyed("ranked"))).status_code == 201
        replay = await later.post("/sessions", json={"id": "s1"}, headers=keyed("ranked"))
    assert replay.status_code == 403
    assert replay.headers["content-type"] == "application/problem+json"
    assert replay.json()["field"] == "Idempotency-Key"
    assert "idempotent-replayed" not in replay.headers


async def test_a_response_too_large_to_keep_is_not_replayed_and_not_run_again(trust_app: AppFactory) -> None:
    async with trust_app(idempotency_max_response_bytes=600) as application, http_client(application) as client:
        await client.post("/sessions", json={"id": "s1"})
        body = {"messages": [user("x" * 1000)]}
        first = await client.post("/sessions/s1/messages", json=body, headers=keyed("big-answer"))
        again = await client.post("/sessions/s1/messages", json=body, headers=keyed("big-answer"))
        small = await client.post("/sessions", json={"id": "s2"}, headers=keyed("small-answer"))
        small_again = await client.post("/sessions", json={"id": "s2"}, headers=keyed("small-answer"))
        assert first.status_code == 201 and len(first.content) > 600
        assert again.status_code == 409
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["type"].endswith("/idempotent-response-not-kept")
        assert again.json()["originalStatus"] == 201
        assert (await client.get("/sessions/s1")).json()["messageCount"] == 1
        assert small_again.content == small.content and small_again.headers["idempotent-replayed"] == "true"
        async with application.state.database.reading() as connection:
            sizes = await connection.execute(text("SELECT length(response_body) FROM idempotency_keys"))
            assert max(size for (size,) in sizes) <= 600


async def test_a_tenant_holds_at_most_the_configured_number_of_live_keys(trust_app: AppFactory) -> None:
    keys = orjson.dumps([{"key": WRITER, "tenant": "acme", "role": "writer"}, *OTHER_KEYS]).decode()
    async with (
        trust_app(api_keys=keys, idempotency_max_keys_per_tenant=2) as application,
        http_client(application, WRITER) as acme,
        http_client(application, OTHER_TENANT) as globex,
    ):
        first = await acme.post("/sessions", json={"id": "s1"}, headers=keyed("one"))
        await acme.post("/sessions", json={"id": "s2"}, headers=keyed("two"))
        third = await acme.post("/sessions", json={"id": "s3"}, headers=keyed("three"))
        assert third.status_code == 429
        assert third.json()["type"].endswith("/idempotency-keys-exhausted")
        assert third.headers["retry-after"] == "1"
        assert (await acme.get("/sessions/s3")).status_code == 404
        replay = await acme.post("/sessions", json={"id": "s1"}, headers=keyed("one"))
        assert replay.content == first.content and replay.headers["idempotent-replayed"] == "true"
        assert (await acme.post("/sessions", json={"id": "s4"})).status_code == 201
        assert (await globex.post("/sessions", json={"id": "s1"}, headers=keyed("three"))).status_code == 201
        assert sorted(key for _, key, _ in await kept_keys(application)) == ["one", "three", "two"]


async def test_a_body_cut_short_by_the_client_is_not_run(keyed_app: FastAPI) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {WRITER}".encode()),
        (b"idempotency-key", b"cut"),
    ]
    # What arrived parses on its own, but the client said more was coming and then went away.
    answer = await raw_request(
        keyed_app, "POST", "/sessions", headers=headers, chunks=[b'{"id": "s1"}', b"   "], disconnect_after=True
    )
    assert answer.status == 0  # nobody left to answer
    async with http_client(keyed_app, WRITER) as writer:
        assert (await writer.get("/sessions/s1")).status_code == 404
    assert await kept_keys(keyed_app) == []
