"""The remembered prompt prefix: one row per session and parameters, overwritten, gone with its session, and
no more than ``KEPT_PER_SESSION`` of them however many ways a session is asked for."""

import httpx
from fastapi import FastAPI
from sqlalchemy import text

from app.api.auth import DEFAULT_TENANT
from app.store.prompt_prefixes import KEPT_PER_SESSION, PromptPrefixRecord, PromptPrefixRepository
from tests.api.wire import append, new_session, user

FIRST = PromptPrefixRecord(
    units=2, digest="a" * 64, length=100, total_length=150, revision=1, boundary_id=None, pruned=0
)


async def test_the_newest_prefix_replaces_the_previous_one_per_parameters(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    database = app.state.database
    newer = FIRST._replace(units=4, digest="b" * 64, revision=2, boundary_id="b1", pruned=3, written_units=5)
    newer = newer._replace(written_digest="c" * 64, written_length=900)
    async with database.transaction() as connection:
        await PromptPrefixRepository(connection, DEFAULT_TENANT).put("s1", "p1", FIRST)
        await PromptPrefixRepository(connection, DEFAULT_TENANT).put("s1", "p2", FIRST)
    async with database.transaction() as connection:
        await PromptPrefixRepository(connection, DEFAULT_TENANT).put("s1", "p1", newer)
    async with database.reading() as connection:
        repository = PromptPrefixRepository(connection, DEFAULT_TENANT)
        assert await repository.get("s1", "p1") == newer
        assert await repository.get("s1", "p2") == FIRST
        assert await PromptPrefixRepository(connection, "other-tenant").get("s1", "p1") is None


async def test_a_session_deleted_keeps_no_prefix(app: FastAPI, client: httpx.AsyncClient) -> None:
    database = app.state.database
    async with database.transaction() as connection:
        await PromptPrefixRepository(connection, DEFAULT_TENANT).put("gone", "p1", FIRST)
    await new_session(client)
    async with database.transaction() as connection:
        await PromptPrefixRepository(connection, DEFAULT_TENANT).put("s1", "p1", FIRST)
    assert (await client.delete("/sessions/s1")).status_code in (200, 204)
    async with database.reading() as connection:
        repository = PromptPrefixRepository(connection, DEFAULT_TENANT)
        assert await repository.get("gone", "p1") is None
        assert await repository.get("s1", "p1") is None


async def test_a_session_asked_in_ever_new_ways_keeps_only_its_newest_prefixes(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """A runtime whose system prompt changes every turn (it names the time) asks with new parameters each
    time: each /chat adds a row, and before the cap the session gained one a turn for as long as it lived."""
    session_id = await new_session(client, "ever-new")
    assert (await append(client, session_id, user("hello"))).status_code == 201

    def ask(turn: int) -> dict[str, str]:
        return {"sessionId": session_id, "provider": "openai", "model": "gpt-4o", "system": f"It is 12:{turn:02d}."}

    turns = KEPT_PER_SESSION + 8
    for turn in range(turns):
        assert (await client.post("/chat", json=ask(turn))).status_code == 200
    async with app.state.database.reading() as connection:
        kept = await connection.scalar(
            text("SELECT count(*) FROM prompt_prefixes WHERE session_id = :s"), {"s": session_id}
        )
    assert kept == KEPT_PER_SESSION
    again = await client.post("/chat", json=ask(turns - 1))
    assert again.json()["context"]["cache"]["nextRequest"]["unchangedPrefixTokens"] is not None
