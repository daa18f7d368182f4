"""Fixtures shared by the database and HTTP tests.

A test that asks for ``client`` (or ``database_url``) runs against a real PostgreSQL and is marked ``db``
automatically, so ``pytest -m db`` reruns exactly those against another server. Pure tests never start one.
Isolation is by truncation after each test rather than a rolled-back outer transaction: the concurrency
tests need real commits from many connections at once.
"""

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from sqlalchemy import text

from app.main import create_app
from app.settings import Settings
from app.store import migrations
from tests.database import as_served, create_database, drop_database, server_url

pytest_plugins = ["tests.statements"]
"""Fixtures more than one folder uses, kept beside their helpers."""


# Speed is the benchmarks' business, never a test's: a property must not fail because a loaded machine ran
# one example slowly. On top of the profile in force (Hypothesis's own "ci" one under CI).
settings.register_profile(
    "projector", parent=settings.default, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("projector")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "database_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.db)


@pytest.fixture(scope="session")
def database_server() -> Iterator[str]:
    with server_url() as (admin_url, _embedded):
        yield admin_url


@pytest.fixture(scope="session")
async def direct_database_url(database_server: str) -> AsyncIterator[str]:
    """This run's database, reached without any pooler in between."""
    url = await create_database(database_server)
    yield url
    await drop_database(database_server, url)


@pytest.fixture(scope="session")
async def database_url(direct_database_url: str) -> AsyncIterator[str]:
    """This run's database as the service reaches it, migrated that way too. Through a pooler, every app the
    tests start (in this process or as ``projector serve``) keeps its ``LISTEN`` on the direct URL, as a
    deployment behind PgBouncer must."""
    url = as_served(direct_database_url)
    await asyncio.to_thread(migrations.upgrade, url)
    if url == direct_database_url:
        yield url
        return
    os.environ["PROJECTOR_LISTEN_DATABASE_URL"] = direct_database_url
    try:
        yield url
    finally:
        del os.environ["PROJECTOR_LISTEN_DATABASE_URL"]


def settings_for_tests(**overrides: Any) -> Settings:
    """Settings for a test; ``overrides`` are raw values as the environment would give them (a JSON string for
    ``api_keys``, say), which pydantic validates and converts."""
    return Settings(database_url=None, migrate_on_start=False, **overrides)


@pytest.fixture(scope="session")
async def app(database_url: str) -> AsyncIterator[FastAPI]:
    application = create_app(settings_for_tests(), database_url=database_url)
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http
    async with app.state.database.transaction() as connection:
        await connection.execute(text("TRUNCATE sessions CASCADE"))
