"""What every benchmark needs: a migrated PostgreSQL, a real uvicorn worker, raw asyncpg and timing.

Never used by the service or the tests. The database is an embedded PostgreSQL in a temporary folder
(deleted on exit) unless ``--database-url`` names a server; either way a fresh database is created for the
run and dropped after it, so a benchmark never touches anyone's rows.
"""

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy.engine import make_url

from app.main import create_app
from app.services.window_reuse import WindowReuse
from app.settings import Settings
from app.store import migrations
from app.store.embedded import EmbeddedPostgres

ROOT = Path(__file__).resolve().parents[1]
TENANT = "default"
"""With no API keys configured every caller is the runtime of this tenant."""


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server to use instead of an embedded one")
    return parser


def plain_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def asyncpg_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


@contextlib.asynccontextmanager
async def database(server_url: str | None) -> AsyncIterator[str]:
    """A fresh, migrated database for this run (asyncpg SQLAlchemy URL), dropped afterwards."""
    embedded: EmbeddedPostgres | None = None
    folder: Path | None = None
    if server_url is None:
        folder = Path(tempfile.mkdtemp(prefix="projector-bench-"))
        embedded = await asyncio.to_thread(EmbeddedPostgres, folder, delete_on_stop=True)
        server_url = embedded.url("postgres")
    admin = asyncpg_url(server_url)
    name = f"projector_bench_{uuid.uuid4().hex[:10]}"
    connection = await asyncpg.connect(plain_dsn(admin))
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    url = make_url(admin).set(database=name).render_as_string(hide_password=False)
    try:
        await asyncio.to_thread(migrations.upgrade, url)
        yield url
    finally:
        connection = await asyncpg.connect(plain_dsn(admin))
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await connection.close()
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


async def raw_connection(url: str) -> asyncpg.Connection:
    """A plain asyncpg connection whose jsonb and json values are encoded and decoded with orjson, in the
    binary format that COPY (``bench.dataset``) requires."""
    connection = await asyncpg.connect(plain_dsn(url))
    await connection.set_type_codec(
        "jsonb",
        schema="pg_catalog",
        encoder=lambda value: b"\x01" + orjson.dumps(value),
        decoder=lambda data: orjson.loads(data[1:]),
        format="binary",
    )
    # Message content is json, whose binary form is its text.
    await connection.set_type_codec(
        "json", schema="pg_catalog", encoder=orjson.dumps, decoder=orjson.loads, format="binary"
    )
    return connection


async def reading_connection(url: str) -> asyncpg.Connection:
    """A plain asyncpg connection that reads jsonb the fastest way we know with orjson: the text format,
    decoded by ``orjson.loads`` called from asyncpg with nothing in between (the service reads the same way,
    ``app.store.database``). A floor measured with it is the best a reader of these rows can do."""
    connection = await asyncpg.connect(plain_dsn(url))
    for json_type in ("jsonb", "json"):
        await connection.set_type_codec(
            json_type, schema="pg_catalog", encoder=lambda value: orjson.dumps(value).decode(), decoder=orjson.loads
        )
    return connection


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    """Uvicorn serving ``app.main:app`` on a loopback port, in processes of its own (one worker unless asked)."""

    process: subprocess.Popen[bytes]
    base_url: str

    @property
    def pid(self) -> int:
        return self.process.pid


@contextlib.asynccontextmanager
async def serve(url: str, *, workers: int = 1, **settings: str) -> AsyncIterator[Server]:
    port = free_port()
    environment = {
        **os.environ,
        "PROJECTOR_DATABASE_URL": url,
        "PROJECTOR_MIGRATE_ON_START": "false",
        "PROJECTOR_LOG_LEVEL": "warning",
        **{f"PROJECTOR_{key.upper()}": value for key, value in settings.items()},
    }
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "app.main:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--no-access-log",
        # Longer than any pause in a benchmark, so a pooled client connection is never closed under it.
        "--timeout-keep-alive",
        "300",
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=environment)  # noqa: ASYNC220 - started once, not awaited
    server = Server(process, f"http://127.0.0.1:{port}")
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            for _ in range(300):
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get("/healthz")).status_code == 200:
                        break
                if process.poll() is not None:
                    raise RuntimeError(f"uvicorn exited with {process.returncode}")
                await asyncio.sleep(0.05)
            else:
                raise RuntimeError("uvicorn did not answer /healthz within 15 s")
        yield server
    finally:
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 15)
        except subprocess.TimeoutExpired:
            process.kill()


class _LettingGoClient(httpx.AsyncClient):
    """httpx links a response and its stream both ways, so a read response (with its body: 21 MB for a long
    ``/chat``) lives on as garbage until the cycle collector runs. In one process with the service that
    garbage is the service's to find and walk, which no real client on another machine makes it do; breaking
    the link once the body is read lets reference counting free it at once."""

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = await super().send(request, **kwargs)
        if not kwargs.get("stream"):
            response.stream = httpx.ByteStream(b"")
        return response


def service_app(url: str) -> FastAPI:
    """The service on ``url``'s database (``database`` migrated it), logging warnings only."""
    return create_app(Settings(database_url=None, migrate_on_start=False, log_level="warning"), database_url=url)


def forget_kept(app: FastAPI) -> None:
    """Drops the windows and turns ``/chat`` kept, so that the next one is cold (not timed: freeing them is not
    serving a request)."""
    app.state.window_reuse = WindowReuse(app.state.settings.chat_reuse_bytes)


@contextlib.asynccontextmanager
async def in_process(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """``app`` started (its lifespan run) and a client that calls it in this process, through the real ASGI
    app (middleware, routing, encoding) with no network in between."""
    async with (
        LifespanManager(app),
        _LettingGoClient(transport=httpx.ASGITransport(app=app), base_url="http://bench", timeout=120) as http,
    ):
        yield http


def client(server: Server, connections: int = 20) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(base_url=server.base_url, limits=limits, timeout=120.0)


async def samples(action: Callable[[], Awaitable[object]], *, repeat: int, warmup: int = 2) -> list[float]:
    """Seconds per call of ``action``, one after another, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        await action()
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        await action()
        timings.append(time.perf_counter() - started)
    return timings


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def verdict(name: str, ratio: float, limit: float, *, at_most: bool = True) -> str:
    met = ratio <= limit if at_most else ratio >= limit
    relation = "<=" if at_most else ">="
    line = f"{name}: {ratio:.2f}x (target {relation} {limit:g}x) {'MET' if met else 'NOT MET'}"
    print(line, flush=True)
    return line
