"""jsonb values cross the engine's orjson codec unchanged, on hot reads and Core statements alike."""

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from app.api.auth import DEFAULT_TENANT
from app.store.messages import MessageRepository
from app.store.tables import messages
from tests.api.wire import append, new_session

CONTENT = [
    {"type": "text", "text": 'héllo 中文 😀 \u00a0 "quoted" \\ back\nslash'},
    {"type": "text", "text": "", "providerOptions": {"x": {"nested": [1, 2.5, None, True, {"deep": "ü"}]}}},
]
METADATA = {"tags": ["ä", "b"], "score": 0.125, "big": 2**53, "empty": {}, "none": None}


async def test_content_and_metadata_read_back_exactly_on_every_read_path(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    response = await append(client, "s1", {"id": "m1", "role": "user", "content": CONTENT, "metadata": METADATA})
    assert response.status_code == 201, response.text

    async with app.state.database.reading() as connection:
        repository = MessageRepository(connection, DEFAULT_TENANT)
        (window,) = await repository.from_seq("s1", 1)
        row = await repository.get("s1", "m1")
        page, _ = await repository.page("s1", limit=5, after_seq=None, before_seq=None, backwards=True)
        core = (await connection.execute(select(messages.c.content, messages.c.metadata))).one()
    assert row is not None
    assert window.content == row.content == page[0].content == core.content == CONTENT
    assert window.metadata == row.metadata == page[0].metadata == core.metadata == METADATA


async def test_an_amended_metadata_value_written_through_core_reads_back_exactly(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    await append(client, "s1", {"id": "m1", "role": "user", "content": "hi"})
    response = await client.patch("/sessions/s1/messages/m1", json={"metadata": {"note": "ñ 😀", "list": [1, "ß"]}})
    assert response.status_code == 200, response.text
    async with app.state.database.reading() as connection:
        row = await MessageRepository(connection, DEFAULT_TENANT).get("s1", "m1")
    assert row is not None
    assert row.metadata == {"note": "ñ 😀", "list": [1, "ß"]}
