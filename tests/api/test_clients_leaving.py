"""Clients that go away part-way. One that hangs up on a large streamed answer takes the answer's memory with
it: the page it asked for is freed by reference counting as the stream ends, without waiting for the cycle
collector, which the service runs rarely. One that leaves part-way through its upload is counted and logged as
499 (client closed request), not as a failure of the service, and nothing of its request is stored. One that
stops reading is cut off after the client timeout; one that reads slowly but steadily is not, however large
the pieces its answer is made in."""

import asyncio
import logging
import tracemalloc
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from prometheus_client import REGISTRY
from starlette.types import Message

from app.api.streaming import ClosingStreamingResponse
from app.main import create_app
from app.observability import CLIENT_CLOSED_REQUEST
from tests.api.test_streaming import never_receives, no_cycle_collection, scope
from tests.api.wire import append, new_session, stored_count, user
from tests.conftest import settings_for_tests

MESSAGE_CHARACTERS = 6_000_000
READ_BEFORE_LEAVING = 256 * 1024
LEFT_BEHIND_AT_MOST = MESSAGE_CHARACTERS // 2
"""Bytes allocated during the request that may stay: less than one of the page's messages."""
SETTLING_SECONDS = 2.0
UPLOAD_HEADERS = {"without a key": [], "with an Idempotency-Key": [(b"idempotency-key", b"left-part-way")]}
STREAMED_ANSWERS = {
    "a page of messages": "/sessions/s1/messages?limit=2",
    "a page of a view": "/sessions/s1/projection?view=transcript&limit=2",
    "a Markdown export": "/sessions/s1/projection?view=export&format=markdown",
    "an event stream": "/sessions/s1/events?after=0",
}


async def two_large_messages(client: httpx.AsyncClient) -> None:
    await new_session(client)
    for index in range(2):
        response = await append(client, "s1", user(f"{index} " + "word " * (MESSAGE_CHARACTERS // 5)))
        assert response.status_code == 201, response.text[:300]


async def settled_memory(*, since: int) -> int:
    """Traced bytes allocated since ``since`` and still held, once what ends on its own has ended (a worker
    thread lets go of the last piece it encoded a moment after handing it over; the loop closes an event
    stream's generators): at most ``LEFT_BEHIND_AT_MOST``, or what is still held after ``SETTLING_SECONDS``."""
    deadline = asyncio.get_running_loop().time() + SETTLING_SECONDS
    while (held := tracemalloc.get_traced_memory()[0] - since) > LEFT_BEHIND_AT_MOST:
        if asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.01)
    return held


async def read_part_way_and_leave(app: FastAPI, path: str, *, stop_reading: bool) -> int:
    """Asks for ``path`` as uvicorn hands a request over, reads ``READ_BEFORE_LEAVING`` bytes of the answer and
    hangs up, having stopped reading (the send of the next piece waits until the connection is lost) or while
    still reading. As uvicorn does, the hang-up answers ``receive`` with ``http.disconnect`` and lets every
    send return without writing. The bytes read."""
    asked, hung_up = False, asyncio.Event()
    read = 0

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await hung_up.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal read
        if message["type"] == "http.response.start":
            assert message["status"] == 200, message
        elif message["type"] == "http.response.body" and not hung_up.is_set():
            if read >= READ_BEFORE_LEAVING:
                if stop_reading:
                    asyncio.get_running_loop().call_later(0.05, hung_up.set)
                    await hung_up.wait()
                else:
                    hung_up.set()
                return
            read += len(message.get("body", b""))

    await asyncio.wait_for(app(served("GET", path), receive, send), timeout=60)
    return read


def served(method: str, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    """The scope of a request as uvicorn hands it over."""
    target, _, query = path.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": target,
        "raw_path": target.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"test"), (b"content-type", b"application/json"), *(headers or [])],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }


@pytest.mark.parametrize("stop_reading", [True, False], ids=["stopped reading", "still reading"])
@pytest.mark.parametrize("path", STREAMED_ANSWERS.values(), ids=STREAMED_ANSWERS.keys())
async def test_a_client_that_hangs_up_part_way_leaves_none_of_the_answer_behind(
    app: FastAPI, client: httpx.AsyncClient, path: str, stop_reading: bool
) -> None:
    await two_large_messages(client)
    tracemalloc.start()
    try:
        with no_cycle_collection():
            before = tracemalloc.get_traced_memory()[0]
            read = await read_part_way_and_leave(app, path, stop_reading=stop_reading)
            left_behind = await settled_memory(since=before)
    finally:
        tracemalloc.stop()
    assert read >= READ_BEFORE_LEAVING
    assert left_behind <= LEFT_BEHIND_AT_MOST, f"{left_behind:,} bytes of a {2 * MESSAGE_CHARACTERS:,}-byte page"


