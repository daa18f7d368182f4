"""Listing messages: cursors that always mean newer/older, stable while the session grows."""

import httpx
import pytest

from tests.api.wire import append, new_session, user


async def fill(client: httpx.AsyncClient, count: int, start: int = 1) -> None:
    await append(client, "s1", *(user(f"text {index}", id=f"m{index}") for index in range(start, start + count)))


async def seqs(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [message["seq"] for message in response.json()["messages"]]


async def test_default_page_is_the_oldest_fifty_ascending(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await fill(client, 60)
    page = await client.get("/sessions/s1/messages")
    assert await seqs(page) == list(range(1, 51))
    assert page.json()["hasMore"] is True


async def test_paging_forward_while_the_session_grows_sees_every_message_once(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await fill(client, 5)
    seen: list[int] = []
    cursor = None
    for round_number in range(6):
        params = {"limit": 3, **({"after": cursor} if cursor else {})}
        page = await client.get("/sessions/s1/messages", params=params)
        seen += await seqs(page)
        cursor = page.json()["nextCursor"]
        if round_number < 3:
            await fill(client, 2, start=100 + round_number * 2)
    assert seen == list(range(1, 12))


async def test_a_tailing_reader_with_an_exhausted_cursor_keeps_it_and_sees_later_rows(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await fill(client, 2)
    page = (await client.get("/sessions/s1/messages", params={"limit": 10})).json()
    assert page["hasMore"] is False
    empty = (await client.get("/sessions/s1/messages", params={"after": page["nextCursor"]})).json()
    assert empty["messages"] == []
    assert empty["nextCursor"] == page["nextCursor"]
    await fill(client, 1, start=3)
    later = await client.get("/sessions/s1/messages", params={"after": page["nextCursor"]})
    assert await seqs(later) == [3]


async def test_paging_backward_from_the_newest_while_the_session_grows(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await fill(client, 7)
    seen: list[int] = []
    page = await client.get("/sessions/s1/messages", params={"limit": 3, "order": "desc"})
    seen += await seqs(page)
    await fill(client, 3, start=50)
    while page.json()["hasMore"]:
        page = await client.get(
            "/sessions/s1/messages", params={"limit": 3, "order": "desc", "before": page.json()["nextCursor"]}
        )
        seen += await seqs(page)
    assert seen == [7, 6, 5, 4, 3, 2, 1]


async def test_order_sorts_the_page_but_cursors_keep_their_direction(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await fill(client, 10)
    first = (await client.get("/sessions/s1/messages", params={"limit": 4})).json()
    after_desc = await client.get(
        "/sessions/s1/messages", params={"limit": 3, "after": first["nextCursor"], "order": "desc"}
    )
    assert await seqs(after_desc) == [7, 6, 5]
    newest = (await client.get("/sessions/s1/messages", params={"limit": 4, "order": "desc"})).json()
    before_asc = await client.get(
        "/sessions/s1/messages", params={"limit": 3, "before": newest["nextCursor"], "order": "asc"}
    )
    assert await seqs(before_asc) == [4, 5, 6]


async def test_a_cursor_from_another_session_is_400(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1")
    await new_session(client, "s2")
    await fill(client, 3)
    cursor = (await client.get("/sessions/s1/messages", params={"limit": 1})).json()["nextCursor"]
    response = await client.get("/sessions/s2/messages", params={"after": cursor})
    assert response.status_code == 400
    assert response.json()["type"].endswith("/invalid-cursor")
    assert response.json()["field"] == "after"


@pytest.mark.parametrize("cursor", ["garbage", "eyJ2Ijo5OX0", ""])
async def test_a_forged_cursor_is_400(client: httpx.AsyncClient, cursor: str) -> None:
    await new_session(client)
    response = await client.get("/sessions/s1/messages", params={"before": cursor or "%%%"})
    assert response.status_code == 400


@pytest.mark.parametrize(("limit", "status"), [(0, 422), (501, 422), (500, 200), (1, 200)])
async def test_limit_must_be_between_1_and_500(client: httpx.AsyncClient, limit: int, status: int) -> None:
    await new_session(client)
    response = await client.get("/sessions/s1/messages", params={"limit": limit})
    assert response.status_code == status
    if status == 422:
        assert "limit" in response.json()["detail"]


async def test_giving_both_cursors_is_400(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await fill(client, 3)
    cursor = (await client.get("/sessions/s1/messages", params={"limit": 1})).json()["nextCursor"]
    response = await client.get("/sessions/s1/messages", params={"after": cursor, "before": cursor})
    assert response.status_code == 400


async def test_listing_an_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    assert (await client.get("/sessions/nope/messages")).status_code == 404
