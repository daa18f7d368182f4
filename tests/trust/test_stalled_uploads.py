"""A client that stalls is let go instead of holding its connection (and a socket) open for good: one that
sends its headers and then stalls its body is answered 408, and one whose request head does not arrive whole
in time (nothing at all, or half the headers) is disconnected by the server ``projector serve`` runs. A slow
upload that keeps sending, and a streamed answer after a complete body, are never cut."""

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import orjson
import pytest

from tests.api.wire import user
from tests.trust.conftest import AppFactory, http_client
from tests.trust.live_server import serving
from tests.trust.test_shutdown import ROOT, free_port, wait_healthy

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
    async with trust_app(client_timeout_seconds=IDLE) as application:
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

    async with trust_app(client_timeout_seconds=IDLE) as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        stored = await c.post("/sessions/s1/messages", content=trickle(), headers={"content-type": "application/json"})
        assert stored.status_code == 201, stored.text
        assert len(batch) > 100 * 4  # more time passed than one idle wait allows


async def test_a_complete_body_is_never_timed_while_its_answer_streams(trust_app: AppFactory) -> None:
    async with trust_app(client_timeout_seconds=IDLE) as application:
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


@contextmanager
def projector_serve(
    database_url: str, log: Path, **environment: str
) -> Iterator[tuple[str, "subprocess.Popen[bytes]"]]:
    port = free_port()
    settings = {"DATABASE_URL": database_url, "PROJECTOR_MIGRATE_ON_START": "false", **environment}
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, **settings},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield f"http://127.0.0.1:{port}", process
        finally:
            process.kill()
            process.wait()


def closed_by_the_server(base_url: str, head: bytes, after_a_request: bool = False) -> bool:
    """Opens a connection (after one whole request on it, if asked), sends ``head``, and waits for the server to
    close it: True when it does within ten seconds."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        if after_a_request:
            connection.sendall(f"GET /healthz HTTP/1.1\r\nhost: {host}\r\n\r\n".encode())
            assert connection.recv(65536).startswith(b"HTTP/1.1 200")
        connection.sendall(head)
        try:
            while connection.recv(65536):
                pass
        except TimeoutError:
            return False
    return True


async def test_a_request_head_that_does_not_arrive_whole_in_time_is_disconnected(
    database_url: str, tmp_path: Path
) -> None:
    with projector_serve(database_url, tmp_path / "server.log", PROJECTOR_CLIENT_TIMEOUT_SECONDS="0.5") as served:
        base_url, process = served
        await wait_healthy(base_url, process)
        half = b"POST /sessions HTTP/1.1\r\nhost: x\r\n"
        for head, after_a_request in [(b"", False), (half, False), (half, True)]:
            assert await asyncio.to_thread(closed_by_the_server, base_url, head, after_a_request), (
                head,
                after_a_request,
            )
        async with httpx.AsyncClient(base_url=base_url) as client:
            assert (await client.get("/healthz")).status_code == 200


def server_keeps(server_port: int, client_port: int) -> bool:
    """Whether the server's end of the connection from ``client_port`` still exists, in any state."""
    wanted = (f"{server_port:04X}", f"{client_port:04X}")
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local, remote = row.split()[1:3]
                if (local.rsplit(":", 1)[1], remote.rsplit(":", 1)[1]) == wanted:
                    return True
    return False


def ask_and_read_nothing(base_url: str, path: str, wait: float) -> bool:
    """Asks for ``path`` on a connection that then reads nothing; whether the server still holds its end of it
    after ``wait`` seconds."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.socket() as connection:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.connect((host, int(port)))
        connection.sendall(f"GET {path} HTTP/1.1\r\nhost: {host}\r\n\r\n".encode())
        time.sleep(wait)
        return server_keeps(int(port), connection.getsockname()[1])


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads the kernel's socket table (Linux)")
async def test_a_client_that_stops_reading_an_answer_is_dropped_by_the_server(
    database_url: str, tmp_path: Path
) -> None:
    with projector_serve(database_url, tmp_path / "server.log", PROJECTOR_CLIENT_TIMEOUT_SECONDS="0.5") as served:
        base_url, process = served
        await wait_healthy(base_url, process)
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
            await client.post("/sessions", json={"id": "s1"})
            for n in range(2):
                batch = {"messages": [user(f"{n} " + "word " * 1_200_000)]}
                assert (await client.post("/sessions/s1/messages", json=batch)).status_code == 201
            try:
                held = await asyncio.to_thread(ask_and_read_nothing, base_url, "/sessions/s1/messages?limit=2", 4.0)
                assert not held, "the server still holds the connection of a client that reads nothing"
                assert (await client.get("/healthz")).status_code == 200
            finally:
                await client.delete("/sessions/s1")
    assert b"returned without completing" not in (tmp_path / "server.log").read_bytes()