async def upload_half_and_leave(app: FastAPI, path: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = orjson.dumps({"messages": [user("words " * 1000, id="m1")]})
    arriving: list[Message] = [
        {"type": "http.disconnect"},
        {"type": "http.request", "body": body[: len(body) // 2], "more_body": True},
    ]

    async def receive() -> Message:
        return arriving.pop() if arriving else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        pass

    await asyncio.wait_for(app(served("POST", path, headers), receive, send), timeout=10)


@pytest.mark.parametrize("headers", UPLOAD_HEADERS.values(), ids=UPLOAD_HEADERS.keys())
async def test_a_client_that_leaves_part_way_through_its_upload_counts_as_499_and_logs_no_error(
    app: FastAPI, client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, headers: list[tuple[bytes, bytes]]
) -> None:
    await new_session(client)
    counted_before = requests_counted(CLIENT_CLOSED_REQUEST)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        await upload_half_and_leave(app, "/sessions/s1/messages", headers)
    assert requests_counted(CLIENT_CLOSED_REQUEST) == counted_before + 1
    assert [getattr(record, "status", None) for record in caplog.records if record.name == "projector.access"] == [499]
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
    assert await stored_count(client, "s1") == 0


def requests_counted(status: int) -> float:
    """``projector_http_requests_total`` with this status, over every method and route (a request answered
    before routing, as with an ``Idempotency-Key``, has none)."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        if metric.name == "projector_http_requests"
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels["status"] == str(status)
    )


async def read_part_way_and_stop(app: FastAPI, path: str) -> tuple[int, bool]:
    """Asks for ``path``, reads ``READ_BEFORE_LEAVING`` bytes of the answer and then takes nothing more while
    staying connected. The bytes read, and whether the answer was finished."""
    asked, read, finished = False, 0, False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # never hangs up
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        nonlocal read, finished
        if message["type"] == "http.response.body":
            if read >= READ_BEFORE_LEAVING:
                await asyncio.Event().wait()  # never takes the next piece
            read += len(message.get("body", b""))
            finished = finished or not message.get("more_body", False)

    await asyncio.wait_for(app(served("GET", path), receive, send), timeout=30)
    return read, finished


@pytest.mark.parametrize("path", STREAMED_ANSWERS.values(), ids=STREAMED_ANSWERS.keys())
async def test_a_client_that_stops_reading_is_cut_off_after_the_client_timeout_and_holds_nothing(
    database_url: str, path: str
) -> None:
    app = create_app(settings_for_tests(client_timeout_seconds=0.5), database_url=database_url)
    transport = httpx.ASGITransport(app=app)
    async with LifespanManager(app), httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        await two_large_messages(client)
        tracemalloc.start()
        try:
            with no_cycle_collection():
                before = tracemalloc.get_traced_memory()[0]
                read, finished = await read_part_way_and_stop(app, path)
                left_behind = await settled_memory(since=before)
        finally:
            tracemalloc.stop()
            await client.delete("/sessions/s1")
    assert read >= READ_BEFORE_LEAVING and not finished
    assert left_behind <= LEFT_BEHIND_AT_MOST, f"{left_behind:,} bytes of a {2 * MESSAGE_CHARACTERS:,}-byte page"


LARGE_PIECE_BYTES = 4 * 1024 * 1024
"""A piece as a single large message makes it (up to 16 MB): one send of it would take 1 s at this rate."""
SLOW_READER_BYTES_PER_SECOND = 4 * 1024 * 1024
SLOW_READER_TIMEOUT_SECONDS = 0.25


async def read_slowly(response: ClosingStreamingResponse, *, timeout_seconds: float) -> list[Message]:
    """Streams ``response`` to a client reading ``SLOW_READER_BYTES_PER_SECOND``, served by an app whose client
    timeout is ``timeout_seconds``: as uvicorn's does, a send returns once the client has read what it was given.
    The body messages sent."""
    sent: list[Message] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            await asyncio.sleep(len(message.get("body", b"")) / SLOW_READER_BYTES_PER_SECOND)
            sent.append(message)

    settings = settings_for_tests(client_timeout_seconds=timeout_seconds)
    app = SimpleNamespace(state=SimpleNamespace(settings=settings))
    await asyncio.wait_for(response({**scope("2.3"), "app": app}, never_receives, send), timeout=30)
    return sent


async def test_a_client_reading_slowly_but_steadily_gets_the_whole_answer_however_large_its_pieces() -> None:
    """It reads a 4 MB piece in 1 s, four times the client timeout, but never waits a timeout for a few hundred
    KB: the timeout is for a client that stopped reading, not for one slower than a piece per timeout."""
    pieces = [b"a" * LARGE_PIECE_BYTES, b"b" * 1000, b"c" * LARGE_PIECE_BYTES]

    async def body() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece

    sent = await read_slowly(ClosingStreamingResponse(body()), timeout_seconds=SLOW_READER_TIMEOUT_SECONDS)
    received, whole = b"".join(message["body"] for message in sent), b"".join(pieces)
    assert len(received) == len(whole), f"cut off after {len(received):,} of {len(whole):,} bytes"
    assert received == whole
    assert [message.get("more_body", False) for message in sent] == [True] * (len(sent) - 1) + [False]
