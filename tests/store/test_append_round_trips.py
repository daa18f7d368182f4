"""An append of new messages is one statement on the wire; its rows are the rows the careful path writes; and
concurrent appends of one id still store it once."""

import asyncio
from datetime import UTC, datetime

import asyncpg
import httpx
from fastapi import FastAPI

from app.api.auth import DEFAULT_TENANT, LOCAL_PRINCIPAL
from app.services.intake import MessageInput, prepare_batch
from app.store.messages import MessageRepository
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.database import plain_dsn
from tests.statements import statements_sent


async def test_a_single_message_append_is_one_statement_and_one_round_trip_on_the_wire(
    one_connection_app: FastAPI, client: httpx.AsyncClient
) -> None:
    """Counted where statements leave: SQLAlchemy's cursor (its Core statements, which asyncpg runs as
    prepared statements its query logger does not see) and asyncpg's query logger (raw driver statements,
    and the BEGIN, COMMIT and ping the adapter sends). On main this was ten: the pool's ping (BEGIN, ";",
    ROLLBACK), BEGIN, the lock, the id check, the insert, the session update, the notice and COMMIT."""
    transport = httpx.ASGITransport(app=one_connection_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        await new_session(http, "w")
        await append(http, "w", user("the first use of the statement on this connection", id="m0"))
        async with statements_sent(one_connection_app) as sent:
            response = await append(http, "w", user("one more", id="m1"))
    assert response.status_code == 201
    appended = [statement for statement in sent if "INSERT INTO messages" in statement]
    assert len(appended) == 1, sent
    if one_connection_app.state.settings.transaction_pooling:
        # Behind a transaction pooler the timeouts come with BEGIN: BEGIN, the statement, COMMIT.
        # (SQLAlchemy's event sees the statement before its adapter sends the BEGIN, so order is not compared.)
        assert sorted(statement.split()[0].rstrip(";") for statement in sent) == ["BEGIN", "COMMIT", "WITH"], sent
    else:
        assert sent == appended


def stored_rows_sql() -> str:
    return (
        "SELECT seq, id, run_id, role, kind, content::text, metadata::text, token_estimate, created_at,"
        " unusual_text, search_config::text, search_text, search_vector::text, tool_calls, tool_results,"
        " tool_errors FROM messages WHERE tenant_id = $1 AND session_id = $2 ORDER BY seq"
    )


async def test_the_one_statement_append_stores_what_the_locked_append_stores(
    app: FastAPI, client: httpx.AsyncClient, database_url: str
) -> None:
    """Every column, for messages with tool parts, quotes and backslashes in tool names, a run, odd text and
    metadata: a column the one-statement insert forgot (or wrote differently) shows here."""
    now = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    inputs = [
        MessageInput(role="user", content="plain \x00 text and \ud83d", id="m1", metadata={"k": "\x00"}),
        MessageInput(role="assistant", content=[{"type": "text", "text": "big " + "9" * 30}], id="m2", run_id=None),
        MessageInput(
            role="assistant",
            content=tool_call("c1", 'we"ird\\name', path="a")["content"],
            id="m3",
            metadata={"n": 2**62, "x": [1.5, None]},
        ),
        MessageInput(role="tool", content=tool_result("c1", 'we"ird\\name', "out")["content"], id="m4"),
        MessageInput(role="assistant", content=assistant("done")["content"], id="m5"),
    ]
    for session_id in ("fast", "locked"):
        await new_session(client, session_id)
    batch = prepare_batch(inputs, LOCAL_PRINCIPAL, app.state.settings, now)
    async with app.state.database.single_write() as connection:
        assert await MessageRepository(connection, DEFAULT_TENANT).append_new("fast", batch) is not None
    async with app.state.database.transaction() as connection:
        repository = MessageRepository(connection, DEFAULT_TENANT)
        last_seq = await repository.lock_session("locked")
        assert last_seq == 0
        await repository.append("locked", last_seq, batch)
    connection = await asyncpg.connect(plain_dsn(database_url))
    try:
        fast = await connection.fetch(stored_rows_sql(), DEFAULT_TENANT, "fast")
        locked = await connection.fetch(stored_rows_sql(), DEFAULT_TENANT, "locked")
        sessions = await connection.fetch(
            "SELECT last_seq, revision FROM sessions WHERE id IN ('fast', 'locked') ORDER BY id"
        )
    finally:
        await connection.close()
    assert [tuple(row) for row in fast] == [tuple(row) for row in locked]
    assert len(fast) == len(inputs)
    assert [tuple(row) for row in sessions] == [(5, 5), (5, 5)]


async def test_concurrent_appends_of_one_id_store_it_once_and_the_others_replay_it(client: httpx.AsyncClient) -> None:
    await new_session(client, "race")
    responses = await asyncio.gather(*(append(client, "race", user("same", id="dup")) for _ in range(12)))
    assert sorted(response.status_code for response in responses) == [200] * 11 + [201]
    assert {response.json()["messages"][0]["seq"] for response in responses} == {1}
    listed = (await client.get("/sessions/race/messages")).json()["messages"]
    assert [message["id"] for message in listed] == ["dup"]
