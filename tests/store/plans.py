"""What PostgreSQL does with a hot statement under a generic plan: the plans the store's tests hold to their
index ranges."""

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from tests.api.wire import append, new_session
from tests.database import plain_dsn

BATCH = 500


async def sessions_of(
    client: httpx.AsyncClient, session_ids: Sequence[str], count: int, message: Callable[[int], dict[str, Any]]
) -> None:
    """Each session made and given ``count`` messages (``message(n)`` the n-th), appended through the API in
    batches, so the table holds more than the statement under test may read."""
    for session_id in session_ids:
        await new_session(client, session_id)
        for start in range(0, count, BATCH):
            batch = [message(n) for n in range(start, min(start + BATCH, count))]
            assert (await append(client, session_id, *batch)).status_code == 201


async def generic_plans(
    direct_url: str, sql: str, types: str, calls: Sequence[str], *, analyzed: bool
) -> list[dict[str, Any]]:
    """``EXPLAIN ANALYZE`` of ``sql``, prepared with parameter ``types`` (``"text, text"``) under
    ``plan_cache_mode = force_generic_plan``, executed once with each of ``calls`` (the arguments as SQL
    literals), each in a transaction rolled back (analyzing runs a write); after ``ANALYZE`` when ``analyzed``,
    else with no column statistics at all. ``TRUNCATE`` keeps a table's statistics, so what an earlier test's
    ``ANALYZE`` (or autovacuum's) saw would otherwise steer the plan: they are set aside inside each rolled-back
    transaction, which needs a superuser. Directly, not through a transaction pooler: the setting and the
    prepared statement live in the session."""
    connection = await asyncpg.connect(plain_dsn(direct_url))
    plans = []
    try:
        if analyzed:
            await connection.execute("ANALYZE messages")
        elif not await connection.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"):
            pytest.skip("planning without statistics sets the tables' statistics aside, which needs a superuser")
        await connection.execute("SET plan_cache_mode = force_generic_plan")
        for arguments in calls:
            transaction = connection.transaction()
            await transaction.start()
            if not analyzed:
                await connection.execute(SET_STATISTICS_ASIDE)
            # Prepared after the statistics went, so the generic plan is made without them.
            await connection.execute(f"PREPARE hot ({types}) AS {sql}")
            explained = await connection.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE hot({arguments})")
            plans.append(orjson.loads(explained)[0]["Plan"])
            await transaction.rollback()
            await connection.execute("DEALLOCATE hot")
    finally:
        await connection.close()
    return plans


SET_STATISTICS_ASIDE = (
    "DELETE FROM pg_statistic WHERE starelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)"
)


def scans(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of ``plan`` that reads a table (not the node writing what its children read)."""
    if "Relation Name" in plan and plan["Node Type"] != "ModifyTable":
        yield plan
    for child in plan.get("Plans", []):
        yield from scans(child)


def rows_touched(node: dict[str, Any]) -> int:
    """The rows a scan node read: those it returned and those its filter removed."""
    return int(node["Actual Rows"] * node["Actual Loops"] + node.get("Rows Removed by Filter", 0))


def index_of(node: dict[str, Any]) -> str | None:
    """The index a scan node reads through: its own, or a bitmap heap scan's bitmap index scans' one."""
    if "Index Name" in node:
        return str(node["Index Name"])
    names = {child.get("Index Name") for child in node.get("Plans", []) if child["Node Type"] == "Bitmap Index Scan"}
    return str(names.pop()) if len(names) == 1 else None
