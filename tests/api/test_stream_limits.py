"""Each caller holds at most ``PROJECTOR_STREAMS_PER_CALLER`` streamed answers open: the one past it is a 429
problem naming the limit, sent before anything of its body, and a stream gives its place back as it ends,
however it ends. One caller at its limit holds back no other."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from types import SimpleNamespace
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from app.api.callers import caller_by_address
from app.api.streaming import STREAM_RETRY_SECONDS, ClosingStreamingResponse, StreamLimits
from app.main import create_app
from app.services.events import StreamOptions, follow_session
from app.services.messages import response_budget
from app.settings import Settings
from tests.api.sse import open_stream
from tests.api.test_streaming import ENDINGS, Body, Ending, a_send_failed, never_receives, scope
from tests.api.wire import append, new_session, user
from tests.conftest import settings_for_tests
from tests.trust.keys import API_KEYS, OTHER_TENANT, READER, RUNTIME
from tests.trust.live_server import forget_everything, serving

CALLER = "address 10.0.0.1"


class LimitedResponse(ClosingStreamingResponse):
    """A streamed answer served by an app whose limits are ``limits``, to a client at ``address``."""

    def __init__(self, body: AsyncIterator[bytes], limits: StreamLimits, address: str = "10.0.0.1") -> None:
        super().__init__(body, media_type="text/plain")
        self.limits = limits
        self.address = address

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = SimpleNamespace(state=SimpleNamespace(stream_limits=self.limits))
        await super().__call__({**scope, "app": app, "client": (self.address, 5000)}, receive, send)


async def failing_in_its_body(response: ClosingStreamingResponse) -> None:
    async def send(message: Message) -> None:
        pass

    with pytest.raises(RuntimeError):
        await response(scope("2.3"), never_receives, send)


LIMITED_ENDINGS: dict[str, Ending] = {**ENDINGS, "failed in its body": failing_in_its_body}


@pytest.mark.parametrize("ending", LIMITED_ENDINGS.values(), ids=LIMITED_ENDINGS.keys())
async def test_a_stream_holds_its_place_while_it_runs_and_gives_it_back_however_it_ends(ending: Ending) -> None:
    limits = StreamLimits(2, caller_by_address)
    held_while_streaming: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        held_while_streaming.append(limits.open_streams(CALLER))
        async for piece in Body().asynchronous():
            yield piece
        if ending is failing_in_its_body:
            raise RuntimeError("the body failed")

    await asyncio.wait_for(ending(LimitedResponse(body(), limits)), timeout=10)
    assert held_while_streaming == [1]
    assert limits.open_streams(CALLER) == 0


async def test_the_stream_past_the_limit_is_a_429_problem_naming_it_with_nothing_of_its_body_sent() -> None:
    limits = StreamLimits(1, caller_by_address)
    assert limits.take(CALLER)
    started = False

    async def body() -> AsyncIterator[bytes]:
        nonlocal started
        started = True
        yield b"never sent"

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await LimitedResponse(body(), limits)(scope("2.3"), never_receives, send)
    head, content = sent
    headers = dict(head["headers"])
    assert head["status"] == 429
    assert headers[b"content-type"] == b"application/problem+json"
    assert headers[b"retry-after"] == str(STREAM_RETRY_SECONDS).encode()
    problem = orjson.loads(content["body"])
    assert problem["type"].endswith("/too-many-open-streams")
    assert problem["limit"] == "PROJECTOR_STREAMS_PER_CALLER" and problem["maximum"] == 1
    assert "PROJECTOR_STREAMS_PER_CALLER" in problem["detail"]
    assert not started
    assert limits.open_streams(CALLER) == 1


async def test_one_caller_at_its_limit_holds_back_no_other() -> None:
    limits = StreamLimits(1, caller_by_address)
    assert limits.take(CALLER)
    body = Body()
    await asyncio.wait_for(a_send_failed(LimitedResponse(body.asynchronous(), limits, address="10.0.0.2")), 10)
    assert body.closed
    assert limits.open_streams(CALLER) == 1
    assert limits.open_streams("address 10.0.0.2") == 0


async def test_closing_an_event_stream_that_never_started_ends_its_subscription(app: FastAPI) -> None:
    """A stream refused, or whose client left before it began, never asks for an event."""
    hub = app.state.events
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        await new_session(client, "never-read")
    options = StreamOptions(page_size=50, budget=response_budget(Settings()), heartbeat_seconds=5)
    before = hub.open_streams
    events = await follow_session(app.state.database, hub, "default", "never-read", after_seq=0, options=options)
    assert hub.open_streams == before + 1
    await events.aclose()
    assert hub.open_streams == before


@pytest.fixture
def served(database_url: str) -> Iterator[Any]:
    """``served(**settings)``: the app served over HTTP on a loopback port; its app and base URL."""
    servers: list[Any] = []

    def start(**overrides: object) -> tuple[FastAPI, str]:
        app = create_app(settings_for_tests(**overrides), database_url=database_url)
        server = serving(app)
        servers.append(server)
        return app, server.__enter__()

    yield start
    for server in reversed(servers):
        server.__exit__(None, None, None)
    forget_everything(database_url)


async def places_free(app: FastAPI, caller: str, count: int) -> None:
    limits: StreamLimits = app.state.stream_limits
    for _ in range(100):
        if limits.open_streams(caller) == count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{caller} still holds {limits.open_streams(caller)} streams")


async def test_event_streams_past_the_limit_are_refused_and_a_closed_one_frees_its_place(served: Any) -> None:
    app, url = served(streams_per_caller=2)
    async with httpx.AsyncClient(base_url=url, timeout=20) as client:
        await new_session(client, "followed")
        async with AsyncExitStack() as streams:
            for _ in range(2):
                await streams.enter_async_context(open_stream(client, "followed"))
            refused = await client.get("/sessions/followed/events")
            assert refused.status_code == 429
            assert refused.headers["retry-after"] == str(STREAM_RETRY_SECONDS)
            assert refused.json()["type"].endswith("/too-many-open-streams")
            assert app.state.events.open_streams == 2
        await places_free(app, "address 127.0.0.1", 0)
        assert app.state.events.open_streams == 0
        async with open_stream(client, "followed") as stream:
            await append(client, "followed", user("room again", id="m1"))
            assert [event.id for event in await stream.messages(1)] == ["1"]


async def test_a_streamed_page_counts_and_a_small_answer_does_not(served: Any) -> None:
    app, url = served(streams_per_caller=1)
    async with httpx.AsyncClient(base_url=url, timeout=20) as client:
        await new_session(client, "large")
        await append(client, "large", user("x" * 3_000_000, id="big"))
        await new_session(client, "small")
        await append(client, "small", user("hello", id="m1"))
        async with open_stream(client, "small"):
            assert (await client.get("/sessions/small/messages")).status_code == 200
            refused = await client.get("/sessions/large/messages")
            assert refused.status_code == 429
            view = await client.get("/sessions/large/projection", params={"view": "transcript"})
            assert view.status_code == 429
        await places_free(app, "address 127.0.0.1", 0)
        assert (await client.get("/sessions/large/messages")).status_code == 200


async def test_with_keys_a_caller_is_a_tenant_so_another_tenant_is_not_held_back(served: Any) -> None:
    _, url = served(api_keys=orjson.dumps(API_KEYS).decode(), streams_per_caller=1)

    def keyed(key: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=url, timeout=20, headers={"authorization": f"Bearer {key}"})

    async with keyed(RUNTIME) as acme, keyed(READER) as acme_reader, keyed(OTHER_TENANT) as globex:
        await new_session(acme, "acme")
        await new_session(globex, "globex")
        async with open_stream(acme, "acme"):
            assert (await acme_reader.get("/sessions/acme/events")).status_code == 429
            async with open_stream(globex, "globex") as stream:
                await append(globex, "globex", user("not held back", id="m1"))
                assert [event.id for event in await stream.messages(1)] == ["1"]
