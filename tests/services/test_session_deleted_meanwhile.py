"""A write that refers to a session whose deletion commits while it runs finds the session gone: a compaction is
404 and ``/chat``'s remembered prefix is not kept, never a foreign-key error (a 500).

Each test holds the deletion open in a transaction of its own, starts the write, waits until the write waits
for the deletion's lock, then commits the deletion."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.api.auth import DEFAULT_TENANT, LOCAL_PRINCIPAL
from app.errors import NotFound
from app.projections.types import ProjectionContext
from app.services.compaction import CompactionAsk, compact
from app.store.prompt_prefixes import PromptPrefixRecord, PromptPrefixRepository
from tests.api.wire import append, assistant, new_session, user
from tests.database import plain_dsn, until_waiting_for

PREFIX = PromptPrefixRecord(
    units=2, digest="a" * 64, length=100, total_length=150, revision=1, boundary_id=None, pruned=0
)


@asynccontextmanager
async def deletion_held_open(
    direct_database_url: str, session_id: str
) -> AsyncIterator[Callable[[Awaitable[Any]], Awaitable[Any]]]:
    """The session deleted in a transaction left open; ``commit_once_waited_for(write)`` starts ``write``, and
    commits the deletion once the write waits for its lock."""
    deleting = await asyncpg.connect(plain_dsn(direct_database_url))  # its pid is the server's, with no pooler
    transaction = deleting.transaction()
    await transaction.start()
    await deleting.execute("DELETE FROM sessions WHERE tenant_id = $1 AND id = $2", DEFAULT_TENANT, session_id)

    async def commit_once_waited_for(write: Awaitable[Any]) -> Any:
        running = asyncio.ensure_future(write)
        await until_waiting_for(direct_database_url, deleting.get_server_pid(), running)
        assert not running.done(), "the write did not wait for the deletion"
        await transaction.commit()
        return await running

    try:
        yield commit_once_waited_for
    finally:
        await deleting.close()


async def test_a_prefix_remembered_while_its_session_is_deleted_is_not_kept(
    app: FastAPI, client: httpx.AsyncClient, direct_database_url: str
) -> None:
    await new_session(client, "s1")
    database = app.state.database

    async def remember() -> None:
        async with database.single_write() as connection:
            await PromptPrefixRepository(connection, DEFAULT_TENANT).put("s1", "p1", PREFIX)

    async with deletion_held_open(direct_database_url, "s1") as commit_once_waited_for:
        await commit_once_waited_for(remember())
    async with database.reading() as connection:
        assert await PromptPrefixRepository(connection, DEFAULT_TENANT).get("s1", "p1") is None


async def test_a_compaction_of_a_session_deleted_as_it_starts_is_not_found(
    app: FastAPI, client: httpx.AsyncClient, direct_database_url: str
) -> None:
    await new_session(client, "s1")
    await append(client, "s1", user("Read the log", id="u1"), assistant("Read.", id="a1"))
    state = app.state
    ask = CompactionAsk("s1", ProjectionContext(), summary="Read the log.", through_message_id="u1")
    compaction = compact(
        state.database, state.model_windows, None, state.settings, LOCAL_PRINCIPAL, ask, datetime.now(UTC)
    )

    async with deletion_held_open(direct_database_url, "s1") as commit_once_waited_for:
        with pytest.raises(NotFound):
            await commit_once_waited_for(compaction)
