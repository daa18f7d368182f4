"""``GET /sessions/{id}/archive`` and ``POST /sessions/import?format=projector``: a session moved to another
id (or service) comes back as it was: ids, order, kinds, content, metadata, runs and the views built on them."""

from typing import Any

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from app import lossless_json
from app.api.auth import DEFAULT_TENANT
from app.main import create_app
from app.services import archive
from tests.api.wire import append, assistant, every_kind, new_session, tool_call, tool_result, user
from tests.conftest import settings_for_tests

pytestmark = pytest.mark.db

RUN = {
    "id": "run-1",
    "agent": "build",
    "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
    "system": "Be brief.",
    "tools": [{"name": "bash", "description": "Run a command", "inputSchema": {"type": "object"}}],
    "variant": "high",
    "metadata": {"step": 1.0, "big": 1e16},
}
UNUSUAL = "NUL \u0000, a lone \ud800, astral \U0001f600, 0.1 + 0.2"


async def archived(client: httpx.AsyncClient, session_id: str) -> bytes:
    response = await client.get(f"/sessions/{session_id}/archive")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return response.content


async def imported(client: httpx.AsyncClient, data: bytes, **params: Any) -> httpx.Response:
    return await client.post(
        "/sessions/import",
        params={"format": "projector", **params},
        content=data,
        headers={"content-type": "application/x-ndjson"},
    )


async def everything(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    """What a reader of the session sees, less what names the session itself, when it was created and when it
    and its runs were last changed (an import creates them)."""
    session = (await client.get(f"/sessions/{session_id}")).json()
    messages = (await client.get(f"/sessions/{session_id}/messages", params={"limit": 500})).json()["messages"]
    runs = (await client.get(f"/sessions/{session_id}/runs")).json()["runs"]
    model = (await client.get(f"/sessions/{session_id}/projection", params={"view": "model"})).json()
    for row in [session, *runs]:
        for key in ("id", "createdAt", "updatedAt") if row is session else ("sessionId", "updatedAt"):
            row.pop(key)
    for message in messages:
        message.pop("sessionId")
    return {"session": session, "messages": messages, "runs": runs, "model": model["messages"]}


async def test_a_session_archived_and_imported_under_another_id_is_the_same_session(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client, title="Fix the build", model="anthropic/claude-sonnet-4-5", contextWindowTokens=90_000)
    assert (await client.post("/sessions/s1/runs", json=RUN)).status_code == 201
    assert (await client.patch("/sessions/s1/runs/run-1", json={"usage": {"outputTokens": 7}})).status_code == 200
    for later in ("zeta", "alpha"):  # listed by creation, not by id
        assert (await client.post("/sessions/s1/runs", json={"id": later})).status_code == 201
    await append(client, "s1", *every_kind())
    batch = [
        {**user(UNUSUAL, id="u-odd"), "runId": "run-1", "metadata": {"float": 1e16, "tiny": 5e-324}},
        {**tool_call("c9", "bash", id="a9", command="make"), "runId": "run-1"},
        tool_result("c9", "bash", "x" * 3_000, id="t9"),
        assistant("done", id="d9", provider="anthropic", model="claude-sonnet-4-5"),
    ]
    body = lossless_json.dumps({"messages": batch})  # the lone surrogate as the escape a runtime sends
    sent = await client.post("/sessions/s1/messages", content=body, headers={"content-type": "application/json"})
    assert sent.status_code == 201, sent.text
    amended = await client.patch("/sessions/s1/messages/t9", json={"metadata": {"compactedAt": 1_700_000_000_000}})
    assert amended.status_code == 200, amended.text
    data = await archived(client, "s1")
    first = await imported(client, data, sessionId="copy")
    assert first.status_code == 201, first.text
    [outcome] = first.json()["sessions"]
    assert (outcome["id"], outcome["created"], outcome["refused"], outcome["runsCreated"]) == (
        "copy",
        True,
        [],
        ["run-1", "zeta", "alpha"],
    )
    assert await everything(client, "copy") == await everything(client, "s1")
    again = await imported(client, data, sessionId="copy")
    assert again.status_code == 200
    [repeated] = again.json()["sessions"]
    assert (repeated["stored"], repeated["runsCreated"], repeated["runsChanged"], repeated["changed"]) == (
        0,
        [],
        [],
        [],
    )
    changed = data.replace(b'"agent":"build"', b'"agent":"plan"', 1)
    assert changed != data
    [differing] = (await imported(client, changed, sessionId="copy")).json()["sessions"]
    assert differing["runsChanged"] == ["run-1"]
    assert (await client.get("/sessions/copy/runs/run-1")).json()["agent"] == "build"


async def test_an_archive_holds_the_messages_there_were_when_it_was_asked(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"m{n}", id=f"m{n}") for n in range(3)))
    lines = [orjson.loads(line) for line in (await archived(client, "s1")).splitlines()]
    assert [line["type"] for line in lines] == ["session", "message", "message", "message", "end"]
    assert lines[-1] == {"type": "end", "runs": 0, "messages": 3}
    assert lines[0]["format"] == "projector-archive" and lines[0]["version"] == 1
    assert [line["seq"] for line in lines[1:-1]] == [1, 2, 3]


