"""A large body is decoded, validated and prepared in a worker thread, so the event loop keeps answering
other requests (``/healthz`` first of all) while it runs; and a body's parts are counted against the
request's budget before they are validated, which is what multiplies its memory."""

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Coroutine
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from app.api.responses import encode_json
from app.api.routes import chat as chat_route
from tests.api.wire import stored_count
from tests.trust.conftest import AppFactory, http_client

JSON = {"content-type": "application/json"}


def many_parts(messages: int, parts: int, *, last_role: str = "user") -> dict[str, Any]:
    one = [{"type": "text", "text": "a"}] * parts
    batch = [{"role": "user", "content": one} for _ in range(messages)]
    batch[-1] = {"role": last_role, "content": one}
    return {"messages": batch}


@pytest.fixture
async def app(trust_app: AppFactory) -> AsyncIterator[FastAPI]:
    async with trust_app() as application:
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(app) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        yield c


async def finishing_order(*requests: Awaitable[httpx.Response]) -> list[int]:
    """Indexes of the requests in the order their answers arrived (each started after the one before it
    had its first chance to run)."""
    order: list[int] = []

    async def timed(index: int, request: Awaitable[httpx.Response]) -> httpx.Response:
        response = await request
        order.append(index)
        return response

    tasks = []
    for index, request in enumerate(requests):
        tasks.append(asyncio.create_task(timed(index, request)))
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    return order


async def test_healthz_answers_while_a_large_append_is_validated(client: httpx.AsyncClient) -> None:
    """The append fails validation at its very last message, so it never reaches the database: on the
    event loop it would finish before ``/healthz`` got a turn."""
    body = many_parts(1000, 90, last_role="bogus")
    order = await finishing_order(client.post("/sessions/s1/messages", json=body), client.get("/healthz"))
    assert order == [1, 0]


