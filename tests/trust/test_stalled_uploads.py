"""A client that sends its headers and then stalls its body is answered 408 and let go, instead of holding its
connection (and a socket) open for good; a slow upload that keeps sending, and a streamed answer after a
complete body, are never cut."""

import asyncio
import socket
import time
from collections.abc import AsyncIterator

import httpx
import orjson

from tests.api.wire import user
from tests.trust.conftest import AppFactory, http_client
from tests.trust.live_server import serving

IDLE = 0.3


def stalled_upload(base_url: str, sent: bytes, declared: int) -> bytes:
    """Sends the headers and ``sent`` of a body of ``declared`` bytes, then nothing: all the server answers."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        headers = (
            f"POST /sessions HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
            f"content-length: {declared}\r\n\r\n"
        )
        connection.sendall(headers.encode() + sent)
        answer = b""
        while chunk := connection.recv(65536):  # until the server closes the connection
            answer += chunk
    return answer


async def test_a_body_that_stops_arriving_is_a_408_and_the_connection_is_closed(trust_app: AppFactory) -> None:
    async with trust_app(body_idle_timeout_seconds=IDLE) as application:
        with serving(application) as base_url:
            started = time.monotonic()
            answer = await asyncio.to_thread(stalled_upload, base_url, b'{"id": "s', 100)
            waited = time.monotonic() - started
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer
    assert b"application/problem+json" in head
    assert orjson.loads(body)["type"].endswith("/request-timeout")
    assert waited < 10


async def test_a_slow_upload_that_keeps_sending_is_stored(trust_app: AppFactory) -> None:
    batch = orjson.dumps({"messages": [user("x" * 400, id="m1")]})

    async def trickle() -> AsyncIterator[bytes]:
        for start in range(0, len(batch), 100):
            await asyncio.sleep(IDLE / 3)
            yield batch[start : start + 100]

    async with trust_app(body_idle_timeout_seconds=IDLE) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        stored = await c.post("/sessions/s1/messages", content=trickle(), headers={"content-type": "application/json"})
        assert stored.status_code == 201, stored.text
        assert len(batch) > 100 * 4  # more time passed than one idle wait allows


async def test_a_complete_body_is_never_timed_while_its_answer_streams(trust_app: AppFactory) -> None:
    async with trust_app(body_idle_timeout_seconds=IDLE) as application:
        with serving(application) as base_url:
            async with httpx.AsyncClient(base_url=base_url, timeout=10) as c:
                await c.post("/sessions", json={"id": "s1"})
                async with c.stream("GET", "/sessions/s1/events") as events:
                    assert events.status_code == 200
                    await asyncio.sleep(IDLE * 3)
                    await c.post("/sessions/s1/messages", json={"messages": [user("hi", id="m1")]})
                    lines = events.aiter_lines()
                    while not (await anext(lines)).startswith("id:"):
                        pass
