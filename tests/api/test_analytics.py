"""Analytics of a session and of a tenant's time range: turns and answer times, messages by kind, tool calls
with their errors, tokens, compactions and prunes, overall and per model, priced by the catalog (null where
it cannot), with the sessions a page at a time and never another tenant's."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from app.context.catalog import bundled_catalog
from app.main import create_app
from app.store.analytics import MAX_TOKEN_SUM
from tests.api.wire import append, assistant, boundary, new_session, summary, tool_call, user
from tests.conftest import settings_for_tests
from tests.database import plain_dsn
from tests.trust.keys import API_KEYS, OTHER_TENANT, RUNTIME

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SONNET = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


def at(seconds: float, message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "createdAt": (T0 + timedelta(seconds=seconds)).isoformat()}


def failed_result(call_id: str, tool: str, text: str, id: str) -> dict[str, Any]:
    part = {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": tool,
        "output": {"type": "error-text", "value": text},
    }
    return {"role": "tool", "content": [part], "id": id}


def usage(input_tokens: int, output_tokens: int, cache_read: int = 0) -> dict[str, int]:
    return {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "cacheReadTokens": cache_read,
        "cacheWriteTokens": 0,
    }


async def seed_session(client: httpx.AsyncClient, session_id: str = "stats") -> None:
    await new_session(client, session_id, title="Stats")
    call = tool_call("c1", "bash", id="m2", command="make")
    call["metadata"] = {**SONNET, "usage": usage(1_000, 100, 500)}
    stored = await append(
        client,
        session_id,
        at(0, user("Build it", id="m1")),
        at(2, call),
        at(3, failed_result("c1", "bash", "make: *** error 2", "m3")),
        at(5, assistant("The build fails.", id="m4", **SONNET, usage=usage(200, 50))),
        at(10, user("Try again", id="m5")),
        at(13, assistant("Done.", id="m6", provider="vllm", model="mystery-model", usage=usage(10, 5))),
        at(14, boundary("b1", through="m4")),
        at(14, summary("b1", "The build failed once.", id="s1")),
    )
    assert stored.status_code == 201, stored.text
    pruned = await client.patch(
        f"/sessions/{session_id}/messages/m3", json={"metadata": {"compactedAt": "2026-11-30T09:01:00Z"}}
    )
    assert pruned.status_code == 200


async def test_an_answer_dated_before_its_question_is_answered_but_no_wait(client: httpx.AsyncClient) -> None:
    await new_session(client, "skewed")
    stored = await append(
        client,
        "skewed",
        at(100, user("Build it", id="m1")),
        at(4, assistant("Built.", id="m2", **SONNET)),
        at(200, user("Test it", id="m3")),
        at(206, assistant("Tested.", id="m4", **SONNET)),
    )
    assert stored.status_code == 201, stored.text

    turns = (await client.get("/sessions/skewed/analytics")).json()["turns"]

    assert turns == {
        "turns": 2,
        "answered": 2,
        "meanSeconds": 6.0,
        "p50Seconds": 6.0,
        "p95Seconds": 6.0,
        "maxSeconds": 6.0,
    }


async def test_a_sessions_figures_are_counted_from_its_messages(client: httpx.AsyncClient) -> None:
    await seed_session(client)

    response = await client.get("/sessions/stats/analytics")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["messages"] == 8
    assert body["messagesByKind"] == {
        "user_input": 2,
        "tool_call": 1,
        "tool_result": 1,
        "assistant_text": 2,
        "compact_boundary": 1,
        "compact_summary": 1,
    }
    assert body["turns"] == {
        "turns": 2,
        "answered": 2,
        "meanSeconds": 2.5,
        "p50Seconds": 2.5,
        "p95Seconds": pytest.approx(2.95),
        "maxSeconds": 3.0,
    }
    assert body["toolCalls"] == [{"tool": "bash", "calls": 1, "errors": 1}]
    assert body["tokens"] == {
        "responses": 3,
        "inputTokens": 1_210,
        "outputTokens": 155,
        "cacheReadTokens": 500,
        "cacheWriteTokens": 0,
        "totalTokens": 1_865,
    }
    assert body["compactions"] == 1
    assert body["prunes"] == {"passes": 1, "results": 1}


async def test_usage_counts_past_any_real_count_saturate_instead_of_failing_the_tenants_analytics(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client, "huge")
    huge = {"inputTokens": 1e30, "outputTokens": 2**64 - 1, "cacheReadTokens": 2**63 - 1, "cacheWriteTokens": 7}
    answers = [
        assistant("One.", id="a1", **SONNET, usage=huge),
        assistant("Two.", id="a2", **SONNET, usage=usage(10, 5)),
    ]
    assert (await append(client, "huge", user("Go", id="u1"), *answers)).status_code == 201

    session = await client.get("/sessions/huge/analytics")
    tenant = await client.get("/analytics")

    assert session.status_code == 200, session.text
    assert tenant.status_code == 200, tenant.text
    tokens = session.json()["tokens"]
    assert tokens["inputTokens"] == tokens["outputTokens"] == tokens["cacheReadTokens"] == MAX_TOKEN_SUM
    assert tokens["cacheWriteTokens"] == 7
    assert tokens["totalTokens"] == 3 * MAX_TOKEN_SUM + 7
    line = tenant.json()["sessions"][0]["tokens"]
    assert line == {key: value for key, value in tokens.items() if key != "responses"}
    assert tenant.json()["tokens"]["inputTokens"] == MAX_TOKEN_SUM


async def test_cost_is_per_model_with_the_catalog_and_null_where_a_model_is_unknown(client: httpx.AsyncClient) -> None:
    await seed_session(client)

    body = (await client.get("/sessions/stats/analytics")).json()

    models = {model["model"]: model for model in body["models"]}
    sonnet, mystery = models["anthropic/claude-sonnet-4-5"], models["vllm/mystery-model"]
    assert sonnet["tokens"]["responses"] == 2
    assert sonnet["cost"]["usd"]["total"] > 0
    assert sonnet["toolCalls"] == [{"tool": "bash", "calls": 1, "errors": 1}]
    assert sonnet["turns"]["turns"] == 1
    assert mystery["cost"]["usd"] is None
    assert body["cost"]["catalog"] == bundled_catalog().version
    assert body["cost"]["usd"] is None
    assert body["cost"]["unpricedMessageIds"] == ["m6"]
    assert body["cost"]["pricedUsd"]["total"] == pytest.approx(sonnet["cost"]["usd"]["total"])


async def test_an_answer_counts_under_its_runs_model_however_the_run_writes_it(client: httpx.AsyncClient) -> None:
    await new_session(client, "runs")
    opencode = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
    await client.post("/sessions/runs/runs", json={"id": "r1", "model": opencode})
    answer = {**assistant("Done.", id="a1", usage=usage(100, 10)), "runId": "r1"}
    await append(client, "runs", user("Go", id="u1"), answer)
    body = (await client.get("/sessions/runs/analytics")).json()
    model = next(model for model in body["models"] if model["model"] is not None)
    assert model["model"] == "anthropic/claude-sonnet-4-5"
    assert model["cost"]["usd"]["total"] > 0


async def test_an_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions/nope/analytics")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"


async def test_the_tenants_range_counts_only_messages_written_in_it_and_pages_its_sessions(
    client: httpx.AsyncClient,
) -> None:
    await seed_session(client, "first")
    await seed_session(client, "second")

    everything = (await client.get("/analytics")).json()
    assert everything["sessionCount"] == 2
    assert everything["messages"] == 16
    assert everything["toolCalls"] == [{"tool": "bash", "calls": 2, "errors": 2}]
    in_range = (
        await client.get("/analytics", params={"from": T0.isoformat(), "to": (T0 + timedelta(seconds=4)).isoformat()})
    ).json()
    assert in_range["messages"] == 6
    assert in_range["tokens"]["inputTokens"] == 2_000

    pages, cursor = [], None
    while True:
        page = (await client.get("/analytics", params={"limit": 1, **({"cursor": cursor} if cursor else {})})).json()
        pages.append([line["sessionId"] for line in page["sessions"]])
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert sorted(session for page in pages for session in page) == ["first", "second"]
    assert all(len(page) == 1 for page in pages)
    line = page["sessions"][0]
    assert line["messages"] == 8 and line["turns"] == 2 and line["toolErrors"] == 1
    assert line["cost"]["usd"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "to"),
        ({"from": "yesterday"}, "from"),
        ({"cursor": "garbage"}, "cursor"),
        ({"limit": 0}, "limit"),
    ],
)
async def test_bad_parameters_are_problems_naming_the_field(
    client: httpx.AsyncClient, params: dict[str, Any], field: str
) -> None:
    response = await client.get("/analytics", params=params)

    assert response.status_code in (400, 422)
    problem = response.json()
    assert problem.get("field") == field or field in [error["field"] for error in problem.get("errors", [])]


@pytest.fixture
async def keyed_app(database_url: str) -> AsyncIterator[FastAPI]:
    application = create_app(settings_for_tests(api_keys=orjson.dumps(API_KEYS).decode()), database_url=database_url)
    async with LifespanManager(application):
        yield application


async def test_another_tenant_sees_none_of_it(keyed_app: FastAPI, client: httpx.AsyncClient) -> None:
    def keyed(key: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=keyed_app)
        return httpx.AsyncClient(
            transport=transport, base_url="http://test", headers={"authorization": f"Bearer {key}"}
        )

    async with keyed(RUNTIME) as acme, keyed(OTHER_TENANT) as globex:
        await seed_session(acme)
        assert (await globex.get("/sessions/stats/analytics")).status_code == 404
        theirs = (await globex.get("/analytics")).json()
        assert (theirs["sessionCount"], theirs["messages"], theirs["sessions"]) == (0, 0, [])
        assert (await acme.get("/analytics")).json()["sessionCount"] == 1


async def test_a_time_stored_as_infinity_before_it_was_refused_does_not_fail_the_analytics(
    client: httpx.AsyncClient, database_url: str
) -> None:
    await seed_session(client, "old")
    connection = await asyncpg.connect(plain_dsn(database_url))
    try:
        await connection.execute("UPDATE messages SET created_at = '-infinity' WHERE session_id = 'old' AND id = 'm1'")
    finally:
        await connection.close()

    response = await client.get("/sessions/old/analytics")

    assert response.status_code == 200, response.text
    assert response.json()["turns"]["turns"] == 2
