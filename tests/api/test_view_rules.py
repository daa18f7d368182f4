"""The view rules over HTTP: flags, summaries, switch markers and the soft limit, as a client sees them."""

from typing import Any

import httpx
import pytest

from tests.api.wire import append, boundary, new_session, runtime, summary, tool_call, tool_result, user


async def model_view(client: httpx.AsyncClient, **params: str) -> dict[str, Any]:
    response = await client.get("/sessions/s1/projection", params={"view": "model", **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_soft_limit_of_zero_never_cuts_a_tool_result(client: httpx.AsyncClient) -> None:
    await new_session(client)
    long_output = "x" * 60_000
    await append(client, "s1", user("read"), tool_call("c1", "read", id="t1"), tool_result("c1", "read", long_output))
    cut = await model_view(client)
    assert long_output not in str(cut["messages"])
    whole = await model_view(client, toolResultSoftLimitChars="0")
    assert long_output in str(whole["messages"])
    assert whole["diagnostics"]["truncatedMessageIds"] == []
    chat = await client.post(
        "/chat",
        json={
            "sessionId": "s1",
            "provider": "openai",
            "model": "gpt-4.1",
            "projection": {"toolResultSoftLimitChars": 0},
        },
    )
    assert chat.status_code == 200, chat.text
    assert long_output in str(chat.json()["payload"]["messages"])


def sources(view: dict[str, Any]) -> list[str]:
    return [source for message in view["messages"] for source in message["sourceMessageIds"]]


async def test_a_summary_not_eligible_for_the_model_is_never_sent_and_never_replaces_history(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await append(client, "s1", user("first", id="u1"), boundary("b1"), summary("b1", "Earlier: first.", id="sum1"))
    await append(client, "s1", user("second", id="u2"), boundary("b2"))
    await append(
        client,
        "s1",
        runtime(
            "compact_summary",
            "Earlier: a rejected summary.",
            "sum2",
            summaryForBoundaryId="b2",
            eligibleForModelContext=False,
        ),
        user("third", id="u3"),
    )
    view = await model_view(client)
    assert "sum2" not in sources(view)
    assert "rejected" not in str(view["messages"])
    assert view["diagnostics"]["appliedCompactBoundaryId"] == "b1"
    assert sources(view) == ["sum1", "u2", "u3"]

    flagged = await client.patch("/sessions/s1/messages/sum1", json={"metadata": {"eligibleForModelContext": False}})
    assert flagged.status_code == 200, flagged.text
    view = await model_view(client)
    assert view["diagnostics"]["appliedCompactBoundaryId"] is None
    assert sources(view) == ["u1", "u2", "u3"]


async def test_a_model_switch_marker_is_a_runtime_fact_the_model_never_sees(client: httpx.AsyncClient) -> None:
    await new_session(client)
    marker = runtime("model_switch_note", "Model changed to openai/gpt-5", "sw1", provider="openai", model="gpt-5")
    stored = await append(client, "s1", user("hi", id="u1"), marker, user("go on", id="u2"))
    assert stored.status_code == 201, stored.text
    assert stored.json()["messages"][1]["kind"] == "model_switch_note"
    view = await model_view(client)
    assert sources(view) == ["u1", "u2"]
    assert "gpt-5" not in str(view["messages"])
    transcript = (await client.get("/sessions/s1/projection", params={"view": "transcript"})).json()
    assert "sw1" in sources(transcript)
    chat = await client.post("/chat", json={"sessionId": "s1", "provider": "anthropic", "model": "claude-sonnet-4-5"})
    assert "Model changed" not in str(chat.json()["payload"])


def custom(text: str, id: str, **metadata: object) -> dict[str, Any]:
    return {"id": id, "role": "user", "content": text, "metadata": {"runtimeKind": "custom", **metadata}}


def bash_run(command: str, id: str, **metadata: object) -> dict[str, Any]:
    facts = {"runtimeKind": "bash_execution", "command": command, "output": "ok", "exitCode": 0, **metadata}
    return {"id": id, "role": "user", "content": command, "metadata": facts}


async def test_each_display_flag_hides_a_message_from_exactly_one_view(client: httpx.AsyncClient) -> None:
    await new_session(client)
    stored = await append(
        client,
        "s1",
        user("start", id="u1"),
        custom("not shown in the UI", "hidden-ui", customType="note", display=False),
        custom("kept from the model", "excluded", customType="note", excludeFromContext=True),
        custom("a card for the UI", "card", customType="card", displayOnly=True),
        bash_run("cat .env", "bash-excluded", excludeFromContext=True),
        user("not for the reader", id="invisible", visibleInTranscript=False),
        user("not for the model", id="ineligible", eligibleForModelContext=False),
        custom("shown everywhere", "shown", customType="note", display=True),
    )
    assert stored.status_code == 201, stored.text
    model = sources(await model_view(client))
    transcript = (await client.get("/sessions/s1/projection", params={"view": "transcript"})).json()
    shown = sources(transcript)
    only_transcript = {"excluded", "card", "bash-excluded", "ineligible"}
    only_model = {"hidden-ui", "invisible"}
    assert set(model) == {"u1", "shown", *only_model}
    assert set(shown) == {"u1", "shown", *only_transcript}
    assert set(transcript["diagnostics"]["hiddenMessageIds"]) == only_model
    debug = (await client.get("/sessions/s1/projection", params={"view": "debug"})).json()
    flags = {
        m["sourceMessageIds"][0]: (m["metadata"]["hiddenFromModel"], m["metadata"]["hiddenFromTranscript"])
        for m in debug["messages"]
    }
    assert {id_ for id_, (from_model, _) in flags.items() if from_model} == only_transcript
    assert {id_ for id_, (_, from_transcript) in flags.items() if from_transcript} == only_model


async def test_active_agent_name_is_refused_rather_than_accepted_and_ignored(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hi", id="u1"))
    response = await client.get("/sessions/s1/projection", params={"view": "model", "activeAgentName": "build"})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "activeAgentName"
    chat = await client.post(
        "/chat",
        json={"sessionId": "s1", "provider": "openai", "model": "gpt-4.1", "projection": {"activeAgentName": "x"}},
    )
    assert chat.status_code == 422, chat.text
    assert "activeAgentName" in chat.json()["errors"][0]["field"]
    named = await client.post(
        "/chat", json={"sessionId": "s1", "provider": "openai", "model": "gpt-4.1", "agent": "plan"}
    )
    assert named.json()["agent"] == "plan"


async def debug_pages(client: httpx.AsyncClient, limit: int) -> list[dict[str, Any]]:
    """Every debug record of session s1, walked page by page."""
    records: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = {"view": "debug", "limit": str(limit), **({"after": cursor} if cursor else {})}
        page = (await client.get("/sessions/s1/projection", params=params)).json()
        records += page["messages"]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            return records


async def test_every_debug_page_says_what_the_model_sees_of_its_messages(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"old {n}", id=f"o{n}") for n in range(4)))
    await append(client, "s1", boundary("b1"), summary("b1", "Earlier: four questions.", id="sum1"))
    await append(client, "s1", user("read it", id="n1"), tool_call("c1", "read", id="t1"))
    await append(client, "s1", tool_result("c1", "read", "contents", id="t2"), user("thanks", id="n2"))
    model = await model_view(client)
    sent = set(sources(model))
    order = ["o0", "o1", "o2", "o3", "b1", "sum1", "n1", "t1", "t2", "n2"]
    for limit in (2, 3, 5, 100):
        records = await debug_pages(client, limit)
        assert [r["sourceMessageIds"][0] for r in records] == order
        hidden = {r["sourceMessageIds"][0] for r in records if r["metadata"]["hiddenFromModel"]}
        assert hidden == {"o0", "o1", "o2", "o3", "b1"}, limit
        assert sent == {r["sourceMessageIds"][0] for r in records} - hidden
    first = (await client.get("/sessions/s1/projection", params={"view": "debug", "limit": "2"})).json()
    assert first["diagnostics"]["hiddenMessageIds"] == ["o0", "o1"]
    assert "model: before the compaction window of boundary b1" in first["messages"][0]["metadata"]["notes"]


async def test_a_summary_may_name_its_boundary_with_compact_boundary_id(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("old", id="u1"), boundary("b1"))
    await append(client, "s1", runtime("compact_summary", "Earlier: old.", "sum1", compactBoundaryId="b1"))
    await append(client, "s1", user("new", id="u2"))
    view = await model_view(client)
    assert view["diagnostics"]["appliedCompactBoundaryId"] == "b1"
    assert sources(view) == ["sum1", "u2"]


async def test_export_options_on_another_view_are_refused_rather_than_ignored(client: httpx.AsyncClient) -> None:
    await new_session(client)
    for view in ("transcript", "model", "compact", "debug"):
        for param, value in (("redact", "true"), ("format", "markdown")):
            response = await client.get("/sessions/s1/projection", params={"view": view, param: value})
            assert response.status_code == 422, (view, param)
            assert response.json()["errors"][0]["field"] == param
    exported = await client.get("/sessions/s1/projection", params={"view": "export", "redact": "true"})
    assert exported.status_code == 200
    chat = await client.post(
        "/chat", json={"sessionId": "s1", "provider": "openai", "model": "gpt-4.1", "projection": {"redact": True}}
    )
    assert chat.status_code == 422


async def test_paging_the_whole_window_views_is_refused_rather_than_ignored(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", user("hello", id="u1"))
    for view in ("model", "compact"):
        for param, value in (("limit", "1"), ("after", "1"), ("before", "1"), ("order", "desc")):
            response = await client.get("/sessions/s1/projection", params={"view": view, param: value})
            assert response.status_code == 422, (view, param)
            assert response.json()["errors"][0]["field"] == param
        assert (await client.get("/sessions/s1/projection", params={"view": view, "order": "asc"})).status_code == 200
    paged = await client.get("/sessions/s1/projection", params={"view": "transcript", "limit": "1", "order": "desc"})
    assert paged.status_code == 200


SCREENSHOT = {"type": "image", "image": "iVBORw0KGgo=", "mediaType": "image/png"}


async def test_an_image_sent_to_a_model_that_reads_only_text_becomes_explicit_text(client: httpx.AsyncClient) -> None:
    """The catalog lists o3-mini as reading text only, and OpenAI refuses a request holding an image for it."""
    await new_session(client)
    await append(client, "s1", {"id": "u1", "role": "user", "content": [{"type": "text", "text": "look"}, SCREENSHOT]})
    chat = await client.post("/chat", json={"sessionId": "s1", "provider": "openai", "model": "o3-mini"})
    assert chat.status_code == 200, chat.text
    sent = chat.json()["payload"]["messages"][0]["content"]
    assert [part["type"] for part in sent] == ["text", "text"]
    assert "Cannot read the attached image" in sent[1]["text"]
    viewed = await model_view(client, provider="openai", model="o3-mini")
    assert viewed["messages"][0]["content"][1]["type"] == "text"
    context = await client.get("/sessions/s1/context", params={"provider": "openai", "model": "o3-mini"})
    assert context.status_code == 200, context.text
    assert context.json()["estimatedTokens"] == chat.json()["context"]["estimatedTokens"]


async def test_an_image_goes_to_a_model_that_reads_images_and_the_request_may_say_otherwise(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await append(client, "s1", {"id": "u1", "role": "user", "content": [{"type": "text", "text": "look"}, SCREENSHOT]})
    ask = {"sessionId": "s1", "provider": "openai", "model": "gpt-4o"}
    chat = await client.post("/chat", json=ask)
    assert [part["type"] for part in chat.json()["payload"]["messages"][0]["content"]] == ["text", "image_url"]
    told = await client.post("/chat", json={**ask, "model": "o3-mini", "projection": {"readableMedia": "image/*"}})
    assert [part["type"] for part in told.json()["payload"]["messages"][0]["content"]] == ["text", "image_url"]


@pytest.mark.parametrize("given", ["bogus", "image/*,aplication", "image/ png"])
async def test_readable_media_that_names_no_media_type_is_refused_naming_the_field(
    client: httpx.AsyncClient, given: str
) -> None:
    await new_session(client)
    viewed = await client.get("/sessions/s1/projection", params={"view": "model", "readableMedia": given})
    assert viewed.status_code == 422, viewed.text
    assert viewed.json()["field"] == "readableMedia"
    ask = {"sessionId": "s1", "provider": "openai", "model": "gpt-4o", "projection": {"readableMedia": given}}
    chat = await client.post("/chat", json=ask)
    assert chat.status_code == 422, chat.text
    assert chat.json()["field"] == "projection.readableMedia"


@pytest.mark.parametrize("given", ["none", "*", "*/*", "image/png, application/pdf", "image/*,text/*", "audio/x-wav"])
async def test_readable_media_takes_media_ranges_and_none(client: httpx.AsyncClient, given: str) -> None:
    await new_session(client)
    viewed = await client.get("/sessions/s1/projection", params={"view": "model", "readableMedia": given})
    assert viewed.status_code == 200, viewed.text
