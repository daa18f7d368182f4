"""Runs: a turn's request settings, amended with usage and result when it ends."""

import asyncio

import asyncpg
import httpx

from tests.api.wire import new_session
from tests.database import plain_dsn


async def test_a_run_keeps_its_request_settings(client: httpx.AsyncClient) -> None:
    await new_session(client)
    tools = [{"name": "read_file", "description": "Read", "inputSchema": {"type": "object"}}]
    created = await client.post(
        "/sessions/s1/runs",
        json={
            "id": "r1",
            "agent": "build",
            "model": "anthropic/claude-sonnet-4-5",
            "system": "Be careful.",
            "tools": tools,
        },
    )
    assert created.status_code == 201
    run = (await client.get("/sessions/s1/runs/r1")).json()
    assert run["agent"] == "build"
    assert run["model"] == "anthropic/claude-sonnet-4-5"
    assert run["system"] == "Be careful."
    assert run["tools"] == tools
    assert run["usage"] is None


async def test_a_created_run_is_located_by_its_url_whatever_its_id(client: httpx.AsyncClient) -> None:
    await new_session(client, "s 1")
    for run_id in ("r1", "运行 #1?"):
        created = await client.post("/sessions/s%201/runs", json={"id": run_id, "model": "m"})
        assert created.status_code == 201
        located = await client.get(created.headers["location"])
        assert located.status_code == 200
        assert located.json()["id"] == run_id


async def test_usage_and_result_are_amended_when_the_run_ends(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await client.post("/sessions/s1/runs", json={"id": "r1", "model": "m"})
    patched = await client.patch(
        "/sessions/s1/runs/r1", json={"usage": {"inputTokens": 1200, "outputTokens": 80}, "result": {"status": "ok"}}
    )
    assert patched.status_code == 200
    body = patched.json()
    assert body["usage"] == {"inputTokens": 1200, "outputTokens": 80}
    assert body["result"] == {"status": "ok"}
    assert body["model"] == "m"


async def test_a_run_without_id_gets_a_server_id(client: httpx.AsyncClient) -> None:
    await new_session(client)
    created = await client.post("/sessions/s1/runs", json={})
    assert created.json()["id"].startswith("run_")


async def test_a_taken_run_id_with_other_settings_is_409_and_unknown_runs_are_404(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await client.post("/sessions/s1/runs", json={"id": "r1"})
    assert (await client.post("/sessions/s1/runs", json={"id": "r1", "agent": "plan"})).status_code == 409
    assert (await client.get("/sessions/s1/runs/nope")).status_code == 404
    assert (await client.patch("/sessions/s1/runs/nope", json={"usage": {}})).status_code == 404
    assert (await client.post("/sessions/nope/runs", json={})).status_code == 404


async def test_a_run_patch_cannot_change_its_settings(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await client.post("/sessions/s1/runs", json={"id": "r1", "model": "m"})
    response = await client.patch("/sessions/s1/runs/r1", json={"model": "other"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "model"


async def test_run_metadata_merges_like_message_metadata_and_is_never_null(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await client.post("/sessions/s1/runs", json={"id": "r1", "metadata": {"a": 1, "b": 2}})
    merged = await client.patch("/sessions/s1/runs/r1", json={"metadata": {"b": None, "c": 3}})
    assert merged.json()["metadata"] == {"a": 1, "c": 3}
    refused = await client.patch("/sessions/s1/runs/r1", json={"metadata": None})
    assert refused.status_code == 422
    assert (await client.get("/sessions/s1/runs/r1")).json()["metadata"] == {"a": 1, "c": 3}


async def test_a_sessions_runs_are_listed_with_cursors_like_its_messages(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await new_session(client, "s2")
    for n in range(5):
        await client.post("/sessions/s1/runs", json={"id": f"r{n}", "agent": "build"})
    await client.post("/sessions/s2/runs", json={"id": "elsewhere"})
    first = (await client.get("/sessions/s1/runs", params={"limit": 2})).json()
    assert ([run["id"] for run in first["runs"]], first["hasMore"]) == (["r0", "r1"], True)
    rest = (await client.get("/sessions/s1/runs", params={"after": first["nextCursor"]})).json()
    assert ([run["id"] for run in rest["runs"]], rest["hasMore"]) == (["r2", "r3", "r4"], False)
    newest = (await client.get("/sessions/s1/runs", params={"limit": 2, "order": "desc"})).json()
    assert [run["id"] for run in newest["runs"]] == ["r4", "r3"]
    older = (await client.get("/sessions/s1/runs", params={"before": newest["nextCursor"], "order": "desc"})).json()
    assert [run["id"] for run in older["runs"]] == ["r2", "r1", "r0"]
    assert newest["runs"][0] == (await client.get("/sessions/s1/runs/r4")).json()
    foreign = await client.get("/sessions/s2/runs", params={"after": first["nextCursor"]})
    assert (foreign.status_code, foreign.json()["field"]) == (400, "after")
    assert (await client.get("/sessions/nope/runs")).status_code == 404
    empty = (await client.get("/sessions/s1/runs", params={"after": rest["nextCursor"]})).json()
    assert (empty["runs"], empty["nextCursor"], empty["hasMore"]) == ([], rest["nextCursor"], False)


async def test_a_run_is_created_under_the_sessions_append_lock(
    client: httpx.AsyncClient, direct_database_url: str
) -> None:
    """Whether a new run changes the session's views depends on whether a message names it already: the check
    must see every append that committed first and hold back every append that did not, so it waits for the
    lock appends take."""
    await new_session(client)
    blocker = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        async with blocker.transaction():
            # What an append in flight holds: its update of the session row (which a run's foreign key check
            # alone does not wait for).
            await blocker.execute("UPDATE sessions SET last_seq = last_seq WHERE id = 's1'")
            creating = asyncio.create_task(client.post("/sessions/s1/runs", json={"id": "r1", "model": "m"}))
            await asyncio.sleep(0.3)
            assert not creating.done()
        assert (await creating).status_code == 201
    finally:
        await blocker.close()


async def test_creating_a_run_again_with_the_same_settings_answers_200_with_the_stored_one(
    client: httpx.AsyncClient,
) -> None:
    """A runtime whose connection dropped after the run was created retries, and learns that it landed."""
    await new_session(client)
    settings = {
        "id": "r1",
        "agent": "build",
        "model": "anthropic/claude-sonnet-4-5",
        "system": "Be brief.",
        "tools": {"bash": True, "edit": False},
        "variant": "high",
        "metadata": {"step": 1},
    }
    first = await client.post("/sessions/s1/runs", json=settings)
    assert first.status_code == 201, first.text
    assert (await client.patch("/sessions/s1/runs/r1", json={"usage": {"inputTokens": 5}})).status_code == 200
    again = await client.post("/sessions/s1/runs", json=settings)
    assert again.status_code == 200, again.text
    assert again.json()["usage"] == {"inputTokens": 5}
    assert {key: again.json()[key] for key in settings} == settings
    assert (await client.post("/sessions/s1/runs", json={**settings, "variant": "low"})).status_code == 409
