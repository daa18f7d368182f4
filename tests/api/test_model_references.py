"""Model references read one way everywhere: ``provider/modelId``, a bare id or opencode's object, on sessions,
runs and message metadata; a run's model stands in for the producer of the assistant messages it holds, for
the reasoning rule and the usage rule alike."""

from typing import Any

import httpx
import pytest

from tests.api.wire import append, assistant, new_session, user
from tests.providers.payload_check import problems

SONNET = "claude-sonnet-4-5"
OPENCODE_SONNET = {"providerID": "anthropic", "modelID": SONNET}
SIGNED = {"type": "reasoning", "text": "Check the log.", "providerOptions": {"anthropic": {"signature": "sig=="}}}


def in_run(message: dict[str, Any], run_id: str) -> dict[str, Any]:
    return {**message, "runId": run_id}


async def run(client: httpx.AsyncClient, run_id: str, **fields: Any) -> dict[str, Any]:
    response = await client.post("/sessions/s1/runs", json={"id": run_id, **fields})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


@pytest.mark.parametrize("reference", [f"anthropic/{SONNET}", SONNET, OPENCODE_SONNET])
async def test_the_usage_of_a_runs_answer_counts_for_the_runs_model_however_it_is_written(
    client: httpx.AsyncClient, reference: Any
) -> None:
    await new_session(client, model=f"anthropic/{SONNET}")
    await run(client, "r1", model=reference)
    answer = in_run(assistant("Done.", id="a1", usage={"totalTokens": 5000}), "r1")
    await append(client, "s1", user("Go"), answer, user("And now?"))
    report = (await client.get("/sessions/s1/context")).json()
    assert (report["basis"], report["usage"]["messageId"]) == ("usage", "a1")


@pytest.mark.parametrize(
    ("reference", "metadata"),
    [(f"anthropic/{SONNET}", {}), (OPENCODE_SONNET, {}), (SONNET, {"provider": "anthropic"})],
)
async def test_a_runs_model_makes_the_reasoning_it_produced_native_for_that_model(
    client: httpx.AsyncClient, reference: Any, metadata: dict[str, Any]
) -> None:
    await new_session(client)
    await run(client, "r1", model=reference)
    answer = in_run(assistant([SIGNED, {"type": "text", "text": "Found it."}], id="a1", **metadata), "r1")
    await append(client, "s1", user("Why?"), answer, user("Thanks"))
    body = (await client.post("/chat", json={"sessionId": "s1", "provider": "anthropic", "model": SONNET})).json()
    turn = body["payload"]["messages"][1]["content"]
    assert turn[0] == {"type": "thinking", "thinking": "Check the log.", "signature": "sig=="}
    assert problems("anthropic", body["payload"]) == []


async def test_a_run_created_after_its_messages_changes_the_cached_model_view(client: httpx.AsyncClient) -> None:
    await new_session(client)
    answer = in_run(assistant([SIGNED, {"type": "text", "text": "Found it."}]), "r1")
    await append(client, "s1", user("Why?"), answer)
    params = {"view": "model", "provider": "anthropic", "model": SONNET}
    before = await client.get("/sessions/s1/projection", params=params)
    await run(client, "r1", model=f"anthropic/{SONNET}")
    after = await client.get(
        "/sessions/s1/projection", params=params, headers={"If-None-Match": before.headers["etag"]}
    )
    assert after.status_code == 200
    assert after.json()["messages"][1]["content"][0] == SIGNED


async def test_opencode_model_objects_round_trip_on_sessions_and_runs(client: httpx.AsyncClient) -> None:
    with_variant = {**OPENCODE_SONNET, "variant": "high"}
    created = await client.post("/sessions", json={"id": "s1", "model": with_variant})
    assert created.status_code == 201, created.text
    assert list((await client.get("/sessions/s1")).json()["model"].items()) == list(with_variant.items())
    assert list((await run(client, "r1", model=OPENCODE_SONNET))["model"].items()) == list(OPENCODE_SONNET.items())
    assert list((await client.get("/sessions/s1/runs/r1")).json()["model"].items()) == list(OPENCODE_SONNET.items())
    refused = await client.post("/sessions/s1/runs", json={"id": "r2", "model": {"providerID": "anthropic"}})
    assert refused.status_code == 422


async def test_an_opencode_model_object_supplies_the_chat_model_for_each_kind_of_target(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client, model={**OPENCODE_SONNET, "variant": "high"})
    await append(client, "s1", user("Hi"))
    native = (await client.post("/chat", json={"sessionId": "s1", "provider": "anthropic"})).json()
    assert native["model"] == SONNET
    sdk = (await client.post("/chat", json={"sessionId": "s1", "provider": "ai-sdk"})).json()
    assert sdk["model"] == f"anthropic/{SONNET}"
    await run(client, "r1", model={**OPENCODE_SONNET, "variant": "high"})
    thinking = (await client.post("/chat", json={"sessionId": "s1", "provider": "anthropic", "runId": "r1"})).json()
    assert thinking["payload"]["thinking"] == {"type": "enabled", "budget_tokens": 16_000}
