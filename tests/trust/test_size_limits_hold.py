"""Every write is held to the size limits, amendments included: what a message, session or run holds after
the write stays within them, so no series of small writes grows a row past what one write may store. A
refusal is 413 naming the field, and nothing is written."""

from collections.abc import AsyncIterator

import httpx
import pytest

from app.settings import MIB
from tests.api.wire import user
from tests.trust.conftest import AppFactory, http_client

PROBLEM = "application/problem+json"


def refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 413, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["field"] == field


@pytest.fixture
async def roomy(trust_app: AppFactory) -> AsyncIterator[httpx.AsyncClient]:
    """Metadata may be as large as a message, so only the message limit bites."""
    async with trust_app(max_metadata_bytes=16 * MIB) as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        assert (await c.post("/sessions/s1/messages", json={"messages": [user("hi", id="m1")]})).status_code == 201
        yield c


@pytest.fixture
async def small(trust_app: AppFactory) -> AsyncIterator[httpx.AsyncClient]:
    async with trust_app(max_metadata_bytes=1000, max_message_bytes=4000) as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        assert (await c.post("/sessions/s1/messages", json={"messages": [user("hi", id="m1")]})).status_code == 201
        assert (await c.post("/sessions/s1/runs", json={"id": "r1"})).status_code == 201
        yield c


async def test_five_5_mb_amendments_never_grow_a_message_past_the_message_limit(roomy: httpx.AsyncClient) -> None:
    statuses = []
    for index in range(5):
        patch = await roomy.patch("/sessions/s1/messages/m1", json={"metadata": {f"k{index}": "x" * (5 * 1000 * 1000)}})
        statuses.append(patch.status_code)
        if patch.status_code == 413:
            refused(patch, "metadata")
    assert statuses == [200, 200, 200, 413, 413]
    stored = (await roomy.get("/sessions/s1/messages/m1")).json()
    assert sorted(stored["metadata"]) == ["k0", "k1", "k2"]


async def test_amendments_that_together_pass_the_metadata_limit_are_413_and_write_nothing(
    small: httpx.AsyncClient,
) -> None:
    assert (await small.patch("/sessions/s1/messages/m1", json={"metadata": {"a": "x" * 600}})).status_code == 200
    refused(await small.patch("/sessions/s1/messages/m1", json={"metadata": {"b": "x" * 600}}), "metadata")
    assert set((await small.get("/sessions/s1/messages/m1")).json()["metadata"]) == {"a"}
    removing = await small.patch("/sessions/s1/messages/m1", json={"metadata": {"a": None, "b": "x" * 600}})
    assert removing.status_code == 200, "a key removed in the same amendment frees its room"


async def test_session_metadata_past_the_limit_is_413_and_no_session_is_made(small: httpx.AsyncClient) -> None:
    refused(await small.post("/sessions", json={"id": "big", "metadata": {"a": "x" * 2000}}), "metadata")
    assert (await small.get("/sessions/big")).status_code == 404


async def test_run_fields_past_their_limits_are_413_and_no_run_is_made(small: httpx.AsyncClient) -> None:
    refused(await small.post("/sessions/s1/runs", json={"id": "r2", "metadata": {"a": "x" * 2000}}), "metadata")
    refused(await small.post("/sessions/s1/runs", json={"id": "r2", "system": "x" * 5000}), "system")
    refused(await small.post("/sessions/s1/runs", json={"id": "r2", "system": "x" * 2500, "agent": "y" * 2500}), "body")
    assert (await small.get("/sessions/s1/runs/r2")).status_code == 404


async def test_run_amendments_are_held_to_the_limits_on_their_merged_result(small: httpx.AsyncClient) -> None:
    assert (await small.patch("/sessions/s1/runs/r1", json={"metadata": {"a": "x" * 600}})).status_code == 200
    refused(await small.patch("/sessions/s1/runs/r1", json={"metadata": {"b": "x" * 600}}), "metadata")
    refused(await small.patch("/sessions/s1/runs/r1", json={"result": {"text": "x" * 5000}}), "result")
    run = (await small.get("/sessions/s1/runs/r1")).json()
    assert set(run["metadata"]) == {"a"} and run["result"] is None
