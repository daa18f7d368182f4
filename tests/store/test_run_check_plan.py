"""Creating a run asks whether a message names it already: one index probe under a generic plan, with or
without statistics, however many messages the session and the table hold."""

import asyncpg
import httpx
import orjson
import pytest

from app.api.auth import DEFAULT_TENANT
from app.store import runs as run_store
from tests.api.wire import append, new_session, user
from tests.database import plain_dsn
from tests.store.test_live_history_plan import scans


@pytest.mark.parametrize("analyzed", [False, True], ids=["no statistics", "analyzed"])
async def test_asking_whether_a_message_names_a_run_reads_no_message_that_does_not(
    client: httpx.AsyncClient, direct_database_url: str, analyzed: bool
) -> None:
    for session_id in ("named", "other"):
        await new_session(client, session_id)
        for start in range(0, 2_000, 500):
            batch = [{**user(f"q{seq}", id=f"q{seq}"), "runId": f"run{seq // 20}"} for seq in range(start, start + 500)]
            assert (await append(client, session_id, *batch)).status_code == 201

    # Directly, not through a transaction pooler: the setting and the prepared statement live in the session.
    connection = await asyncpg.connect(plain_dsn(direct_database_url))
    try:
        if analyzed:
            await connection.execute("ANALYZE messages")
        await connection.execute("SET plan_cache_mode = force_generic_plan")
        await connection.execute(f"PREPARE counted (text, text, text) AS {run_store._COUNT_IF_NAMED_SQL}")
        plans = []
        for run_id in ("run3", "run-nobody-names"):
            # Analyzing runs the update: rolled back.
            transaction = connection.transaction()
            await transaction.start()
            explain = f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE counted('{DEFAULT_TENANT}', 'named', '{run_id}')"
            plans.append(orjson.loads(await connection.fetchval(explain))[0]["Plan"])
            await transaction.rollback()
    finally:
        await connection.close()
    for plan in plans:
        reads = [node for node in scans(plan) if node["Relation Name"] == "messages"]
        assert reads
        for node in reads:
            assert node.get("Index Name") == "ix_messages_tenant_id_session_id_run_id", node
            assert node["Actual Rows"] * node["Actual Loops"] + node.get("Rows Removed by Filter", 0) <= 1, node
