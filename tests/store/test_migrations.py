"""The migrations build the schema on an empty database, match the table definitions, come down cleanly, and
carry a populated database across without loss."""

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from asgi_lifespan import LifespanManager
from sqlalchemy.ext.asyncio import create_async_engine

from app.main import create_app
from app.store import migrations
from app.store.escaped_text import ESCAPE_MARK
from app.store.tables import metadata
from tests.conftest import settings_for_tests
from tests.database import as_served, create_database, drop_database, plain_dsn


@pytest.fixture
async def empty_database(database_server: str, database_url: str) -> AsyncIterator[str]:
    url = await create_database(database_server)
    yield as_served(url)
    await drop_database(database_server, url)


async def tables(url: str) -> set[str]:
    connection = await asyncpg.connect(plain_dsn(url))
    try:
        rows = await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await connection.close()
    return {row["tablename"] for row in rows}


async def test_upgrade_on_an_empty_database_then_downgrade_leaves_it_empty(empty_database: str) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database)
    assert {"sessions", "runs", "messages", "alembic_version"} <= await tables(empty_database)
    await asyncio.to_thread(migrations.downgrade, empty_database)
    assert await tables(empty_database) == {"alembic_version"}
    await asyncio.to_thread(migrations.upgrade, empty_database)
    assert {"sessions", "runs", "messages"} <= await tables(empty_database)


async def test_migrated_schema_matches_the_table_definitions(empty_database: str) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database)
    engine = create_async_engine(empty_database)
    async with engine.connect() as connection:
        differences = await connection.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync), metadata)
        )
    await engine.dispose()
    assert differences == []


