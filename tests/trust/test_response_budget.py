"""A page's memory is bounded by settings, not by what the history holds: pages of messages and of the paged
views are cut by stored bytes and content parts as well as by count (fewer items, with ``hasMore`` and the
cursor leading on; a single message larger than the budget still comes alone), large answers are written as
a stream of pieces, and building a view has a time budget past which it answers 503."""

import asyncio
from collections.abc import AsyncIterator
from itertools import chain
from typing import Any

import httpx
import pytest

from tests.api.wire import tool_call, tool_result, user
from tests.trust.conftest import AppFactory, http_client

TEXT = 3_000
"""Each message's text: three fit a 10,000-byte budget with their JSON around them, four do not."""


@pytest.fixture
async def client(trust_app: AppFactory) -> AsyncIterator[httpx.AsyncClient]:
    async with trust_app(max_response_bytes=10_000, max_response_parts=8) as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        batch = [user(f"{index}" + "x" * TEXT, id=f"m{index}") for index in range(10)]
        assert (await c.post("/sessions/s1/messages", json={"messages": batch})).status_code == 201
        yield c


def flat(pages: list[list[str]]) -> list[str]:
    return list(chain.from_iterable(pages))


async def walk(client: httpx.AsyncClient, path: str, key: str, **params: Any) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: dict[str, str] = {}
    while True:
        response = await client.get(path, params={**params, **cursor})
        assert response.status_code == 200, response.text[:300]
        body = response.json()
        pages.append([item["id"] if "id" in item else item["sourceMessageIds"][0] for item in body[key]])
        if not body["hasMore"]:
            return pages
        cursor = {"before" if params.get("order") == "desc" else "after": body["nextCursor"]}


async def test_a_page_is_cut_by_stored_bytes_and_the_walk_still_reads_every_message(
    client: httpx.AsyncClient,
) -> None:
    pages = await walk(client, "/sessions/s1/messages", "messages", limit=10)
    assert [len(page) for page in pages] == [3, 3, 3, 1]
    assert flat(pages) == [f"m{index}" for index in range(10)]
    backwards = await walk(client, "/sessions/s1/messages", "messages", limit=10, order="desc")
    assert flat(backwards) == [f"m{index}" for index in reversed(range(10))]
    assert [len(page) for page in backwards] == [3, 3, 3, 1]


@pytest.mark.parametrize("view", ["transcript", "debug", "export"])
async def test_paged_views_are_cut_by_the_same_budget(client: httpx.AsyncClient, view: str) -> None:
    pages = await walk(client, "/sessions/s1/projection", "messages", view=view, limit=10)
    assert [len(page) for page in pages] == [3, 3, 3, 1]
    assert flat(pages) == [f"m{index}" for index in range(10)]


async def test_a_message_larger_than_the_budget_comes_alone(client: httpx.AsyncClient) -> None:
    big = [user("y" * 20_000, id="big"), user("after", id="after")]
    assert (await client.post("/sessions/s1/messages", json={"messages": big})).status_code == 201
    pages = await walk(client, "/sessions/s1/messages", "messages", limit=500)
    assert flat(pages) == [*(f"m{index}" for index in range(10)), "big", "after"]
    assert ["big"] in pages


async def test_a_page_is_cut_by_content_parts(client: httpx.AsyncClient) -> None:
    calls = [tool_call(f"c{index}", "bash", id=f"call{index}") for index in range(3)]
    results = [tool_result(f"c{index}", "bash", "ok", id=f"result{index}") for index in range(3)]
    many = {"role": "assistant", "id": "many", "content": [{"type": "text", "text": "p"}] * 5}
    messages = [calls[0], results[0], calls[1], results[1], calls[2], results[2], many]
    assert (await client.post("/sessions", json={"id": "parts"})).status_code == 201
    assert (await client.post("/sessions/parts/messages", json={"messages": messages})).status_code == 201
    pages = await walk(client, "/sessions/parts/messages", "messages", limit=500)
    assert [len(page) for page in pages] == [6, 1], "six one-part messages, then five parts: the budget is eight"


async def test_a_large_page_is_streamed_in_pieces_and_reads_as_the_same_json(trust_app: AppFactory) -> None:
    async with trust_app() as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        batch = [user("z" * 300_000, id=f"m{index}") for index in range(10)]
        assert (await c.post("/sessions/s1/messages", json={"messages": batch})).status_code == 201
        listing = await c.get("/sessions/s1/messages", params={"limit": 10})
        view = await c.get("/sessions/s1/projection", params={"view": "transcript", "limit": 10})
    for response in (listing, view):
        assert response.status_code == 200
        assert "content-length" not in response.headers, "written in pieces, not one body"
        assert [message["content"] for message in response.json()["messages"]] == ["z" * 300_000] * 10
        assert response.json()["hasMore"] is False
    assert "etag" in view.headers


async def test_a_view_past_its_time_budget_is_503_while_the_server_keeps_answering(trust_app: AppFactory) -> None:
    secret = "token sk-ant-" + "a" * 40 + " "
    async with trust_app(view_timeout_seconds=0.05) as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        batch = [user(secret * 8_000, id=f"m{index}") for index in range(12)]
        assert (await c.post("/sessions/s1/messages", json={"messages": batch})).status_code == 201
        export = asyncio.create_task(c.get("/sessions/s1/projection", params={"view": "export", "redact": "true"}))
        await asyncio.sleep(0)
        assert (await c.get("/healthz")).status_code == 200
        response = await export
        assert response.status_code == 503, response.text[:300]
        assert response.headers["content-type"] == "application/problem+json"
        small = await c.get("/sessions/s1/projection", params={"view": "export", "redact": "true", "limit": 1})
        assert small.status_code == 200 and "[REDACTED" in small.json()["messages"][0]["content"]


async def test_the_streamed_markdown_export_reads_every_page_cut_by_the_budget(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions/s1/projection", params={"view": "export", "format": "markdown"})
    assert response.status_code == 200
    assert all(f"{index}" + "x" * TEXT in response.text for index in range(10))


async def test_a_page_of_runs_is_cut_by_their_stored_bytes(client: httpx.AsyncClient) -> None:
    for index in range(5):
        created = await client.post("/sessions/s1/runs", json={"id": f"r{index}", "system": "s" * 4_000})
        assert created.status_code == 201
    sizes: list[int] = []
    ids: list[str] = []
    cursor: dict[str, str] = {}
    while True:
        page = (await client.get("/sessions/s1/runs", params={"limit": 10, **cursor})).json()
        sizes.append(len(page["runs"]))
        ids += [run["id"] for run in page["runs"]]
        if not page["hasMore"]:
            break
        cursor = {"after": page["nextCursor"]}
    assert sizes == [2, 2, 1]
    assert ids == [f"r{index}" for index in range(5)]