async def test_healthz_answers_while_a_large_valid_append_waits_and_then_it_is_stored(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    async with app.state.database.transaction() as connection:
        await connection.execute(text("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE"))
        append = asyncio.create_task(client.post("/sessions/s1/messages", json=many_parts(1000, 90)))
        await asyncio.sleep(0)
        assert (await client.get("/healthz")).status_code == 200
        assert not append.done()
    response = await append
    assert response.status_code == 201, response.text[:300]
    assert await stored_count(client, "s1") == 1000


async def test_a_request_past_the_parts_budget_is_413_before_its_parts_are_validated(
    client: httpx.AsyncClient,
) -> None:
    """The probe's batch: every limit kept (1,000 messages of 2,000 one-letter parts, 54 MB)."""
    response = await client.post("/sessions/s1/messages", json=many_parts(1000, 2000))
    assert response.status_code == 413, response.text[:300]
    assert response.json()["field"] == "messages"
    small = await client.post("/sessions/s1/messages", json=many_parts(3, 2000))
    assert small.status_code == 201, "the budget counts the request, not each message"
    assert await stored_count(client, "s1") == 3


async def test_the_parts_budget_is_a_setting_and_holds_for_small_bodies(trust_app: AppFactory) -> None:
    async with trust_app(max_request_parts=10) as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        refused = await c.post("/sessions/s1/messages", json=many_parts(2, 6))
        assert refused.status_code == 413 and refused.json()["field"] == "messages"
        assert (await c.post("/sessions/s1/messages", json=many_parts(2, 5))).status_code == 201


@pytest.mark.parametrize("padding", [0, 400_000], ids=["small", "large"])
async def test_a_body_decoded_off_the_loop_is_refused_exactly_as_one_decoded_on_it(
    client: httpx.AsyncClient, padding: int
) -> None:
    filler = '{"role": "user", "content": "' + "x" * padding + '"}, '
    nan = '{"messages": [' + filler + '{"role": "user", "content": "x", "metadata": {"score": NaN}}]}'
    refused = await client.post("/sessions/s1/messages", content=nan, headers={"content-type": "application/json"})
    assert refused.status_code == 422 and refused.json()["field"] == "messages[1].metadata.score"
    broken = await client.post("/sessions/s1/messages", content=nan[:-3], headers={"content-type": "application/json"})
    assert broken.status_code == 422 and broken.headers["content-type"] == "application/problem+json"
    surrogate = '{"messages": [' + filler + '{"role": "user", "content": "\\ud83d"}]}'
    stored = await client.post("/sessions/s1/messages", content=surrogate, headers={"content-type": "application/json"})
    assert stored.status_code == 201 and stored.json()["messages"][1]["content"] == "\ud83d"


@pytest.mark.parametrize("padding", [0, 400_000], ids=["small", "large"])
async def test_a_body_that_is_not_utf8_is_400_whatever_its_size(client: httpx.AsyncClient, padding: int) -> None:
    body = b'{"messages": [{"role": "user", "content": "' + b"x" * padding + b'\xad"}]}'
    response = await client.post("/sessions/s1/messages", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.headers["content-type"] == "application/problem+json"


BAD_BATCHES = [
    ('[{"role": "bogus", "content": "x"}]', 422),
    ('[{"role": "user"}]', 422),
    ('[{"role": "tool", "content": []}]', 422),
    ('[{"role": "user", "content": [{"type": "nope"}]}]', 422),
    ('[{"role": "user", "content": "x", "extra": 1}]', 422),
    ('[{"role": "user", "content": "x"}], "other": 1', 422),
    ('[{"role": "user", "content": "x"}], "messages": []', 422),
    ('[{"role": "user", "content": "x"} {"role": "user", "content": "y"}]', 422),
    ('[{"role": "user", "content": "x", "createdAt": "yesterday"}]', 422),
    ('[{"role": "user", "content": "x", "metadata": {"n": 1e999}}]', 422),
]


@pytest.mark.parametrize(("rest", "status"), BAD_BATCHES)
async def test_a_large_append_body_is_refused_with_the_same_problem_as_a_small_one(
    client: httpx.AsyncClient, rest: str, status: int
) -> None:
    answers = []
    for padding in (0, 400_000):
        body = '{"messages": [{"role": "user", "content": "' + "x" * padding + '"}, ' + rest[1:] + "}"
        response = await client.post("/sessions/s1/messages", content=body, headers=JSON)
        assert response.status_code == status, response.text[:300]
        problem = response.json()
        answers.append((problem["field"], problem["detail"]))
    assert answers[0] == answers[1]
    assert await stored_count(client, "s1") == 0


@pytest.mark.parametrize("route", ["chat", "context"])
async def test_a_large_chat_or_context_report_is_built_in_a_worker_thread_within_the_view_budget(
    trust_app: AppFactory, route: str
) -> None:
    """A build on the event loop could not be stopped by its budget; in a worker thread it answers 503 past it,
    and ``/healthz`` answers meanwhile."""
    async with trust_app(view_timeout_seconds=0.000_001) as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        assert (await c.post("/sessions/s1/messages", json=many_parts(3, 1000))).status_code == 201

        def build(session_id: str) -> Coroutine[Any, Any, httpx.Response]:
            if route == "chat":
                return c.post("/chat", json={"sessionId": session_id, "provider": "openai", "model": "gpt-5"})
            return c.get(f"/sessions/{session_id}/context", params={"model": "gpt-5", "provider": "openai"})

        order = await finishing_order(build("s1"), c.get("/healthz"))
        assert order == [1, 0]
        response = await build("s1")
        assert response.status_code == 503, response.text[:300]
        assert (await c.post("/sessions", json={"id": "small"})).status_code == 201
        assert (await c.post("/sessions/small/messages", json=many_parts(1, 3))).status_code == 201
        answered = await build("small")
        assert answered.status_code == 200, "a small build stays on the loop, with no budget to miss"


async def test_a_large_chat_answer_is_encoded_in_a_worker_thread(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``/chat`` answer is about the size of its window: a large one is encoded off the event loop, as its
    build is; a small one on it, where a thread hop would cost more than the encoding."""
    on_loop: list[bool] = []

    def encode_and_note_where(content: Any) -> bytes:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return encode_json(content)

    monkeypatch.setattr(chat_route, "encode_json", encode_and_note_where)
    assert (await client.post("/sessions/s1/messages", json=many_parts(3, 1000))).status_code == 201
    assert (await client.post("/sessions", json={"id": "small"})).status_code == 201
    assert (await client.post("/sessions/small/messages", json=many_parts(1, 3))).status_code == 201
    for session_id in ("s1", "small"):
        answer = await client.post("/chat", json={"sessionId": session_id, "provider": "openai", "model": "gpt-5"})
        assert answer.status_code == 200, answer.text[:300]
    assert on_loop == [False, True]
