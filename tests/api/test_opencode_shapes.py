"""opencode's own shapes written through the API: its summaries compact the history, its times are epoch
milliseconds, and what it records of a turn (cost, path, error, structured output) comes back unchanged."""

from typing import Any

import httpx
import pytest

from tests.api.wire import append, assistant, new_session, runtime, user

OPENCODE_SUMMARY_MARKS = [{"summary": True}, {"result": {"kind": "summary", "finish": "stop"}}]


@pytest.mark.parametrize("mark", OPENCODE_SUMMARY_MARKS)
async def test_an_assistant_summary_answering_a_compaction_request_compacts_the_history(
    client: httpx.AsyncClient, mark: dict[str, Any]
) -> None:
    await new_session(client)
    await append(
        client,
        "s1",
        user("Fix the login bug.", id="u1"),
        assistant("I changed auth.ts.", id="a1"),
        runtime("compact_boundary", "What did we do so far?", "c1", role="user"),
        assistant("We fixed the login bug in auth.ts.", id="s1-summary", parentID="c1", **mark),
        user("Now add a test.", id="u2"),
    )
    stored = (await client.get("/sessions/s1/messages/s1-summary")).json()
    assert stored["kind"] == "compact_summary"
    view = (await client.get("/sessions/s1/projection", params={"view": "model"})).json()
    assert view["diagnostics"]["appliedCompactBoundaryId"] == "c1"
    assert [m["sourceMessageIds"] for m in view["messages"]] == [["s1-summary"], ["u2"]]
    assert "We fixed the login bug" in view["messages"][0]["content"]
    context = (await client.get("/sessions/s1/context")).json()
    assert context["appliedCompactBoundaryId"] == "c1"


async def test_numeric_times_are_epoch_milliseconds_and_the_time_object_is_kept(client: httpx.AsyncClient) -> None:
    await new_session(client)
    time = {"created": 1_764_000_000_000, "completed": 1_764_000_004_000}
    messages = [
        {**user("Hi"), "id": "m1", "time": time},
        {**user("Again"), "id": "m2", "createdAt": 1_764_000_000_000},
    ]
    response = await append(client, "s1", *messages)
    assert response.status_code == 201, response.text
    first, second = response.json()["messages"]
    assert first["createdAt"] == second["createdAt"] == "2025-11-24T16:00:00+00:00"
    assert first["metadata"] == {"time": time}
    conflicting = {**user("x"), "time": {"created": 1_764_000_000_000}, "createdAt": "2020-01-01T00:00:00Z"}
    assert (await append(client, "s1", conflicting)).status_code == 422
    assert (await append(client, "s1", {**user("x"), "time": {"completed": 1}})).status_code == 422


async def test_cost_path_error_and_structured_output_come_back_unchanged(client: httpx.AsyncClient) -> None:
    await new_session(client)
    recorded = {
        "provider": "anthropic",
        "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
        "cost": 0.0123,
        "path": {"cwd": "/repo/app", "root": "/repo"},
        "error": {"name": "MessageOutputLengthError", "data": {"message": "too long"}},
        "finishReason": "length",
        "structured": {"answer": "yes", "confidence": 0.9},
    }
    await append(client, "s1", user("Is it done?"), assistant("yes", id="a1", **recorded))
    assert (await client.get("/sessions/s1/messages/a1")).json()["metadata"] == recorded
    run = {"id": "r1", "agent": "build", "metadata": {"path": {"cwd": "/repo/app", "root": "/repo"}}}
    await client.post("/sessions/s1/runs", json=run)
    ended = {
        "usage": {"cost": 0.0123, "tokens": {"input": 1200, "output": 80}},
        "result": {"kind": "reply", "finish": "stop", "structured": {"answer": "yes"}},
    }
    patched = await client.patch("/sessions/s1/runs/r1", json=ended)
    assert {key: patched.json()[key] for key in ("usage", "result", "metadata")} == {
        **ended,
        "metadata": run["metadata"],
    }
