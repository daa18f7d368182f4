"""A kept window re-reads the messages rewritten since it was read: one index range under a generic plan, with
or without statistics, however many messages the session and the table hold."""

import httpx
import pytest

from app.api.auth import DEFAULT_TENANT
from app.store import messages as message_store
from tests.api.wire import user
from tests.store.plans import generic_plans, index_of, rows_touched, scans, sessions_of

APPENDED = 2_000
AMENDED = 3


@pytest.mark.parametrize("analyzed", [False, True], ids=["no statistics", "analyzed"])
async def test_reading_the_messages_rewritten_since_a_revision_reads_no_other(
    client: httpx.AsyncClient, direct_database_url: str, analyzed: bool
) -> None:
    await sessions_of(client, ("amended", "other"), APPENDED, lambda n: user(f"q{n}", id=f"q{n}"))
    for session_id in ("amended", "other"):
        for seq in range(AMENDED):
            response = await client.patch(f"/sessions/{session_id}/messages/q{seq * 100}", json={"metadata": {"n": 1}})
            assert response.status_code == 200, response.text

    since = APPENDED  # the session's revision before the amendments: one per message appended
    calls = [f"'{DEFAULT_TENANT}', 'amended', {revision}" for revision in (since, since + AMENDED)]
    plans = await generic_plans(
        direct_database_url, message_store._AMENDED_SQL, "text, text, bigint", calls, analyzed=analyzed
    )
    for plan in plans:
        reads = list(scans(plan))
        assert reads
        for node in reads:
            assert index_of(node) == "ix_messages_tenant_id_session_id_amended_revision", node
            assert rows_touched(node) <= AMENDED, node
