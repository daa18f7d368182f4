"""Any JSON string a client sends comes back exactly: a NUL (a tool that printed a binary file) and an
unpaired UTF-16 surrogate (a JavaScript runtime that cut an emoji in half), in content and in metadata,
through append, GET, amendments, compactions and every view; provider payloads get them cleaned."""

import json
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.store.escaped_text import ESCAPE_MARK
from tests.api.wire import as_json, boundary, new_session, summary, user
from tests.providers.payload_check import problems

BINARY = "cat image.png: \x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
HALF_EMOJI = "truncated at 4096 bytes: \ud83d"
LONE_LOW = "\udc00 leads"
TOOL_CALL: dict[str, Any] = {
    "type": "tool-call",
    "toolCallId": "c1",
    "toolName": "read_file",
    "input": {"path": "img\x00.png", "key\ud800": [LONE_LOW, {"deep": "\x00"}]},
}
TOOL_RESULT: dict[str, Any] = {
    "type": "tool-result",
    "toolCallId": "c1",
    "toolName": "read_file",
    "output": {"type": "text", "value": BINARY + HALF_EMOJI},
}
METADATA: dict[str, Any] = {
    "note": "a\x00b",
    "half\ud83d": HALF_EMOJI,
    "nested": {"list": ["\x00", LONE_LOW, 1, None, True]},
    "marked": ESCAPE_MARK + "starts with the escape mark",
    "plain": "nothing unusual",
}
MESSAGES: list[dict[str, Any]] = [
    {"id": "u1", "role": "user", "content": "show me the image " + HALF_EMOJI},
    {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "reading"}, TOOL_CALL]},
    {"id": "t1", "role": "tool", "content": [TOOL_RESULT], "metadata": METADATA},
    {"id": "a2", "role": "assistant", "content": [{"type": "text", "text": "it is a PNG \x00" + LONE_LOW}]},
]
PROVIDERS = {
    "openai": "gpt-4.1",
    "openai-responses": "gpt-4.1",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-pro",
    "ai-sdk": "claude-sonnet-4-5",
}


