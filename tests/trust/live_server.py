"""A real uvicorn server on a loopback port, in a thread of this process, for tests that speak HTTP the way
clients do (schemathesis, the stateful API test). The app's lifespan runs on the server's own event loop."""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
import uvicorn
from fastapi import FastAPI

from tests.database import plain_dsn


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """Serves ``app`` until the block ends; yields its base URL. The server is handed a socket already bound to
    its port: a port chosen free and bound only later may be taken meanwhile by any other process. It is handed
    over once its ``LISTEN`` connection is up (which the app opens in the background as it starts): an event
    stream opened before that starts with a ``resync`` and misses no change, but a test expecting a change's
    own event would meet that ``resync`` instead."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", log_config=None)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, name="uvicorn-under-test", daemon=True)
    with listener:
        thread.start()
        deadline = time.monotonic() + 30
        while not (server.started and app.state.event_listener.listening.is_set()):
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server under test did not start, or not listen for change notices")
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=30)


def forget_everything(database_url: str) -> None:
    """Empties the test database's tables from a thread of its own (callers may be inside an event loop)."""

    async def truncate() -> None:
        connection = await asyncpg.connect(plain_dsn(database_url))
        try:
            await connection.execute("TRUNCATE sessions, idempotency_keys CASCADE")
        finally:
            await connection.close()

    worker = threading.Thread(target=lambda: asyncio.run(truncate()))
    worker.start()
    worker.join()