async def test_the_archive_of_a_session_that_does_not_exist_is_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions/nope/archive")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    "data",
    [
        b'{"type": "message", "id": "m1", "role": "user", "content": "hi"}\n',
        b'{"type": "session", "format": "projector-archive", "version": 2, "id": "s"}\n',
    ],
)
async def test_a_file_that_is_no_archive_of_this_version_is_refused(client: httpx.AsyncClient, data: bytes) -> None:
    response = await imported(client, data)
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "body"


async def test_an_archive_longer_than_a_page_holds_every_run_and_message_in_order(database_url: str) -> None:
    app = create_app(settings_for_tests(max_page_size=2, default_page_size=2), database_url=database_url)
    transport = httpx.ASGITransport(app=app)
    async with LifespanManager(app), httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        await new_session(client)
        for n in range(5):
            assert (await client.post("/sessions/s1/runs", json={"id": f"r{n}"})).status_code == 201
        await append(client, "s1", *(user(f"m{n}", id=f"m{n}") for n in range(7)))
        lines = [orjson.loads(line) for line in (await archived(client, "s1")).splitlines()]
        await client.delete("/sessions/s1")
    assert [line.get("id") for line in lines] == [
        "s1",
        *(f"r{n}" for n in range(5)),
        *(f"m{n}" for n in range(7)),
        None,
    ]
    assert lines[-1] == {"type": "end", "runs": 5, "messages": 7}


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda lines: lines[:-1], id="without its end line"),
        pytest.param(lambda lines: lines[:3] + lines[-1:], id="messages missing before its end line"),
        pytest.param(lambda lines: [*lines[:-1], lines[-1][:-20]], id="its last line unfinished"),
    ],
)
async def test_an_archive_cut_short_is_refused_whole(client: httpx.AsyncClient, cut: Any) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"m{n}", id=f"m{n}") for n in range(5)))
    lines = (await archived(client, "s1")).splitlines()
    for strict in ("false", "true"):
        response = await imported(client, b"\n".join(cut(lines)), sessionId="copy", strict=strict)
        assert response.status_code == 422, response.text
        assert "cut short" in response.json()["detail"]
    assert (await client.get("/sessions/copy")).status_code == 404


async def test_an_archive_stops_at_the_last_message_there_was_when_it_was_asked(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"m{n}", id=f"m{n}") for n in range(3)))
    settings = app.state.settings.model_copy(update={"max_page_size": 2, "default_page_size": 2})
    opened = await archive.open_archive(app.state.database, settings, DEFAULT_TENANT, "s1")
    pages = [await anext(opened.pages) for _ in range(2)]  # the runs' page, then the first messages' page
    await append(client, "s1", *(user(f"late{n}", id=f"late{n}") for n in range(3)))
    pages += [page async for page in opened.pages]
    assert [row.id for page in pages for row in page] == ["m0", "m1", "m2"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("contextWindowTokens", 2**31),
        ("contextWindowTokens", -5),
        ("title", "t" * 100_000),
        ("model", {"providerID": [1], "modelID": {}}),
    ],
)
async def test_an_archived_session_is_held_to_the_checks_of_creating_one(
    client: httpx.AsyncClient, field: str, value: object
) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="m1"))
    lines = [orjson.loads(line) for line in (await archived(client, "s1")).splitlines()]
    lines[0][field] = value
    response = await imported(client, b"\n".join(orjson.dumps(line) for line in lines), sessionId="copy")
    assert response.status_code == 422, response.text
    assert response.json()["field"].startswith(f"session.{field}")
    assert (await client.get("/sessions/copy")).status_code == 404


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [
        pytest.param(2, "createdAt", "yesterday", id="a run created at no time"),
        pytest.param(3, "runId", 5, id="a message naming a run by a number"),
        pytest.param(3, "createdAt", 1_700_000_000, id="a message written at a number"),
        pytest.param(3, "metadata", ["pinned"], id="a message whose metadata is a list"),
    ],
)
async def test_an_archived_field_the_service_would_not_write_refuses_the_archive_naming_its_line(
    client: httpx.AsyncClient, line: int, field: str, value: object
) -> None:
    await new_session(client)
    assert (await client.post("/sessions/s1/runs", json={"id": "r1"})).status_code == 201
    await append(client, "s1", {**user("hi", id="m1"), "runId": "r1"})
    lines = [orjson.loads(text) for text in (await archived(client, "s1")).splitlines()]
    lines[line - 1][field] = value
    for strict in ("false", "true"):
        response = await imported(client, b"\n".join(orjson.dumps(x) for x in lines), sessionId="copy", strict=strict)
        assert response.status_code == 422, response.text
        assert response.json()["detail"].startswith(f"line {line}: ")
        assert field in response.json()["detail"]
    assert (await client.get("/sessions/copy")).status_code == 404
