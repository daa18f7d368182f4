"""A client that hangs up part-way through a large streamed answer takes the answer's memory with it: the page
it asked for is freed by reference counting as the stream ends, without waiting for the cycle collector, which
the service runs rarely."""

import asyncio
import tracemalloc

import httpx
import pytest
from fastapi import FastAPI
from starlette.types import Message

from tests.api.test_streaming import no_cycle_collection
from tests.api.wire import append, new_session, user

MESSAGE_CHARACTERS = 6_000_000
READ_BEFORE_LEAVING = 256 * 1024
LEFT_BEHIND_AT_MOST = MESSAGE_CHARACTERS // 2
"""Bytes allocated during the request that may stay: less than one of the page's messages."""
SETTLING_SECONDS = 2.0
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
    target, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": target,
        "raw_path": target.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"test")],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }
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

    await asyncio.wait_for(app(scope, receive, send), timeout=60)
    return read


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