async def stored_session(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    await new_session(client)
    response = await client.post("/sessions/s1/messages", **as_json({"messages": MESSAGES}))
    assert response.status_code == 201, response.text
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


def exact(response: httpx.Response) -> Any:
    """The body as the standard library reads it, which keeps unpaired surrogates (httpx's ``.json()``
    would too, but this says so)."""
    return json.loads(response.content)


async def test_nul_and_unpaired_surrogates_round_trip_through_append_and_get(client: httpx.AsyncClient) -> None:
    appended = await stored_session(client)
    one = await client.get("/sessions/s1/messages/t1")
    page = await client.get("/sessions/s1/messages")
    newest_first = await client.get("/sessions/s1/messages", params={"order": "desc", "limit": 2})
    assert one.status_code == page.status_code == newest_first.status_code == 200
    for sent, got in zip(MESSAGES, exact(page)["messages"], strict=True):
        assert (got["content"], got["metadata"]) == (sent["content"], sent.get("metadata", {}))
    assert exact(one)["content"] == [TOOL_RESULT]
    assert exact(one)["metadata"] == METADATA
    assert [message["id"] for message in exact(newest_first)["messages"]] == ["a2", "t1"]
    assert [message["content"] for message in appended] == [message["content"] for message in MESSAGES]
    # Spelled as the escapes they were sent as: a body that any JSON reader takes.
    assert b"\\ud83d" in one.content and b"\\u0000" in one.content


async def test_only_messages_holding_such_text_are_marked(client: httpx.AsyncClient, app: FastAPI) -> None:
    await stored_session(client)
    await client.post("/sessions/s1/messages", json={"messages": [user("plain", id="p1")]})
    async with app.state.database.reading() as connection:
        raw = await connection.exec_driver_sql("SELECT id, unusual_text FROM messages ORDER BY seq")
        marks = dict(raw.all())
    assert marks == {"u1": True, "a1": True, "t1": True, "a2": True, "p1": False}


async def test_a_retry_of_the_same_messages_replays_and_a_different_one_is_409(client: httpx.AsyncClient) -> None:
    stored = await stored_session(client)
    retried = await client.post("/sessions/s1/messages", **as_json({"messages": MESSAGES}))
    assert retried.status_code == 200
    assert [message["seq"] for message in exact(retried)["messages"]] == [message["seq"] for message in stored]
    other = {**MESSAGES[0], "content": "show me the image truncated at 4096 bytes: \ud83e"}
    conflict = await client.post("/sessions/s1/messages", **as_json({"messages": [other]}))
    assert conflict.status_code == 409
    assert conflict.json()["field"] == "messages[0].id"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"messages": [{"role": "user", "content": "a\\u0000", "metadata": {"n": 18446744073709551616}}]}', "n"),
        ('{"messages": [{"role": "user", "content": "\\ud800", "metadata": {"x": NaN}}]}', "x"),
        ('{"messages": [{"role": "user", "content": "\\ud800", "metadata": {"x": [Infinity]}}]}', "x"),
    ],
)
async def test_values_that_cannot_be_kept_exactly_are_still_422_naming_the_field(
    client: httpx.AsyncClient, body: str, field: str
) -> None:
    await new_session(client)
    response = await client.post("/sessions/s1/messages", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    problem = response.json()
    fields = [error["field"] for error in problem.get("errors", [])] or [problem.get("field")]
    assert any(found.startswith(f"messages[0].metadata.{field}") for found in fields), problem


async def test_amendments_keep_stored_text_and_may_add_more(client: httpx.AsyncClient) -> None:
    await stored_session(client)
    changes = {"metadata": {"plain": None, "added": "x\x00y\udfff", "visibleInTranscript": True}}
    amended = await client.patch("/sessions/s1/messages/t1", **as_json(changes))
    assert amended.status_code == 200, amended.text
    expected = {key: value for key, value in METADATA.items() if key != "plain"}
    expected |= {"added": "x\x00y\udfff", "visibleInTranscript": True}
    assert exact(amended)["metadata"] == expected
    assert exact(await client.get("/sessions/s1/messages/t1"))["metadata"] == expected
    unmarked = await client.post("/sessions/s1/messages", json={"messages": [user("plain", id="p1")]})
    assert unmarked.status_code == 201
    marked_later = await client.patch("/sessions/s1/messages/p1", **as_json({"metadata": {"k\x00": "\ud800"}}))
    assert exact(marked_later)["metadata"] == {"k\x00": "\ud800"}


async def test_a_pruned_marked_tool_result_is_cleared_in_the_model_view(client: httpx.AsyncClient) -> None:
    await stored_session(client)
    pruned = await client.patch("/sessions/s1/messages/t1", json={"metadata": {"compactedAt": "2026-01-01T00:00:00Z"}})
    assert pruned.status_code == 200
    assert exact(pruned)["metadata"]["note"] == "a\x00b"
    model = exact(await client.get("/sessions/s1/projection", params={"view": "model"}))
    [result] = [message for message in model["messages"] if message["sourceMessageIds"] == ["t1"]]
    assert result["content"][0]["output"]["value"] == "[Old tool result content cleared]"


async def test_a_compaction_whose_records_hold_such_text_is_found_and_applied(client: httpx.AsyncClient) -> None:
    await stored_session(client)
    records = [
        {**boundary("b1"), "metadata": {"runtimeKind": "compact_boundary", "why": "\x00"}},
        summary("b1", "The user showed a PNG \x00 and half an emoji \ud83d.", id="s1-summary"),
        user("and now?", id="u2"),
    ]
    records[0]["metadata"]["compactThroughMessageId"] = "t1"
    assert (await client.post("/sessions/s1/messages", **as_json({"messages": records}))).status_code == 201
    model = exact(await client.get("/sessions/s1/projection", params={"view": "model"}))
    assert model["diagnostics"]["appliedCompactBoundaryId"] == "b1"
    assert "half an emoji \ud83d." in model["messages"][0]["content"]
    assert [message["sourceMessageIds"][0] for message in model["messages"]] == ["s1-summary", "a2", "u2"]


@pytest.mark.parametrize("view", ["transcript", "debug", "export"])
async def test_the_views_people_read_show_the_stored_text(client: httpx.AsyncClient, view: str) -> None:
    await stored_session(client)
    projection = exact(await client.get("/sessions/s1/projection", params={"view": view}))
    by_source = {message["sourceMessageIds"][0]: message for message in projection["messages"]}
    assert by_source["u1"]["content"] == MESSAGES[0]["content"]
    assert by_source["t1"]["content"] == [TOOL_RESULT]
    assert by_source["a2"]["content"] == MESSAGES[3]["content"]


async def test_redacted_exports_keep_the_text_around_a_secret(client: httpx.AsyncClient) -> None:
    await new_session(client)
    text = "key sk-ant-abcdefghijklmnopqrstuv \ud800 end\x00"
    await client.post("/sessions/s1/messages", **as_json({"messages": [{"id": "u1", "role": "user", "content": text}]}))
    export = exact(await client.get("/sessions/s1/projection", params={"view": "export", "redact": "true"}))
    assert export["messages"][0]["content"] == "key [REDACTED:anthropic-key] \ud800 end\x00"


async def test_a_markdown_export_is_utf8_with_replacement_characters(client: httpx.AsyncClient) -> None:
    await stored_session(client)
    response = await client.get("/sessions/s1/projection", params={"view": "export", "format": "markdown"})
    assert response.status_code == 200
    document = response.content.decode("utf-8")
    assert "truncated at 4096 bytes: \ufffd" in document
    assert "\x00" in document


@pytest.mark.parametrize(("provider", "model"), PROVIDERS.items())
async def test_every_provider_payload_passes_its_checks_with_each_change_reported(
    client: httpx.AsyncClient, provider: str, model: str
) -> None:
    await stored_session(client)
    response = await client.post("/chat", json={"sessionId": "s1", "provider": provider, "model": model})
    assert response.status_code == 200, response.text
    body = response.json()
    assert problems(provider, body["payload"], model=model) == []
    repaired = {
        (repair["rule"], message_id)
        for repair in body["diagnostics"]["repairs"]
        for message_id in repair["messageIds"]
        if repair["rule"] in ("unpaired-surrogates", "nul-characters")
    }
    surrogates = {("unpaired-surrogates", message_id) for message_id in ("u1", "a1", "t1", "a2")}
    nuls = {("nul-characters", message_id) for message_id in ("a1", "t1", "a2")}
    assert repaired == (surrogates | nuls if provider in ("openai", "openai-responses", "ai-sdk") else surrogates)


async def test_a_chat_answer_holding_an_unpaired_surrogate_beside_its_payload_is_written_whole(
    client: httpx.AsyncClient,
) -> None:
    """The payload's history goes out as measuring encoded it; the agent's name beside it, which only the
    standard library writes, must not cost the answer its payload."""
    await stored_session(client)
    ask = {"sessionId": "s1", "provider": "anthropic", "model": PROVIDERS["anthropic"], "agent": "plan \ud800"}
    response = await client.post("/chat", **as_json(ask))
    assert response.status_code == 200, response.text
    body = exact(response)
    without_agent = await client.post("/chat", json={key: value for key, value in ask.items() if key != "agent"})
    assert body["agent"] == "plan \ud800"
    assert body["payload"] == without_agent.json()["payload"]
    assert problems("anthropic", body["payload"], model=PROVIDERS["anthropic"]) == []


async def test_session_and_run_fields_are_kept_exactly(client: httpx.AsyncClient) -> None:
    session = {"id": "s2", "title": "cat a.bin \x00 \ud83d", "metadata": {"cwd\x00": LONE_LOW}, "model": "m\x00"}
    created = await client.post("/sessions", **as_json(session))
    assert created.status_code == 201, created.text
    read = exact(await client.get("/sessions/s2"))
    listed = exact(await client.get("/sessions"))["sessions"]
    for body in (exact(created), read, listed[0]):
        assert (body["title"], body["metadata"], body["model"]) == (session["title"], session["metadata"], "m\x00")
    run = {"id": "r1", "system": "be\x00 brief \udc00", "metadata": {"k": ESCAPE_MARK}, "agent": "\ud800"}
    made = await client.post("/sessions/s2/runs", **as_json(run))
    assert made.status_code == 201, made.text
    amended = await client.patch("/sessions/s2/runs/r1", **as_json({"result": {"text": "\x00"}}))
    got = exact(await client.get("/sessions/s2/runs/r1"))
    for body in (exact(made), exact(amended), got):
        assert (body["system"], body["metadata"], body["agent"]) == (run["system"], run["metadata"], run["agent"])
    assert got["result"] == {"text": "\x00"}


async def test_a_session_title_holding_such_text_is_shown_exactly_in_search_hits_and_analytics(
    client: httpx.AsyncClient,
) -> None:
    """Both read the title beside message rows in one statement, not through the session's own read."""
    title = "first prompt \x00 cut mid-emoji \ud83d"
    created = await client.post("/sessions", **as_json({"id": "s2", "title": title}))
    assert created.status_code == 201, created.text
    await client.post("/sessions/s2/messages", **as_json({"messages": [user("find the needle", id="u1")]}))
    for path in ("/search", "/sessions/s2/search"):
        hits = exact(await client.get(path, params={"q": "needle"}))["hits"]
        assert [hit["sessionTitle"] for hit in hits] == [title]
    sessions = exact(await client.get("/analytics"))["sessions"]
    assert [session["title"] for session in sessions] == [title]


async def test_floats_in_metadata_and_run_fields_read_back_as_floats(client: httpx.AsyncClient) -> None:
    """``jsonb`` reads a number written with an exponent (``1e+16``, as a float that large is written) as an
    integer; JSON, and the service's idempotency, tell ``1`` and ``1.0`` apart."""
    floats = {"usd": 1e16, "huge": 1.5e300, "wide": 1.2345678901234567e19, "small": 5e-324, "count": 10**16}
    await client.post("/sessions", **as_json({"id": "s2", "metadata": floats}))
    await client.post("/sessions/s2/messages", **as_json({"messages": [user("hi", id="u1", **floats)]}))
    amended = await client.patch("/sessions/s2/messages/u1", **as_json({"metadata": {"later": 2e20}}))
    assert amended.status_code == 200, amended.text
    run = {"id": "r1", "metadata": floats, "tools": [{"name": "t", "inputSchema": {"maximum": 1e16}}]}
    assert (await client.post("/sessions/s2/runs", **as_json(run))).status_code == 201
    message = exact(await client.get("/sessions/s2/messages/u1"))
    got_run = exact(await client.get("/sessions/s2/runs/r1"))
    for metadata in (message["metadata"], exact(await client.get("/sessions/s2"))["metadata"], got_run["metadata"]):
        assert {key: metadata[key] for key in floats} == floats
        assert [type(metadata[key]) for key in floats] == [float, float, float, float, int]
    assert type(message["metadata"]["later"]) is float
    assert type(got_run["tools"][0]["inputSchema"]["maximum"]) is float
