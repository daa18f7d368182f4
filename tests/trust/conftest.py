"""Apps built with trust settings (API keys, short timeouts) over the test database, and their clients.

Each ``keyed_app`` runs its own lifespan against the session's test database; rows written through it are
truncated afterwards, idempotency keys included, so the trust tests never see each other's keys.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import text

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
