import httpx

from tests.api.wire import append, new_session, user


async def test_create_session_returns_it_with_no_messages(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/sessions",
        json={
            "id": "s1",
            "title": "Fix the build",
            "model": "anthropic/claude-sonnet-4",
            "contextWindowTokens": 200000,
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert body["id"] == "s1"
    assert body["title"] == "Fix the build"
    assert body["model"] == "anthropic/claude-sonnet-4"
    assert body["contextWindowTokens"] == 200000
    assert body["lastSeq"] == 0
    assert body["messageCount"] == 0
    assert response.headers["location"] == "/sessions/s1"


async def test_create_session_without_id_gets_a_server_id(client: httpx.AsyncClient) -> None:
    response = await client.post("/sessions", json={})
    assert response.status_code == 201
    assert response.json()["id"].startswith("ses_")


async def test_creating_a_taken_session_id_with_other_fields_is_409(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1", title="Fix the build")
    response = await client.post("/sessions", json={"id": "s1", "title": "Another"})
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == "id"


async def test_creating_a_session_again_with_the_same_fields_answers_200_with_the_stored_one(
    client: httpx.AsyncClient,
) -> None:
    """A runtime whose connection dropped after the session was created retries, and learns that it landed."""
    fields = {
        "id": "s1",
        "title": "Fix the build",
        "metadata": {"cwd": "/repo", "n": 1.0},
        "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
        "contextWindowTokens": 200_000,
    }
    first = await client.post("/sessions", json=fields)
    assert first.status_code == 201, first.text
    again = await client.post("/sessions", json={**fields, "metadata": {"n": 1.0, "cwd": "/repo"}})
    assert again.status_code == 200, again.text
    assert again.json() == first.json()
    for changed in ({"metadata": {"cwd": "/repo", "n": 1}}, {"contextWindowTokens": 100_000}, {"model": None}):
        assert (await client.post("/sessions", json={**fields, **changed})).status_code == 409, changed


async def test_session_reports_last_seq_and_message_count(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1")
    await append(client, "s1", user("a"), user("b"), user("c"))
    body = (await client.get("/sessions/s1")).json()
    assert body["lastSeq"] == 3
    assert body["messageCount"] == 3


async def test_unknown_session_is_404_problem(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions/nope")
    assert response.status_code == 404
    problem = response.json()
    assert problem["type"].endswith("/not-found")
    assert problem["status"] == 404
    assert "nope" in problem["detail"]


async def test_delete_session_removes_it_and_its_messages(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1")
    await append(client, "s1", user("a"))
    assert (await client.delete("/sessions/s1")).status_code == 204
    assert (await client.get("/sessions/s1")).status_code == 404
    assert (await client.get("/sessions/s1/messages")).status_code == 404
    assert (await client.delete("/sessions/s1")).status_code == 404


async def test_session_list_pages_with_a_cursor_newest_first(client: httpx.AsyncClient) -> None:
    for index in range(5):
        await new_session(client, f"s{index}")
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/sessions", params=params)).json()
        seen += [session["id"] for session in page["sessions"]]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert seen == ["s4", "s3", "s2", "s1", "s0"]


async def test_session_list_ascending_order(client: httpx.AsyncClient) -> None:
    for index in range(3):
        await new_session(client, f"s{index}")
    page = (await client.get("/sessions", params={"order": "asc"})).json()
    assert [session["id"] for session in page["sessions"]] == ["s0", "s1", "s2"]
    assert page["hasMore"] is False
