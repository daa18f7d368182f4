"""Apps built with trust settings (API keys, short timeouts) over the test database, and their clients.

Each ``keyed_app`` runs its own lifespan against the session's test database; rows written through it are
truncated afterwards, idempotency keys included, so the trust tests never see each other's keys.
"""

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import text
from starlette.types import Message

from app.main import create_app
from tests.conftest import settings_for_tests
from tests.trust.keys import API_KEYS

AppFactory = Callable[..., AbstractAsyncContextManager[FastAPI]]


@pytest.fixture
def trust_app(database_url: str) -> AppFactory:
    """``async with trust_app(**settings) as app``: an app whose lifespan has run, cleaned up after."""

    @asynccontextmanager
    async def build(**overrides: object) -> AsyncIterator[FastAPI]:
        application = create_app(settings_for_tests(**overrides), database_url=database_url)
        async with LifespanManager(application):
            try:
                yield application
            finally:
                async with application.state.database.transaction() as connection:
                    await connection.execute(text("TRUNCATE sessions, idempotency_keys CASCADE"))

    return build


@pytest.fixture
async def keyed_app(trust_app: AppFactory) -> AsyncIterator[FastAPI]:
    async with trust_app(api_keys=orjson.dumps(API_KEYS).decode()) as application:
        yield application


def http_client(app: FastAPI, key: str | None = None) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", headers=headers)


@dataclass
class RawExchange:
    """What a raw ASGI call sent back, and how many body bytes the app pulled through ``receive``."""

    status: int
    headers: dict[str, str]
    body: bytes
    bytes_received: int


async def raw_request(
    app: FastAPI,
    method: str,
    path: str,
    *,
    headers: Iterable[tuple[bytes, bytes]] = (),
    chunks: Iterable[bytes] = (),
    disconnect_after: bool = False,
) -> RawExchange:
    """Drives the app as a server would, one body chunk per ``receive``, counting the bytes taken; with
    ``disconnect_after`` the client goes away once the chunks run out instead of finishing the body."""
    pending = iter(chunks)
    received = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal received
        chunk = next(pending, None)
        if chunk is None:
            return {"type": "http.disconnect"}
        received += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def receive_to_the_end() -> Message:
        message = await receive()
        if message["type"] == "http.disconnect" and not disconnect_after:
            return {"type": "http.request", "body": b"", "more_body": False}
        return message

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"test"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }
    await app(scope, receive_to_the_end, send)
    start = next((message for message in sent if message["type"] == "http.response.start"), None)
    body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    if start is None:
        return RawExchange(status=0, headers={}, body=b"", bytes_received=received)
    raw_headers: list[tuple[bytes, bytes]] = start["headers"]
    decoded = {name.decode("latin-1"): value.decode("latin-1") for name, value in raw_headers}
    return RawExchange(status=start["status"], headers=decoded, body=body, bytes_received=received)
