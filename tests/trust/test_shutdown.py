"""Graceful shutdown: a real ``projector serve`` process told to stop (SIGTERM) stops taking new connections,
finishes the request it is serving, stores its messages, and exits cleanly."""

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx

from tests.api.wire import user
from tests.database import plain_dsn

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def wait_healthy(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    async with httpx.AsyncClient(base_url=base_url) as client:
        while time.monotonic() < deadline:
            assert process.poll() is None, "the server exited while starting"
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("the server did not start")


async def test_sigterm_lets_the_request_in_flight_finish_and_store_its_messages(
    database_url: str, tmp_path: Path
) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PROJECTOR_MIGRATE_ON_START": "false",
        "PROJECTOR_LOG_LEVEL": "info",
    }
    environment.pop("PROJECTOR_API_KEYS", None)
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, then only polled
        [sys.executable, "-m", "app", "serve", "--port", str(port)],
        cwd=ROOT,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    database = await asyncpg.connect(plain_dsn(database_url))
    try:
        await wait_healthy(base_url, process)
        async with httpx.AsyncClient(base_url=base_url, timeout=20) as client:
            assert (await client.post("/sessions", json={"id": "graceful"})).status_code == 201
            # Keep the append inside its route: another connection holds the session's row lock.
            transaction = database.transaction()
            await transaction.start()
            await database.execute("SELECT 1 FROM sessions WHERE id = 'graceful' FOR UPDATE")
            batch = {"messages": [user("finish me", id="m1")]}
            in_flight = asyncio.create_task(client.post("/sessions/graceful/messages", json=batch))
            await asyncio.sleep(0.5)
            process.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.5)
            assert process.poll() is None, "the server quit with a request in flight"
            assert not in_flight.done()
            async with httpx.AsyncClient(base_url=base_url, timeout=2) as late:
                try:
                    refused = (await late.get("/healthz")).status_code
                except httpx.TransportError:
                    refused = None
            assert refused is None, "a draining server must not take new connections"
            await transaction.commit()
            response = await in_flight
        assert response.status_code == 201, response.text
        # uvicorn re-raises the signal once it has drained and run the lifespan's shutdown.
        assert await asyncio.to_thread(process.wait, 15) in (0, -signal.SIGTERM)
        assert "Application shutdown complete" in (tmp_path / "server.log").read_text()
        stored = await database.fetch("SELECT id, seq FROM messages WHERE session_id = 'graceful'")
        assert [(row["id"], row["seq"]) for row in stored] == [("m1", 1)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        await database.execute("DELETE FROM sessions WHERE id = 'graceful'")
        await database.close()
        log.close()
