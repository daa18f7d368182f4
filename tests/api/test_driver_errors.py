"""What a failure of the database driver answers: a retryable 503 problem, never an unexpected 500."""

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.api.problems import install_problem_handlers


def failing_with(error: Exception) -> FastAPI:
    application = FastAPI()
    install_problem_handlers(application)

    @application.get("/write")
    async def write() -> None:
        raise error

    return application


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.InterfaceError("connection is closed"),
        asyncpg.exceptions.InternalClientError("cannot switch to state 12; another operation (2) is in progress"),
    ],
)
async def test_a_connection_the_server_left_broken_is_a_503(error: Exception) -> None:
    """A server going away mid-statement can leave the driver in a state it cannot leave."""
    transport = httpx.ASGITransport(app=failing_with(error), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/write")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert "connection was lost" in response.json()["detail"]
