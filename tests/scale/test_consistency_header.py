"""The ``Projector-Consistency`` header without replicas: nothing to wait for, so writes answer no token,
reads that send one are served as always, and a malformed one is refused naming the header."""

import httpx

from tests.api.wire import append, new_session, user


async def test_without_replicas_a_write_answers_no_token(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1")
    appended = await append(client, "s1", user("hello", id="m1"))
    assert appended.status_code == 201
    assert "projector-consistency" not in appended.headers


async def test_without_replicas_a_read_with_a_token_is_served_by_the_primary(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1")
    await append(client, "s1", user("hello", id="m1"))
    page = await client.get("/sessions/s1/messages", headers={"Projector-Consistency": "FFFFFFFF/0"})
    assert [message["id"] for message in page.json()["messages"]] == ["m1"]


async def test_a_malformed_token_is_a_400_naming_the_header(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions", headers={"Projector-Consistency": "yesterday"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["field"] == "Projector-Consistency"
    assert problem["type"].endswith("/bad-request")
