"""Appending: atomic batches, gap-free seq, idempotent retries, conflicts."""

import asyncio
from typing import Any

import httpx

from tests.api.wire import append, assistant, new_session, stored_count, tool_call, tool_result, user


async def test_first_message_of_a_session_has_seq_1_and_batches_keep_request_order(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await append(client, "s1", user("hi", id="m1"), tool_call("c1", "Read", path="a.ts"), user("more"))
    assert response.status_code == 201
    stored = response.json()["messages"]
    assert [message["seq"] for message in stored] == [1, 2, 3]
    assert stored[0]["id"] == "m1"
    assert stored[1]["kind"] == "tool_call"
    assert stored[2]["id"].startswith("msg_")
    assert all(message["sessionId"] == "s1" for message in stored)


async def test_stored_message_keeps_content_and_metadata_exactly(client: httpx.AsyncClient) -> None:
    await new_session(client)
    parts: list[dict[str, Any]] = [
        {"type": "reasoning", "text": "think", "providerOptions": {"anthropic": {"signature": "sig=="}}},
        {"type": "text", "text": "done"},
    ]
    message = assistant(parts, id="a1", provider="anthropic", model="claude-sonnet-4", usage={"inputTokens": 10})
    await append(client, "s1", message)
    stored = (await client.get("/sessions/s1/messages/a1")).json()
    assert stored["content"] == parts
    assert stored["metadata"] == {"provider": "anthropic", "model": "claude-sonnet-4", "usage": {"inputTokens": 10}}
    assert stored["tokenEstimate"] > 0


async def test_retrying_the_same_batch_returns_the_stored_messages_and_writes_nothing(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    batch = [user("hi", id="m1"), assistant("hello", id="m2")]
    first = await append(client, "s1", *batch)
    retry = await append(client, "s1", *batch)
    assert first.status_code == 201
    assert retry.status_code == 200
    assert retry.json() == first.json()
    assert await stored_count(client, "s1") == 2


async def test_a_batch_mixing_stored_and_new_ids_stores_only_the_new_ones(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1"))
    response = await append(client, "s1", user("hi", id="m1"), user("next", id="m2"))
    assert response.status_code == 201
    assert [(m["id"], m["seq"]) for m in response.json()["messages"]] == [("m1", 1), ("m2", 2)]


async def test_same_id_with_different_content_is_409_and_stores_nothing(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1"))
    response = await append(client, "s1", user("new", id="m2"), user("changed", id="m1"))
    assert response.status_code == 409
    problem = response.json()
    assert problem["type"].endswith("/message-conflict")
    assert problem["field"] == "messages[1].id"
    assert await stored_count(client, "s1") == 1


async def test_a_retry_whose_input_differs_only_in_json_type_is_409(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", tool_call("c1", "Deploy", id="m1", force=True))
    for other in (1, 1.0, "true"):
        response = await append(client, "s1", tool_call("c1", "Deploy", id="m1", force=other))
        assert response.status_code == 409, other
    assert (await client.get("/sessions/s1/messages/m1")).json()["content"][0]["input"] == {"force": True}


async def test_retry_after_a_metadata_amendment_is_still_the_same_message(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", tool_call("c1", "Read", id="m1"), tool_result("c1", "Read", "text", id="m2"))
    await client.patch("/sessions/s1/messages/m2", json={"metadata": {"compactedAt": "2026-11-29T00:00:00Z"}})
    retry = await append(client, "s1", tool_call("c1", "Read", id="m1"), tool_result("c1", "Read", "text", id="m2"))
    assert retry.status_code == 200


async def test_duplicate_id_within_a_batch_with_other_content_is_422(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await append(client, "s1", user("a", id="m1"), user("b", id="m1"))
    assert response.status_code == 422
    assert response.json()["field"] == "messages[1].id"
    assert await stored_count(client, "s1") == 0


async def test_duplicate_id_within_a_batch_differing_only_in_json_type_is_422(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await append(
        client, "s1", tool_call("c1", "Deploy", id="m1", force=True), tool_call("c1", "Deploy", id="m1", force=1)
    )
    assert response.status_code == 422
    assert response.json()["field"] == "messages[1].id"
    assert await stored_count(client, "s1") == 0


async def test_duplicate_id_within_a_batch_with_the_same_content_is_stored_once(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await append(client, "s1", user("a", id="m1"), user("a", id="m1"))
    assert response.status_code == 201
    assert [m["seq"] for m in response.json()["messages"]] == [1, 1]
    assert await stored_count(client, "s1") == 1


async def test_appending_to_an_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    response = await append(client, "missing", user("hi"))
    assert response.status_code == 404


async def test_fifty_concurrent_appends_get_seq_1_to_50_exactly(client: httpx.AsyncClient) -> None:
    await new_session(client)
    responses = await asyncio.gather(*(append(client, "s1", user(f"m{index}", id=f"m{index}")) for index in range(50)))
    assert all(response.status_code == 201 for response in responses)
    seqs = sorted(response.json()["messages"][0]["seq"] for response in responses)
    assert seqs == list(range(1, 51))
    listed = (await client.get("/sessions/s1/messages", params={"limit": 500})).json()["messages"]
    assert [message["seq"] for message in listed] == list(range(1, 51))
    assert len({message["id"] for message in listed}) == 50


async def test_concurrent_retries_of_one_message_store_it_once(client: httpx.AsyncClient) -> None:
    await new_session(client)
    responses = await asyncio.gather(*(append(client, "s1", user("once", id="m1")) for _ in range(10)))
    assert sorted(response.status_code for response in responses) == [200] * 9 + [201]
    assert await stored_count(client, "s1") == 1


async def test_appends_to_different_sessions_each_start_at_seq_1(client: httpx.AsyncClient) -> None:
    await new_session(client, "a")
    await new_session(client, "b")
    first_a, first_b = await asyncio.gather(append(client, "a", user("x")), append(client, "b", user("y")))
    assert first_a.json()["messages"][0]["seq"] == 1
    assert first_b.json()["messages"][0]["seq"] == 1
