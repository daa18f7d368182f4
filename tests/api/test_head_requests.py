"""``HEAD`` on every ``GET`` route, over real HTTP: the head a ``GET`` would get, without its body, and a
streamed answer (an event stream, which never ends by itself) stopped once its head is sent."""

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from app.main import create_app
from tests.api.wire import append, new_session, user
from tests.conftest import settings_for_tests
from tests.trust.live_server import forget_everything, serving


@pytest.fixture
def base_url(database_url: str) -> Iterator[str]:
    with serving(create_app(settings_for_tests(streams_per_caller=1), database_url=database_url)) as url:
        yield url
    forget_everything(database_url)


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        await new_session(client, "s1")
        await append(client, "s1", user("hello", id="m1"))
        yield client


@pytest.mark.parametrize(
    "path",
    [
        "/healthz",
        "/sessions/s1",
        "/sessions/s1/messages",
        "/sessions/s1/projection?view=model",
        "/sessions/s1/projection?view=export&format=markdown",
        "/ui",
    ],
)
async def test_head_answers_what_get_would_without_the_body(http: httpx.AsyncClient, path: str) -> None:
    got = await http.get(path)
    head = await http.head(path)
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    for header in ("content-type", "content-length", "etag", "cache-control"):
        assert head.headers.get(header) == got.headers.get(header), header


async def test_head_on_an_event_stream_answers_its_head_and_gives_its_place_back(http: httpx.AsyncClient) -> None:
    for _ in range(3):  # one stream at a time for this caller: a place kept would make the next a 429
        head = await http.head("/sessions/s1/events")
        assert head.status_code == 200
        assert head.headers["content-type"].startswith("text/event-stream")
        assert head.content == b""


async def test_head_on_a_missing_session_is_404_without_a_body(http: httpx.AsyncClient) -> None:
    head = await http.head("/sessions/nope")
    assert head.status_code == 404
    assert head.headers["content-type"] == "application/problem+json"
    assert head.content == b""


async def test_head_on_a_path_without_get_is_405_naming_its_methods(http: httpx.AsyncClient) -> None:
    head = await http.head("/chat")
    assert head.status_code == 405
    assert head.headers["allow"] == "POST"
