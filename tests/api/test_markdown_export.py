"""A Markdown export is the whole conversation: streamed whole, or paged with a link to the next page."""

import asyncio
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.api.auth import DEFAULT_TENANT
from app.errors import NotFound
from app.main import create_app
from app.projections.types import ProjectionContext, View
from app.services.projections import SessionView, ViewRequest, later_pages, view_session
from app.store import migrations
from app.store.database import Database, create_engine
from app.store.messages import PageBudget
from tests.api.wire import append, new_session, user
from tests.conftest import settings_for_tests
from tests.database import create_database, drop_database

LINES = [f"line {n:02d}" for n in range(11)]
MIB = 1024 * 1024


@pytest.fixture
async def small_pages(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """An app whose pages hold at most 3 messages, so a short session spans several."""
    app = create_app(settings_for_tests(max_page_size=3, default_page_size=2), database_url=database_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        await new_session(client, "md", title="Long talk")
        await append(client, "md", *(user(line, id=f"u{n}") for n, line in enumerate(LINES)))
        yield client
        await client.delete("/sessions/md")


def lines_in(document: str) -> list[str]:
    return re.findall(r"line \d\d", document)


async def test_a_markdown_export_streams_the_whole_conversation(small_pages: httpx.AsyncClient) -> None:
    response = await small_pages.get("/sessions/md/projection", params={"view": "export", "format": "markdown"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    assert "link" not in response.headers
    document = response.text
    assert document.startswith("# Long talk\n\n## User\n\nline 00\n\n## User")
    assert document.count("# Long talk") == 1
    assert lines_in(document) == LINES
    assert document.endswith("line 10\n")
    newest_first = await small_pages.get(
        "/sessions/md/projection", params={"view": "export", "format": "markdown", "order": "desc"}
    )
    assert lines_in(newest_first.text) == LINES[::-1]


async def test_a_paged_markdown_export_links_to_its_next_page_until_the_end(small_pages: httpx.AsyncClient) -> None:
    target = "/sessions/md/projection?view=export&format=markdown&limit=3"
    pages: list[str] = []
    while target:
        response = await small_pages.get(target)
        assert response.status_code == 200, response.text
        pages.append(response.text)
        link = response.headers.get("link")
        if link is None:
            assert "continues" not in response.text
            break
        found = re.fullmatch(r'<([^>]+)>; rel="next"', link)
        assert found is not None, link
        target = found.group(1)
        assert f"[next page]({target})" in response.text
    assert len(pages) == 4
    assert pages[0].startswith("# Long talk")
    assert all("# Long talk" not in page for page in pages[1:])
    assert [line for page in pages for line in lines_in(page)] == LINES


@pytest.mark.parametrize("again", [False, True], ids=["deleted", "created again under its id"])
async def test_a_streamed_export_of_a_session_deleted_meanwhile_is_cut_off_unfinished(
    database_url: str, again: bool
) -> None:
    """The pages after the first are read as the client takes them: once the session is gone, the document
    must not end early as if whole, nor go on with the messages of a session made again under its id."""
    app = create_app(settings_for_tests(max_page_size=3, default_page_size=2), database_url=database_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        await new_session(client, "md")
        await append(client, "md", *(user(line, id=f"u{n}") for n, line in enumerate(LINES)))
        database = app.state.database
        asked = ViewRequest("md", View.EXPORT, ProjectionContext(), "", 3, PageBudget(MIB, 1000), 30)
        first = await view_session(database, DEFAULT_TENANT, asked, if_none_match=None)
        assert isinstance(first, SessionView)
        rest = later_pages(database, DEFAULT_TENANT, asked, first)
        await anext(rest)
        assert (await client.delete("/sessions/md")).status_code == 204
        if again:
            await new_session(client, "md")
            await append(client, "md", *(user(f"another {n}") for n in range(len(LINES))))
        with pytest.raises(NotFound):
            await anext(rest)
        await client.delete("/sessions/md")


async def test_a_streamed_export_reads_on_the_primary_a_page_that_a_replica_behind_has_no_session_for(
    database_url: str, database_server: str
) -> None:
    """Replicas are taken in turn, so a page may come from one further behind than the first page's, where the
    session (created a moment ago) does not exist yet: that is a page to read on the primary, not a deletion."""
    app = create_app(settings_for_tests(max_page_size=3, default_page_size=2), database_url=database_url)
    behind_url = await create_database(database_server)
    await asyncio.to_thread(migrations.upgrade, behind_url)
    behind = Database(
        create_engine(database_url, settings_for_tests()), [create_engine(behind_url, settings_for_tests())]
    )
    try:
        async with (
            LifespanManager(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
        ):
            await new_session(client, "md")
            await append(client, "md", *(user(line, id=f"u{n}") for n, line in enumerate(LINES)))
            asked = ViewRequest("md", View.EXPORT, ProjectionContext(), "", 3, PageBudget(MIB, 1000), 30)
            first = await view_session(app.state.database, DEFAULT_TENANT, asked, if_none_match=None)
            assert isinstance(first, SessionView)
            rest = [page async for page in later_pages(behind, DEFAULT_TENANT, asked, first)]
            await client.delete("/sessions/md")
    finally:
        await behind.dispose()
        await drop_database(database_server, behind_url)
    read = [message.source_message_ids for page in [first.projection, *rest] for message in page.messages]
    assert read == [(f"u{n}",) for n in range(len(LINES))]
