"""A ``/chat`` on a kept window sends few statements: the session row is read with its live start, the
remembered prefix in the same snapshot, and the prefix written back by one statement in autocommit."""

import httpx
import pytest
from fastapi import FastAPI

from tests.api.wire import append, assistant, new_session, user
from tests.statements import statements_sent

pytestmark = pytest.mark.db

BODY = {"sessionId": "chat-rt", "provider": "anthropic", "model": "claude-sonnet-4-5"}


async def _statements_of_a_warm_chat(app: FastAPI) -> list[str]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        await new_session(http, "chat-rt")
        await append(http, "chat-rt", user("hello"), assistant("hi"), user("and now?"))
        for _ in range(2):  # the window kept, every statement prepared once
            assert (await http.post("/chat", json=BODY)).status_code == 200
        async with statements_sent(app) as sent:
            response = await http.post("/chat", json=BODY)
    assert response.status_code == 200
    return sent


async def test_a_chat_on_a_kept_window_reads_its_prefix_in_the_snapshot_and_writes_it_in_one_statement(
    one_connection_app: FastAPI,
) -> None:
    """On main this was fourteen: the snapshot (its BEGIN, marker, session, run models, live start, ROLLBACK),
    a second snapshot for the prefix alone (BEGIN, marker, the read, ROLLBACK) and a write transaction (BEGIN,
    SET LOCAL, the upsert, COMMIT). Now seven: one snapshot (BEGIN, marker, the session row with its live
    start, the prefix, run models, ROLLBACK), then the upsert."""
    sent = await _statements_of_a_warm_chat(one_connection_app)
    words = [statement.split()[0].rstrip(";") for statement in sent]
    closed = words.index("ROLLBACK")
    snapshot, after = sent[:closed], sent[closed + 1 :]
    assert sum("REPEATABLE READ" in statement for statement in sent) == 1, sent
    assert any("FROM prompt_prefixes" in statement for statement in snapshot), sent
    writes = [statement for statement in after if "prompt_prefixes" in statement]
    if one_connection_app.state.settings.transaction_pooling:
        # Behind a transaction pooler the timeouts come with BEGIN: BEGIN, the statement, COMMIT.
        # (the driver's logger and SQLAlchemy's event see BEGIN at different moments, so order is not compared)
        assert sorted(words[closed + 1 :]) == ["BEGIN", "COMMIT", "INSERT"], sent
        assert len(writes) == 1, sent
    else:
        assert writes == after[-1:], sent
        assert words[closed + 1 :] == ["INSERT"], sent
        assert len(sent) == 7, sent
