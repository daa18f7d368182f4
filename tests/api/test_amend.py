"""Amending metadata: a shallow merge; content is immutable."""

import asyncio

import asyncpg
import httpx

from tests.api.wire import append, new_session, tool_call, tool_result, user
from tests.database import plain_dsn, until_waiting_for


async def test_patch_merges_metadata_shallowly_and_null_removes_a_key(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1", tags=["a"], visibleInTranscript=True))
    response = await client.patch(
        "/sessions/s1/messages/m1", json={"metadata": {"tags": ["b"], "visibleInTranscript": None, "x": {"y": 1}}}
    )
    assert response.status_code == 200
    assert response.json()["metadata"] == {"tags": ["b"], "x": {"y": 1}}
    assert (await client.get("/sessions/s1/messages/m1")).json()["metadata"] == {"tags": ["b"], "x": {"y": 1}}


async def test_patch_cannot_touch_content(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1"))
    response = await client.patch("/sessions/s1/messages/m1", json={"metadata": {}, "content": "rewritten"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "content"
    assert (await client.get("/sessions/s1/messages/m1")).json()["content"] == "hi"


async def test_patch_cannot_change_the_runtime_kind(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1"))
    response = await client.patch("/sessions/s1/messages/m1", json={"metadata": {"runtimeKind": "compact_summary"}})
    assert response.status_code == 422
    assert response.json()["field"] == "metadata.runtimeKind"


async def test_pruning_a_tool_result_by_patch_keeps_its_content(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", tool_call("c1", "Read", id="m1"), tool_result("c1", "Read", "big output", id="m2"))
    patched = await client.patch("/sessions/s1/messages/m2", json={"metadata": {"compactedAt": "2026-11-29T10:00:00Z"}})
    assert patched.json()["content"][0]["output"]["value"] == "big output"


async def test_patching_an_unknown_message_is_404(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await client.patch("/sessions/s1/messages/nope", json={"metadata": {"a": 1}})
    assert response.status_code == 404


async def test_reading_an_unknown_message_is_404(client: httpx.AsyncClient) -> None:
    await new_session(client)
    assert (await client.get("/sessions/s1/messages/nope")).status_code == 404


async def test_an_amendment_waits_behind_a_prune_of_the_same_message_instead_of_deadlocking(
    client: httpx.AsyncClient, direct_database_url: str
) -> None:
    """A prune locks the session, then marks the message; an amendment that locked the message first and the
    session second would deadlock against it, and one of the two would fail."""
    await new_session(client)
    await append(client, "s1", tool_call("c1", "Read", id="m1"), tool_result("c1", "Read", "big output", id="m2"))
    pruning = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        async with pruning.transaction():
            await pruning.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")
            amending = asyncio.create_task(client.patch("/sessions/s1/messages/m2", json={"metadata": {"a": 1}}))
            await until_waiting_for(direct_database_url, pruning.get_server_pid(), amending)
            assert not amending.done(), "the amendment did not wait for the prune's lock"
            await pruning.execute(
                """UPDATE messages SET metadata = metadata || '{"compactedAt": "2026-12-06T00:00:00Z"}'
                WHERE session_id = 's1' AND id = 'm2'"""
            )
            await pruning.execute("UPDATE sessions SET revision = revision + 1 WHERE id = 's1'")
        amended = await amending
        assert amended.status_code == 200
        assert amended.json()["metadata"] == {"compactedAt": "2026-12-06T00:00:00Z", "a": 1}
    finally:
        await pruning.close()


async def test_a_message_an_older_release_classed_otherwise_still_takes_an_unrelated_amendment(
    client: httpx.AsyncClient, direct_database_url: str
) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1"))
    connection = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        await connection.execute("UPDATE messages SET kind = 'runtime_reminder' WHERE id = 'm1'")
    finally:
        await connection.close()
    response = await client.patch("/sessions/s1/messages/m1", json={"metadata": {"tags": ["kept"]}})
    assert response.status_code == 200, response.text
