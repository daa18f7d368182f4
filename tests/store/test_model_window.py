"""The model view reads only the compaction window from storage, never the whole history."""

from dataclasses import replace

import httpx
from fastapi import FastAPI
from sqlalchemy import text

from app.api.auth import DEFAULT_TENANT
from app.engine.promotion import promote
from app.store.messages import MessageRepository, to_persisted
from app.store.records import MessageRecord
from tests.api.wire import append, boundary, new_session, summary, tool_call, tool_result, user


async def stored(repository: MessageRepository, message_id: str) -> MessageRecord:
    """The row of a message of session s1, read by its id."""
    record = await repository.get("s1", message_id)
    assert record is not None, message_id
    return record


async def window_ids(app: FastAPI, session_id: str = "s1") -> list[str]:
    async with app.state.database.reading() as connection:
        window = await MessageRepository(connection, DEFAULT_TENANT).live_history(session_id)
    return [message.id for message in window]


async def test_uncompacted_session_window_is_the_whole_session(app: FastAPI, client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"q{index}", id=f"m{index}") for index in range(5)))
    assert await window_ids(app) == [f"m{index}" for index in range(5)]


async def test_window_is_the_kept_tail_boundary_summary_and_what_follows(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"q{index}", id=f"m{index}") for index in range(100)))
    await append(client, "s1", boundary("b1", through="m97"), summary("b1", "Earlier history.", id="sum1"))
    await append(client, "s1", user("next", id="n1"))
    assert await window_ids(app) == ["m98", "m99", "b1", "sum1", "n1"]


async def test_summary_written_before_its_boundary_is_still_loaded(app: FastAPI, client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"q{index}", id=f"m{index}") for index in range(10)))
    await append(client, "s1", summary("b1", "Earlier history.", id="sum1"), user("between", id="x"), boundary("b1"))
    await append(client, "s1", user("after", id="n1"))
    assert await window_ids(app) == ["sum1", "b1", "n1"]


async def test_an_incomplete_newer_boundary_leaves_the_older_window_in_force(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    await append(client, "s1", user("a", id="m1"), boundary("b1"), summary("b1", "First summary.", id="sum1"))
    await append(client, "s1", user("b", id="m2"), boundary("b2"), summary("b2", "   ", id="blank"))
    assert await window_ids(app) == ["b1", "sum1", "m2", "b2", "blank"]


async def test_window_never_starts_between_a_call_and_its_result(app: FastAPI, client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(
        client, "s1", user("a", id="m1"), tool_call("c1", "read", id="t1"), tool_result("c1", "read", "x", id="t2")
    )
    await append(client, "s1", boundary("b1", through="t1"), summary("b1", "Summary.", id="sum1"))
    body = (await client.get("/sessions/s1/projection", params={"view": "model"})).json()
    sources = [source for message in body["messages"] for source in message["sourceMessageIds"]]
    assert ("t2" in sources) == ("t1" in sources)


async def test_window_messages_are_the_stored_rows_promoted_field_for_field(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """The window's rows go to promotion positionally: a column out of place would move a value into
    another field, which this compares against the row read by name."""
    await new_session(client)
    await append(
        client, "s1", user("q", id="m1"), tool_call("c1", "read", id="m2"), tool_result("c1", "read", "text", id="m3")
    )
    async with app.state.database.reading() as connection:
        repository = MessageRepository(connection, DEFAULT_TENANT)
        window = await repository.live_history("s1")
        by_name = [promote(to_persisted(await stored(repository, message.id))) for message in window]
        sizes = dict(
            (
                await connection.execute(
                    text(
                        "SELECT id, octet_length(content::text) + octet_length(metadata::text)"
                        " FROM messages WHERE session_id = 's1'"
                    )
                )
            ).all()
        )
    assert [replace(message, stored_bytes=0) for message in window] == by_name
    assert {message.id: message.stored_bytes for message in window} == sizes
