"""A request body that stops arriving is answered 408 request-timeout, which a client may send again, whether
or not the request carries an ``Idempotency-Key`` (whose middleware reads the body first); only a body past
the limit is 413, which a client should not."""

import asyncio
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from starlette.types import Message

from app.main import create_app
from tests.conftest import settings_for_tests

IDLE_SECONDS = 0.2
KEYS = {"without a key": [], "with an Idempotency-Key": [(b"idempotency-key", b"stalled-1")]}


@pytest.fixture
async def impatient_app(database_url: str) -> AsyncIterator[FastAPI]:
    application = create_app(settings_for_tests(client_timeout_seconds=IDLE_SECONDS), database_url=database_url)
    async with LifespanManager(application):
        yield application


async def stalled_upload(app: FastAPI, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[str, object]]:
    """``POST /sessions`` with the first bytes of its body, then nothing: the status and problem answered."""
    parts = [{"type": "http.request", "body": b'{"id": "st', "more_body": True}]
    sent: list[Message] = []

    async def receive() -> Message:
        if parts:
            return parts.pop()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/sessions",
        "raw_path": b"/sessions",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"test"), (b"content-type", b"application/json"), (b"content-length", b"100"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }
    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    status: int = sent[0]["status"]
    return status, orjson.loads(b"".join(message.get("body", b"") for message in sent[1:]))


@pytest.mark.parametrize("headers", KEYS.values(), ids=KEYS.keys())
async def test_a_body_that_stops_arriving_is_a_408_and_stores_nothing(
    impatient_app: FastAPI, headers: list[tuple[bytes, bytes]]
) -> None:
    status, problem = await stalled_upload(impatient_app, headers)
    assert (status, problem["status"], problem["type"]) == (408, 408, "https://projector.dev/problems/request-timeout")
    assert problem["detail"] == f"body: no part of the request body arrived for {IDLE_SECONDS:g} s"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=impatient_app), base_url="http://test") as client:
        assert (await client.get("/sessions")).json()["sessions"] == []