STORED_BEFORE = [
    ("u1", "user", "user_input", "Why does the build fail? 帮我看看 🙂", {}),
    (
        "a1",
        "assistant",
        "tool_call",
        [{"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "a.ts", "n": 2**62}}],
        {"model": "claude-sonnet-4-5", "usage": {"inputTokens": 10, "outputTokens": 2.5}},
    ),
    (
        "t1",
        "tool",
        "tool_result",
        [{"type": "tool-result", "toolCallId": "c1", "toolName": "Read", "output": {"type": "text", "value": "ok"}}],
        {"compactedAt": "2026-01-01T00:00:00Z", "odd": ESCAPE_MARK + "began with the escape mark", "n": None},
    ),
    ("b1", "system", "compact_boundary", "compacted", {"runtimeKind": "compact_boundary"}),
]
"""What a database at 0004 may hold, a string that starts with the escape mark included."""


async def populated_at_0004(url: str) -> None:
    await asyncio.to_thread(migrations.upgrade, url, "0004")
    connection = await asyncpg.connect(plain_dsn(url))
    try:
        await connection.execute(
            "INSERT INTO sessions (tenant_id, id, title, metadata, last_seq) VALUES ($1, 's1', $2, $3::jsonb, 4)",
            "default",
            ESCAPE_MARK + " title",
            orjson.dumps({"cwd": "/repo"}).decode(),
        )
        for seq, (message_id, role, kind, content, meta) in enumerate(STORED_BEFORE, start=1):
            await connection.execute(
                "INSERT INTO messages (tenant_id, session_id, seq, id, role, kind, content, metadata)"
                " VALUES ('default', 's1', $1, $2, $3, $4, $5::jsonb, $6::jsonb)",
                seq,
                message_id,
                role,
                kind,
                orjson.dumps(content).decode(),
                orjson.dumps(meta).decode(),
            )
    finally:
        await connection.close()


async def read_back(url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    app = create_app(settings_for_tests(), database_url=url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        session = (await client.get("/sessions/s1")).json()
        messages = (await client.get("/sessions/s1/messages")).json()["messages"]
    return session, messages


async def test_a_populated_database_migrates_to_lossless_content_without_loss(empty_database: str) -> None:
    await populated_at_0004(empty_database)
    await asyncio.to_thread(migrations.upgrade, empty_database)
    session, messages = await read_back(empty_database)
    assert session["title"] == ESCAPE_MARK + " title"
    assert [(m["id"], m["role"], m["kind"], m["content"], m["metadata"]) for m in messages] == STORED_BEFORE


async def test_downgrade_restores_jsonb_and_is_refused_once_a_message_holds_what_jsonb_cannot(
    empty_database: str,
) -> None:
    await populated_at_0004(empty_database)
    await asyncio.to_thread(migrations.upgrade, empty_database)
    await asyncio.to_thread(migrations.downgrade, empty_database, "0004")
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        content_type = await connection.fetchval(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'messages' AND column_name = 'content'"
        )
        assert content_type == "jsonb"
        await connection.execute("DELETE FROM messages WHERE id = 't1'")
        await connection.execute("UPDATE sessions SET title = 'plain'")
    finally:
        await connection.close()
    await asyncio.to_thread(migrations.upgrade, empty_database)
    app = create_app(settings_for_tests(), database_url=empty_database)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        sent = {"messages": [{"id": "n1", "role": "user", "content": "cat a.bin: \x00"}]}
        assert (await client.post("/sessions/s1/messages", json=sent)).status_code == 201
    with pytest.raises(RuntimeError, match="1 messages, sessions or runs hold text"):
        await asyncio.to_thread(migrations.downgrade, empty_database, "0004")
    _, messages = await read_back(empty_database)
    assert messages[-1]["content"] == "cat a.bin: \x00"


async def test_model_references_stored_as_text_come_through_as_the_same_strings(empty_database: str) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database, "0004")
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        await connection.execute(
            "INSERT INTO sessions (tenant_id, id, model) VALUES ('t', 's1', 'anthropic/claude-sonnet-4-5')"
        )
        await connection.execute(
            "INSERT INTO runs (tenant_id, session_id, id, model) VALUES ('t', 's1', 'r1', 'gpt-5')"
        )
        await asyncio.to_thread(migrations.upgrade, empty_database)
        session_model = await connection.fetchval("SELECT model #>> '{}' FROM sessions")
        run_model = await connection.fetchval("SELECT jsonb_typeof(model) || ':' || (model #>> '{}') FROM runs")
    finally:
        await connection.close()
    assert (session_model, run_model) == ("anthropic/claude-sonnet-4-5", "string:gpt-5")


async def test_messages_stored_before_the_size_columns_get_their_sizes(empty_database: str) -> None:
    await populated_at_0004(empty_database)
    await asyncio.to_thread(migrations.upgrade, empty_database)
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        rows = await connection.fetch(
            "SELECT content::text AS content, metadata::text AS metadata, content_bytes, content_parts,"
            " metadata_bytes FROM messages ORDER BY seq"
        )
    finally:
        await connection.close()
    parts = [1 if isinstance(content, str) else len(content) for _, _, _, content, _ in STORED_BEFORE]
    assert [row["content_parts"] for row in rows] == parts
    for row in rows:
        assert row["content_bytes"] == len(row["content"].encode())
        assert row["metadata_bytes"] == len(row["metadata"].encode())


COMPACTED_AT_0007 = [
    ("q1", "user", "user_input", "first", {}),
    ("q2", "user", "user_input", "second", {}),
    ("q3", "user", "user_input", "third", {}),
    ("old", "system", "compact_boundary", "compacted", {"runtimeKind": "compact_boundary"}),
    ("olds", "system", "compact_summary", "Old.", {"runtimeKind": "compact_summary", "summaryForBoundaryId": "old"}),
    ("q4", "user", "user_input", "fourth", {}),
    (
        "b1",
        "system",
        "compact_boundary",
        "compacted",
        {"runtimeKind": "compact_boundary", "compactThroughMessageId": "q3"},
    ),
    ("s1", "system", "compact_summary", "Summary.", {"runtimeKind": "compact_summary", "summaryForBoundaryId": "b1"}),
    ("b2", "system", "compact_boundary", "compacted", {"runtimeKind": "compact_boundary"}),
    ("s2", "system", "compact_summary", "  ", {"runtimeKind": "compact_summary", "summaryForBoundaryId": "b2"}),
    ("q5", "user", "user_input", "fifth", {}),
]
"""A session at 0007 whose newest complete compaction (b1, s1) keeps q4 as its tail: a newer boundary has a
blank summary only."""


async def test_migrating_a_populated_database_from_0007_fills_in_each_sessions_live_history_start(
    empty_database: str,
) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database, "0007")
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        for session_id, rows in (("compacted", COMPACTED_AT_0007), ("plain", COMPACTED_AT_0007[:3])):
            await connection.execute(
                "INSERT INTO sessions (tenant_id, id, last_seq) VALUES ('default', $1, $2)", session_id, len(rows)
            )
            for seq, (message_id, role, kind, content, meta) in enumerate(rows, start=1):
                await connection.execute(
                    "INSERT INTO messages (tenant_id, session_id, seq, id, role, kind, content, metadata)"
                    " VALUES ('default', $1, $2, $3, $4, $5, $6::json, $7::jsonb)",
                    session_id,
                    seq,
                    message_id,
                    role,
                    kind,
                    orjson.dumps(content).decode(),
                    orjson.dumps(meta).decode(),
                )
        await asyncio.to_thread(migrations.upgrade, empty_database)
        sessions = await connection.fetch(
            "SELECT id, compaction_boundary_seq, compaction_summary_seq, live_history_start_seq FROM sessions"
            " ORDER BY id"
        )
    finally:
        await connection.close()
    assert [tuple(row) for row in sessions] == [("compacted", 7, 8, 4), ("plain", None, None, None)]


UPGRADING = Path(__file__).resolve().parents[2] / "docs" / "upgrading.md"


def statements_before_upgrading() -> list[str]:
    """The SQL statements ``docs/upgrading.md`` tells an operator to run, one by one, in its order."""
    blocks = re.findall(r"```sql\n(.*?)```", UPGRADING.read_text(), flags=re.DOTALL)
    return [statement.strip() for block in blocks for statement in block.split(";") if statement.strip()]


async def messages_schema(url: str) -> tuple[list[Any], list[Any]]:
    connection = await asyncpg.connect(plain_dsn(url))
    try:
        columns = await connection.fetch(
            "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns"
            " WHERE table_name = 'messages' ORDER BY column_name"
        )
        indexes = await connection.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'messages' ORDER BY indexname"
        )
    finally:
        await connection.close()
    return [tuple(row) for row in columns], [tuple(row) for row in indexes]


async def test_indexes_built_beforehand_as_the_upgrading_guide_says_give_the_schema_a_plain_upgrade_builds(
    empty_database: str, database_server: str
) -> None:
    assert len(statements_before_upgrading()) == 5
    await asyncio.to_thread(migrations.upgrade, empty_database, "0010")
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        for statement in statements_before_upgrading():
            await connection.execute(statement)
    finally:
        await connection.close()
    await asyncio.to_thread(migrations.upgrade, empty_database)
    plain = as_served(await create_database(database_server))
    try:
        await asyncio.to_thread(migrations.upgrade, plain)
        assert await messages_schema(empty_database) == await messages_schema(plain)
    finally:
        await drop_database(database_server, plain)


async def test_an_upgrade_after_the_guides_statements_never_waits_for_a_reader_of_messages(
    empty_database: str,
) -> None:
    """What the guide built beforehand is left alone, so the upgrade takes no lock on ``messages`` that a
    request's read holds off: ALTER TABLE and CREATE INDEX lock the table even when IF NOT EXISTS finds
    what they would add, and that lock would last until the upgrade's last migration commits."""
    await asyncio.to_thread(migrations.upgrade, empty_database, "0010")
    reader = await asyncpg.connect(plain_dsn(empty_database))
    watcher = await asyncpg.connect(plain_dsn(empty_database))
    try:
        for statement in statements_before_upgrading():
            await reader.execute(statement)
        reading = reader.transaction()
        await reading.start()
        await reader.execute("SELECT count(*) FROM messages")
        upgrading = asyncio.create_task(asyncio.to_thread(migrations.upgrade, empty_database))
        waited_for_the_reader = False
        while not upgrading.done() and not waited_for_the_reader:
            waited_for_the_reader = await watcher.fetchval(
                "SELECT count(*) > 0 FROM pg_locks WHERE relation = 'messages'::regclass AND NOT granted"
            )
            await asyncio.sleep(0.05)
        await reading.rollback()
        await upgrading
    finally:
        await reader.close()
        await watcher.close()
    assert not waited_for_the_reader


@pytest.mark.parametrize("beforehand", [False, True], ids=["by the migration", "by the guide's batches first"])
async def test_text_stored_before_markup_was_searchable_becomes_searchable_once(
    empty_database: str, beforehand: bool
) -> None:
    await asyncio.to_thread(migrations.upgrade, empty_database, "0012")
    connection = await asyncpg.connect(plain_dsn(empty_database))
    try:
        await connection.execute("INSERT INTO sessions (tenant_id, id, last_seq) VALUES ('default', 's1', 1)")
        await connection.execute(
            "INSERT INTO messages (tenant_id, session_id, seq, id, role, kind, content, metadata, search_text)"
            " VALUES ('default', 's1', 1, 'u1', 'user', 'user_input', $1::json, '{}', $2)",
            orjson.dumps('<div class="sidebar">menu</div>').decode(),
            '<div class="sidebar">menu</div>',
        )
        if beforehand:
            [batch] = [sql for sql in statements_before_upgrading() if sql.startswith("UPDATE messages")]
            while await connection.execute(batch) != "UPDATE 0":
                pass
        await asyncio.to_thread(migrations.upgrade, empty_database)
        stored = await connection.fetchval("SELECT search_text FROM messages")
        found = await connection.fetchval(
            "SELECT count(*) FROM messages WHERE search_vector @@ websearch_to_tsquery('english', 'sidebar')"
        )
    finally:
        await connection.close()
    assert stored == '<\u200bdiv class="sidebar">menu<\u200b/div>'
    assert found == 1
