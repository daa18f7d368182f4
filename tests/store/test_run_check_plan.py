"""Creating a run asks whether a message names it already (and stamps those that do): one index range under a
generic plan, with or without statistics, however many messages the session and the table hold."""

import httpx
import pytest

from app.api.auth import DEFAULT_TENANT
from app.store import runs as run_store
from tests.api.wire import user
from tests.store.plans import generic_plans, rows_touched, scans, sessions_of

RUN_LENGTH = 20
"""How many messages name each run."""


@pytest.mark.parametrize("analyzed", [False, True], ids=["no statistics", "analyzed"])
async def test_asking_whether_a_message_names_a_run_reads_no_message_that_does_not(
    client: httpx.AsyncClient, direct_database_url: str, analyzed: bool
) -> None:
    await sessions_of(
        client, ("named", "other"), 2_000, lambda n: {**user(f"q{n}", id=f"q{n}"), "runId": f"run{n // RUN_LENGTH}"}
    )

    calls = [f"'{DEFAULT_TENANT}', 'named', '{run_id}'" for run_id in ("run3", "run-nobody-names")]
    plans = await generic_plans(
        direct_database_url, run_store._COUNT_IF_NAMED_SQL, "text, text, text", calls, analyzed=analyzed
    )
    for plan in plans:
        reads = [node for node in scans(plan) if node["Relation Name"] == "messages"]
        assert reads
        for node in reads:
            assert node.get("Index Name") == "ix_messages_tenant_id_session_id_run_id", node
            assert rows_touched(node) <= RUN_LENGTH, node
