"""A reading connection is one snapshot from its start, whatever runs first on it: a raw driver read issued
before any Core statement is inside the snapshot too."""

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncConnection

from app.api.auth import DEFAULT_TENANT
from app.engine.message import EngineMessage
from app.store.messages import MessageRepository
from tests.api.wire import append, boundary, new_session, summary, user


class CommitsBetweenStatements(MessageRepository):
    """The live-history read with another request's append committed right after its first statement."""

    def __init__(self, connection: AsyncConnection, tenant_id: str, client: httpx.AsyncClient) -> None:
        super().__init__(connection, tenant_id)
        self._client = client

    async def live_history(self, session_id: str) -> list[EngineMessage]:
        found = await super().live_history(session_id)
        committed = await append(self._client, session_id, user("late", id="late"))
        assert committed.status_code == 201
        return found


async def test_the_live_history_read_first_on_a_fresh_reading_connection_is_one_snapshot(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"q{index}", id=f"m{index}") for index in range(5)))
    await append(client, "s1", boundary("b1", through="m2"), summary("b1", "Earlier.", id="sum1"))
    async with app.state.database.reading() as connection:
        repository = CommitsBetweenStatements(connection, DEFAULT_TENANT, client)
        history = await repository.live_history("s1")
        again = await repository.from_seq("s1", 1)
    assert [message.id for message in history] == ["m3", "m4", "b1", "sum1"]
    assert "late" not in {message.id for message in again}
    async with app.state.database.reading() as connection:
        assert "late" in {m.id for m in await MessageRepository(connection, DEFAULT_TENANT).from_seq("s1", 1)}
