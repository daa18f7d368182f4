"""Messages stored before search existed are back-filled by its migration, from their parts, in Python."""

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import orjson
import pytest

from app.store import migrations
from tests.database import create_database, drop_database, plain_dsn


@pytest.fixture
async def database_before_search(database_server: str, database_url: str) -> AsyncIterator[str]:
    url = await create_database(database_server)
    await asyncio.to_thread(migrations.upgrade, url, "0003")
    yield url
    await drop_database(database_server, url)


async def test_the_migration_fills_the_search_and_tool_columns_of_stored_messages(database_before_search: str) -> None:
    call = [{"type": "tool-call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "make deploy"}}]
    failed = [
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "toolName": "bash",
            "output": {"type": "error-text", "value": "boom"},
        }
    ]
    connection = await asyncpg.connect(plain_dsn(database_before_search))
    try:
        await connection.execute("INSERT INTO sessions (tenant_id, id) VALUES ('t', 's')")
        await connection.executemany(
            "INSERT INTO messages (tenant_id, session_id, seq, id, role, kind, content)"
            " VALUES ('t', 's', $1, $2, $3, $4, $5::jsonb)",
            [
                (1, "m1", "user", "user_input", orjson.dumps("Please ship it").decode()),
                (2, "m2", "assistant", "tool_call", orjson.dumps(call).decode()),
                (3, "m3", "tool", "tool_result", orjson.dumps(failed).decode()),
            ],
        )
        await asyncio.to_thread(migrations.upgrade, database_before_search)
        rows = await connection.fetch(
            "SELECT id, search_text, tool_calls, tool_results, tool_errors FROM messages ORDER BY seq"
        )
        found = await connection.fetch(
            "SELECT id FROM messages WHERE search_vector @@ websearch_to_tsquery('simple', 'deploy')"
        )
    finally:
        await connection.close()
    assert [tuple(row) for row in rows] == [
        ("m1", "Please ship it", [], [], []),
        ("m2", "bash\ncommand: make deploy", ["bash"], [], []),
        ("m3", "bash\nboom", [], ["bash"], ["bash"]),
    ]
    assert [row["id"] for row in found] == ["m2"]
