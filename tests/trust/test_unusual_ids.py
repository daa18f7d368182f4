"""Session ids are any printable text, and every answer about such a session stays a valid HTTP answer: the
ETag (a header, which carries Latin-1 only and must not hold a bare ``"``) never holds the id as given."""

import re
from collections.abc import AsyncIterator
from urllib.parse import quote

import httpx
import pytest

from app.projections.types import View
from tests.api.wire import assistant, user
from tests.trust.conftest import AppFactory, http_client

UNUSUAL_IDS = ["日本語", "🦀 crab", "a\u202eb", "zero\u200bwidth", 'say "hi"', "back\\slash", "ÿ-latin1"]


@pytest.fixture
async def client(trust_app: AppFactory) -> AsyncIterator[httpx.AsyncClient]:
    async with trust_app() as application, http_client(application) as c:
        yield c


def etag_is_a_valid_header(etag: str) -> None:
    assert etag.isascii() and etag.startswith('W/"') and etag.endswith('"')
    assert '"' not in etag[3:-1], etag


@pytest.mark.parametrize("session_id", UNUSUAL_IDS)
async def test_every_view_chat_and_context_answer_for_an_id_outside_latin1(
    client: httpx.AsyncClient, session_id: str
) -> None:
    path = f"/sessions/{quote(session_id, safe='')}"
    assert (await client.post("/sessions", json={"id": session_id})).status_code == 201
    appended = await client.post(f"{path}/messages", json={"messages": [user("hi"), assistant("hello")]})
    assert appended.status_code == 201, appended.text
    for view in View:
        for extra in ({}, {"format": "markdown"} if view is View.EXPORT else None):
            if extra is None:
                continue
            response = await client.get(f"{path}/projection", params={"view": str(view), **extra})
            assert response.status_code == 200, (view, response.text)
            etag_is_a_valid_header(response.headers["etag"])
            again = await client.get(
                f"{path}/projection",
                params={"view": str(view), **extra},
                headers={"if-none-match": response.headers["etag"]},
            )
            assert again.status_code == 304, (view, again.text)
    context = await client.get(f"{path}/context")
    assert context.status_code == 200 and context.json()["sessionId"] == session_id
    chat = await client.post(
        "/chat", json={"sessionId": session_id, "provider": "anthropic", "model": "claude-sonnet-4-5"}
    )
    assert chat.status_code == 200, chat.text


@pytest.mark.parametrize(
    "session_id", [*UNUSUAL_IDS, 'a>; rel="prev", <https:elsewhere.example', "sp ace (1)", "q?x=1#f"]
)
async def test_a_markdown_export_page_links_to_the_next_whatever_the_id(
    client: httpx.AsyncClient, session_id: str
) -> None:
    path = f"/sessions/{quote(session_id, safe='')}"
    assert (await client.post("/sessions", json={"id": session_id})).status_code == 201
    appended = await client.post(f"{path}/messages", json={"messages": [user("one"), user("two")]})
    assert appended.status_code == 201, appended.text
    params: dict[str, str | int] = {"view": "export", "format": "markdown", "limit": 1}
    response = await client.get(f"{path}/projection", params=params)
    assert response.status_code == 200, response.text
    link = response.headers["link"]
    found = re.fullmatch(r'<([!#-~]+)>; rel="next"', link)
    assert found is not None and found.group(1).startswith(f"{path}/projection?"), link
    assert f"[next page]({found.group(1)})" in response.text
    following = await client.get(found.group(1))
    assert following.status_code == 200, following.text
    assert "two" in following.text and "one" not in following.text


async def test_two_sessions_never_share_an_etag(client: httpx.AsyncClient) -> None:
    tags = set()
    for session_id in UNUSUAL_IDS:
        assert (await client.post("/sessions", json={"id": session_id})).status_code == 201
        response = await client.get(f"/sessions/{quote(session_id, safe='')}/projection", params={"view": "model"})
        tags.add(response.headers["etag"])
    assert len(tags) == len(UNUSUAL_IDS)
