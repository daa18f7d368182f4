"""Search over message text, tool inputs and outputs: ranked hits with escaped, highlighted snippets, filters,
cursor pages, one session or the whole tenant, never another tenant's messages, and an index lookup."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from app.engine.kinds import Kind
from app.engine.search_text import message_facts
from app.main import create_app
from tests.api.wire import append, assistant, new_session, tool_call, tool_result, user
from tests.conftest import settings_for_tests
from tests.database import plain_dsn
from tests.trust.keys import API_KEYS, OTHER_TENANT, RUNTIME


async def search(client: httpx.AsyncClient, path: str = "/search", **params: Any) -> dict[str, Any]:
    response = await client.get(path, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def seed_build_session(client: httpx.AsyncClient) -> None:
    await new_session(client, "build", title="Fix the build")
    stored = await append(
        client,
        "build",
        user("Why does the build fail on main?", id="m1"),
        tool_call("c1", "read_file", id="m2", path="build.log"),
        tool_result("c1", "read_file", "error: missing semicolon in src/app.ts", id="m3"),
        assistant("A missing semicolon breaks the build.", id="m4"),
    )
    assert stored.status_code == 201, stored.text


async def test_a_hit_names_its_session_message_and_seq_with_the_words_marked(client: httpx.AsyncClient) -> None:
    await seed_build_session(client)

    body = await search(client, q="semicolon")

    hits = body["hits"]
    assert isinstance(hits, list)
    assert {(hit["sessionId"], hit["messageId"], hit["seq"]) for hit in hits} == {
        ("build", "m3", 3),
        ("build", "m4", 4),
    }
    assert all("<mark>semicolon</mark>" in hit["snippet"] for hit in hits)
    assert hits[0]["sessionTitle"] == "Fix the build"
    assert body["hasMore"] is False


async def test_tool_inputs_are_searched_and_the_tool_filter_keeps_its_calls_and_results(
    client: httpx.AsyncClient,
) -> None:
    await seed_build_session(client)

    by_input = await search(client, q="build.log")
    assert [hit["messageId"] for hit in by_input["hits"]] == ["m2"]
    by_tool = await search(client, q="semicolon", tool="read_file")
    assert [hit["messageId"] for hit in by_tool["hits"]] == ["m3"]
    assert (await search(client, q="semicolon", tool="bash"))["hits"] == []


async def test_role_kind_and_time_filters_narrow_the_hits(client: httpx.AsyncClient) -> None:
    await seed_build_session(client)

    assert [hit["messageId"] for hit in (await search(client, q="build", role="user"))["hits"]] == ["m1"]
    assert [hit["messageId"] for hit in (await search(client, q="semicolon", kind="assistant_text"))["hits"]] == ["m4"]
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    assert (await search(client, q="build", **{"from": future}))["hits"] == []
    assert len((await search(client, q="build", **{"from": past, "to": future}))["hits"]) == 2


async def test_stored_markup_comes_back_escaped_around_the_marks(client: httpx.AsyncClient) -> None:
    await new_session(client, "html")
    await append(client, "html", user("if a < b && c > d then render the <b>widget</b>", id="h1"))

    [hit] = (await search(client, q="widget"))["hits"]

    assert hit["snippet"].startswith("if a &lt; b &amp;&amp; c &gt; d then render the")
    assert "<mark>widget</mark>" in hit["snippet"]
    assert "<b>" not in hit["snippet"]


MARKUP = (
    '<div className="sidebar"><img src="logo.png"></div>\n'
    "<system-reminder>The user opened a file.</system-reminder>\n"
    "<script>renderWidget(config)</script> and then the deploy"
)


@pytest.mark.parametrize(
    "words", ["sidebar", "className", "logo.png", "system-reminder", "renderWidget", "deploy", "<div>"]
)
async def test_text_that_looks_like_markup_is_searched_word_by_word(client: httpx.AsyncClient, words: str) -> None:
    await new_session(client, "markup")
    await append(client, "markup", tool_result("c1", "read_file", MARKUP, id="r1"))

    hits = (await search(client, q=words))["hits"]

    assert [hit["messageId"] for hit in hits] == ["r1"], words


async def test_a_snippet_shows_markup_as_it_was_written_escaped(client: httpx.AsyncClient) -> None:
    await new_session(client, "markup")
    await append(client, "markup", user('see <div className="sidebar">the menu</div>', id="u1"))

    [hit] = (await search(client, q="sidebar"))["hits"]

    assert hit["snippet"] == 'see &lt;div className="<mark>sidebar</mark>"&gt;the menu&lt;/div&gt;'


async def test_a_session_search_sees_only_that_session_and_an_unknown_one_is_404(client: httpx.AsyncClient) -> None:
    await seed_build_session(client)
    await new_session(client, "other")
    await append(client, "other", user("semicolon elsewhere", id="o1"))

    within = await search(client, "/sessions/build/search", q="semicolon")
    assert {hit["sessionId"] for hit in within["hits"]} == {"build"}
    assert len((await search(client, q="semicolon"))["hits"]) == 3
    missing = await client.get("/sessions/nope/search", params={"q": "semicolon"})
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"


async def test_pages_walk_every_hit_once_best_first(client: httpx.AsyncClient) -> None:
    await new_session(client, "many")
    texts = [("deploy " * (1 + n % 4)) + f"note {n}" for n in range(23)]
    await append(client, "many", *[user(text, id=f"d{n}") for n, text in enumerate(texts)])

    seen: list[tuple[float, str]] = []
    cursor = None
    while True:
        page = await search(client, q="deploy", limit=5, **({"cursor": cursor} if cursor else {}))
        seen += [(hit["rank"], hit["messageId"]) for hit in page["hits"]]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert sorted(message_id for _, message_id in seen) == sorted(f"d{n}" for n in range(23))
    ranks = [rank for rank, _ in seen]
    assert ranks == sorted(ranks, reverse=True)


async def test_a_cursor_from_another_query_is_refused(client: httpx.AsyncClient) -> None:
    await new_session(client, "many")
    await append(client, "many", *[user(f"deploy note {n}", id=f"d{n}") for n in range(3)])
    page = await search(client, q="deploy", limit=1)

    reused = await client.get("/search", params={"q": "note", "cursor": page["nextCursor"]})

    assert reused.status_code == 400
    assert reused.json()["field"] == "cursor"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": " "}, "q"),
        ({}, "q"),
        ({"q": "x", "kind": "not_a_kind"}, "kind"),
        ({"q": "x", "role": "robot"}, "role"),
        ({"q": "x", "from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "to"),
        ({"q": "x", "limit": 100_000}, "limit"),
        ({"q": "x", "cursor": "garbage"}, "cursor"),
    ],
)
async def test_bad_parameters_are_problems_naming_the_field(
    client: httpx.AsyncClient, params: dict[str, Any], field: str
) -> None:
    response = await client.get("/search", params=params)

    assert response.status_code in (400, 422), response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem.get("field") == field or field in [error["field"] for error in problem.get("errors", [])]


@pytest.fixture
async def keyed_app(database_url: str) -> AsyncIterator[FastAPI]:
    application = create_app(settings_for_tests(api_keys=orjson.dumps(API_KEYS).decode()), database_url=database_url)
    async with LifespanManager(application):
        yield application


async def test_another_tenants_messages_never_appear(keyed_app: FastAPI, client: httpx.AsyncClient) -> None:
    def keyed(key: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=keyed_app)
        return httpx.AsyncClient(
            transport=transport, base_url="http://test", headers={"authorization": f"Bearer {key}"}
        )

    async with keyed(RUNTIME) as acme, keyed(OTHER_TENANT) as globex:
        await seed_build_session(acme)
        await new_session(globex, "build")
        await append(globex, "build", user("a semicolon of globex's own", id="g1"))

        acme_hits = (await search(acme, q="semicolon"))["hits"]
        globex_hits = (await search(globex, q="semicolon"))["hits"]
        assert {hit["messageId"] for hit in acme_hits} == {"m3", "m4"}
        assert [hit["messageId"] for hit in globex_hits] == ["g1"]
        assert (await search(globex, "/sessions/build/search", q="missing"))["hits"] == []


async def test_a_search_on_a_large_table_is_a_gin_index_lookup(database_url: str, client: httpx.AsyncClient) -> None:
    """20,000 messages written with their search facts, vacuumed (as autovacuum does after inserts, which
    moves GIN's pending entries into the index) and analysed: the planner finds the rare word through the GIN
    index (a bitmap scan on it), never by reading the table."""
    await new_session(client, "big")
    connection = await asyncpg.connect(plain_dsn(database_url))
    try:
        rows = []
        for seq in range(1, 20_001):
            text = f"routine log line {seq} compiling module" + (" zanzibar" if seq % 5_000 == 0 else "")
            facts = message_facts(Kind.USER_INPUT, text, {})
            rows.append(
                ("default", "big", seq, f"b{seq}", "user", "user_input", orjson.dumps(text).decode(), facts.search_text)
            )
        await connection.executemany(
            "INSERT INTO messages (tenant_id, session_id, seq, id, role, kind, content, search_text)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)",
            rows,
        )
        await connection.execute("VACUUM ANALYZE messages")
        plan = await connection.fetchval(
            "EXPLAIN (FORMAT JSON) SELECT seq FROM messages WHERE tenant_id = 'default'"
            " AND search_vector @@ websearch_to_tsquery('simple', 'zanzibar')"
        )
    finally:
        await connection.close()
    assert "ix_messages_search_vector" in plan
    assert '"Seq Scan"' not in plan
    assert len((await search(client, q="zanzibar"))["hits"]) == 4
