"""A client leaving while its query runs makes asyncpg send a cancel request on a connection of its own, which
the pool's terminating the query's connection can cut off; the future asyncpg then leaves failed and unawaited
is no ERROR in the service's log, while every other exception nobody retrieved still is."""

import asyncio
import gc
import logging
import ssl

import pytest
from asgi_lifespan import LifespanManager
from asyncpg.connect_utils import TLSUpgradeProto

from app.main import create_app
from tests.conftest import settings_for_tests


def lose_a_cancel_request() -> None:
    """What asyncpg does when the task sending a cancel request is cancelled between its socket connecting
    and the connection reaching its protocol: the transport closes, and the protocol's SSL-negotiation
    future, which nobody awaits, fails."""
    negotiation = TLSUpgradeProto(asyncio.get_running_loop(), "127.0.0.1", 5432, ssl.create_default_context(), True)
    negotiation.connection_lost(None)
    del negotiation
    gc.collect()


def leave_an_error_unretrieved(error: Exception) -> None:
    future = asyncio.get_running_loop().create_future()
    future.set_exception(error)
    del future
    gc.collect()


def unretrieved(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        str(record.exc_info[1]) if record.exc_info else record.getMessage()
        for record in caplog.records
        if record.levelno == level and "never retrieved" in record.getMessage()
    ]


async def test_a_lost_cancel_request_is_logged_at_debug_and_other_unretrieved_errors_at_error(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with LifespanManager(create_app(settings_for_tests(), database_url=database_url)):
        caplog.set_level(logging.DEBUG)
        lose_a_cancel_request()
        leave_an_error_unretrieved(ConnectionError("connection refused"))
        leave_an_error_unretrieved(RuntimeError("a bug"))
    assert unretrieved(caplog, logging.ERROR) == ["connection refused", "a bug"]
    lost = [record for record in caplog.records if "cancel request" in record.getMessage()]
    assert [record.levelno for record in lost] == [logging.DEBUG]


async def test_the_loop_keeps_its_own_handler_once_the_service_stops(database_url: str) -> None:
    loop = asyncio.get_running_loop()
    before = loop.get_exception_handler()
    async with LifespanManager(create_app(settings_for_tests(), database_url=database_url)):
        assert loop.get_exception_handler() is not before
    assert loop.get_exception_handler() is before
