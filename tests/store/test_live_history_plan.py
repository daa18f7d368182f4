"""The model view's read touches the live history's rows and no others, under a generic plan with no
statistics gathered: its cost cannot depend on what the planner knows about the session."""

import httpx
import pytest
from fastapi import FastAPI

from app.api.auth import DEFAULT_TENANT
from app.store import messages as message_store
from app.store.messages import MessageRepository
from tests.api.wire import append, boundary, summary, user
from tests.store.plans import generic_plans, rows_touched, scans, sessions_of

HISTORY = 3_000
TAIL = 100


@pytest.mark.parametrize("analyzed", [False, True], ids=["no statistics", "analyzed"])
async def test_the_live_history_read_touches_only_its_own_seq_range_under_a_generic_plan(
    app: FastAPI, client: httpx.AsyncClient, direct_database_url: str, analyzed: bool
) -> None:
    await sessions_of(client, ("h",), HISTORY - TAIL, lambda n: user(f"q{n}", id=f"q{n}"))
    assert (await append(client, "h", boundary("b1", through=f"q{HISTORY - TAIL - 3}"))).status_code == 201
    assert (await append(client, "h", summary("b1", "Earlier."), *map(user, ["a", "b"]))).status_code == 201
    async with app.state.database.reading() as connection:
        window = await MessageRepository(connection, DEFAULT_TENANT).live_history("h")
    assert len(window) == 2 + 1 + 1 + 2

    calls = [f"'{DEFAULT_TENANT}', 'h'"]
    (plan,) = await generic_plans(
        direct_database_url, message_store._LIVE_HISTORY_SQL, "text, text", calls, analyzed=analyzed
    )
    reads = [node for node in scans(plan) if node["Relation Name"] == "messages"]
    assert reads
    for node in reads:
        assert "seq" in node.get("Index Cond", ""), node
        assert rows_touched(node) <= len(window), node
    sessions = [node for node in scans(plan) if node["Relation Name"] == "sessions"]
    assert all(node["Actual Rows"] <= 1 for node in sessions)
