"""``POST /sessions/import``: each format's file stored as messages, twice without duplicates, a grown file
adding only what is new, strict mode storing nothing, and the same walls and limits as an append."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import text

from app.importers.registry import parse_import
from app.main import create_app
from tests.conftest import settings_for_tests
from tests.database import plain_dsn, until_waiting_for
from tests.importers import samples
from tests.importers.claude_code_lines import answer, jsonl, prompt
from tests.importers.claude_code_lines import text as text_block
from tests.trust.keys import API_KEYS, READER, RUNTIME, WRITER

FORMATS: dict[str, Callable[[], bytes]] = {
    "claude-code": samples.claude_code,
    "opencode": samples.opencode,
    "pi": samples.pi,
    "openai-chat": samples.openai_chat,
    "anthropic-messages": samples.anthropic_messages,
    "ai-sdk": samples.ai_sdk,
    "projector": samples.projector,
}
CONTENT_TYPES = {
    "claude-code": "application/x-ndjson",
    "pi": "application/octet-stream",
    "projector": "application/x-ndjson",
}


async def post_file(
    client: httpx.AsyncClient, format: str, data: bytes, content_type: str = "application/json", **params: Any
) -> httpx.Response:
    return await client.post(
        "/sessions/import", params={"format": format, **params}, content=data, headers={"content-type": content_type}
    )


async def stored_ids(client: httpx.AsyncClient, session_id: str) -> list[str]:
    response = await client.get(f"/sessions/{session_id}/messages", params={"limit": 500})
    assert response.status_code == 200, response.text
    return [message["id"] for message in response.json()["messages"]]


@pytest.mark.parametrize("format", FORMATS)
async def test_each_format_imports_once_and_a_second_import_stores_nothing(
    client: httpx.AsyncClient, format: str
) -> None:
    data = FORMATS[format]()
    [session] = parse_import(format, data).sessions
    first = await post_file(client, format, data, CONTENT_TYPES.get(format, "application/json"))
    assert first.status_code == 201, first.text
    [outcome] = first.json()["sessions"]
    assert (outcome["id"], outcome["created"], outcome["refused"]) == (session.id, True, [])
    assert outcome["storedIds"] == [message.id for message in session.messages]
    again = await post_file(client, format, data)
    assert again.status_code == 200
    [repeated] = again.json()["sessions"]
    assert (repeated["created"], repeated["stored"], repeated["alreadyStored"]) == (False, 0, len(session.messages))
    assert await stored_ids(client, session.id) == [message.id for message in session.messages]
    transcript = await client.get(f"/sessions/{session.id}/projection", params={"view": "transcript", "limit": 500})
    shown = [message["sourceMessageIds"][0] for message in transcript.json()["messages"]]
    assert shown == sorted(shown, key=[message.id for message in session.messages].index)


async def test_the_report_says_what_was_left_out(client: httpx.AsyncClient) -> None:
    response = await post_file(client, "claude-code", samples.claude_code(), "application/x-ndjson")
    report = response.json()["report"]
    assert report["format"] == "claude-code"
    assert any("sidechain" in skipped["reason"] for skipped in report["skipped"])
    assert [branch["messageIds"] for branch in report["branches"]] == [["u3", "msg_03"]]
    assert report["invalid"] == []


async def test_a_grown_file_appends_only_its_new_messages(client: httpx.AsyncClient) -> None:
    lines = samples.claude_code().splitlines(keepends=True)
    start = b"".join(lines[:13])
    first = await post_file(client, "claude-code", start)
    earlier = first.json()["sessions"][0]["storedIds"]
    grown = await post_file(client, "claude-code", samples.claude_code())
    [outcome] = grown.json()["sessions"]
    [whole] = parse_import("claude-code", samples.claude_code()).sessions
    assert outcome["alreadyStored"] == len(earlier)
    assert earlier + outcome["storedIds"] == [message.id for message in whole.messages]
    assert await stored_ids(client, whole.id) == [message.id for message in whole.messages]


async def test_a_live_import_leaves_the_answer_still_being_written_for_later(client: httpx.AsyncClient) -> None:
    streaming = jsonl(prompt("u1", None, "Fix it"), answer("a1", "u1", "msg_1", text_block("Looking.")))
    first = await post_file(client, "claude-code", streaming, live="true")
    assert first.json()["sessions"][0]["storedIds"] == ["u1"]
    assert first.json()["sessions"][0]["pending"] == 1
    finished = streaming + jsonl(prompt("u2", "a1", "Thanks", second=9))
    later = await post_file(client, "claude-code", finished, live="true")
    assert later.json()["sessions"][0]["storedIds"] == ["msg_1", "u2"]
    assert later.json()["sessions"][0]["pending"] == 0


async def test_a_message_stored_before_with_other_content_is_kept_and_reported(client: httpx.AsyncClient) -> None:
    streaming = jsonl(prompt("u1", None, "Fix it"), answer("a1", "u1", "msg_1", text_block("Looking.")))
    await post_file(client, "claude-code", streaming)
    more = streaming + jsonl(answer("a2", "a1", "msg_1", text_block("Found it.")), prompt("u2", "a2", "ok", second=9))
    response = await post_file(client, "claude-code", more)
    [outcome] = response.json()["sessions"]
    assert (outcome["changed"], outcome["storedIds"]) == (["msg_1"], ["u2"])
    stored = (await client.get(f"/sessions/{outcome['id']}/messages/msg_1")).json()
    assert stored["content"] == [{"type": "text", "text": "Looking."}]


async def test_strict_refuses_a_bad_line_and_stores_nothing(client: httpx.AsyncClient) -> None:
    data = samples.claude_code().replace(b'{"type": "summary"', b'{not json\n{"type": "summary"', 1)
    strict = await post_file(client, "claude-code", data, strict="true")
    assert strict.status_code == 422
    assert strict.json()["line"] == 1
    assert (await client.get("/sessions")).json()["sessions"] == []
    lenient = await post_file(client, "claude-code", data)
    assert lenient.status_code == 201
    assert [invalid["line"] for invalid in lenient.json()["report"]["invalid"]] == [1]


async def test_an_unknown_format_or_bad_session_id_is_422_naming_it(client: httpx.AsyncClient) -> None:
    unknown = await post_file(client, "cursor", b"{}")
    assert unknown.status_code == 422
    assert unknown.json()["field"] == "format"
    bad_id = await post_file(client, "openai-chat", samples.openai_chat(), sessionId="a/b")
    assert bad_id.status_code == 422
    assert bad_id.json()["field"] == "sessionId"


async def test_the_session_id_can_be_given(client: httpx.AsyncClient) -> None:
    response = await post_file(client, "openai-chat", samples.openai_chat(), sessionId="mine")
    assert response.json()["sessions"][0]["id"] == "mine"
    assert await stored_ids(client, "mine")


@asynccontextmanager
async def configured(database_url: str, **overrides: object) -> AsyncIterator[FastAPI]:
    application = create_app(settings_for_tests(**overrides), database_url=database_url)
    async with LifespanManager(application):
        try:
            yield application
        finally:
            async with application.state.database.transaction() as connection:
                await connection.execute(text("TRUNCATE sessions, idempotency_keys CASCADE"))


def http(app: FastAPI, key: str | None = None) -> httpx.AsyncClient:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", headers=headers)


async def test_only_a_runtime_key_may_import(database_url: str) -> None:
    """An import writes compactions and runtime facts, which only the runtime may write."""
    async with configured(database_url, api_keys=orjson.dumps(API_KEYS).decode()) as app:
        for key, status in ((READER, 403), (WRITER, 403), (RUNTIME, 201)):
            async with http(app, key) as client:
                response = await post_file(client, "pi", samples.pi())
                assert response.status_code == status, (key, response.text)


async def test_a_session_is_stored_in_batches_no_larger_than_an_append_in_one_transaction(database_url: str) -> None:
    [session] = parse_import("pi", samples.pi()).sessions
    async with configured(database_url, max_batch_messages=2) as app, http(app) as client:
        response = await post_file(client, "pi", samples.pi())
        assert response.status_code == 201
        assert await stored_ids(client, session.id) == [message.id for message in session.messages]
        assert len(session.messages) > 2


async def test_the_append_limits_apply_to_each_message_and_the_body(database_url: str) -> None:
    data = samples.claude_code()
    limits = {"max_message_bytes": 300, "max_body_bytes": len(data) + 10}
    async with configured(database_url, **limits) as app, http(app) as client:
        lenient = await post_file(client, "claude-code", data)
        refused = lenient.json()["sessions"][0]["refused"]
        assert refused and all("the limit is 300" in message["reason"] for message in refused)
        assert lenient.json()["sessions"][0]["stored"] > 0
        strict = await post_file(client, "claude-code", data, sessionId="other", strict="true")
        assert strict.status_code == 422
        assert (await client.get("/sessions/other")).status_code == 404
        too_large = await post_file(client, "claude-code", data + b"\n" * 20)
        assert too_large.status_code == 413


async def test_text_a_jsonb_column_cannot_hold_is_imported_exactly(client: httpx.AsyncClient) -> None:
    data = jsonl(
        prompt("u1", None, "cat logo.png"),
        answer("a1", "u1", "msg_1", text_block("\x89PNG\x00\x00 and half an emoji \ud83d")),
        prompt("u2", "a1", "thanks", second=5),
    )
    response = await post_file(client, "claude-code", data)
    assert response.status_code == 201, response.text
    stored = json.loads((await client.get(f"/sessions/{response.json()['sessions'][0]['id']}/messages/msg_1")).content)
    assert stored["content"] == [{"type": "text", "text": "\x89PNG\x00\x00 and half an emoji \ud83d"}]


async def test_an_empty_body_is_422(client: httpx.AsyncClient) -> None:
    response = await post_file(client, "pi", b"  \n")
    assert response.status_code == 422
    assert response.json()["field"] == "body"


async def test_a_field_of_an_unexpected_type_is_a_reported_line_not_a_500(client: httpx.AsyncClient) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": 5}]}).encode()
    lenient = await post_file(client, "ai-sdk", body, sessionId="odd-shapes")
    assert lenient.status_code == 201, lenient.text
    assert [invalid["line"] for invalid in lenient.json()["report"]["invalid"]] == [2]
    strict = await post_file(client, "ai-sdk", body, sessionId="odd-shapes-strict", strict="true")
    assert (strict.status_code, strict.json()["line"]) == (422, 2)


async def test_an_id_the_file_gives_twice_is_stored_once_and_a_different_second_refused(
    client: httpx.AsyncClient,
) -> None:
    repeated = {"id": "q", "role": "user", "content": "first question"}
    body = json.dumps({"messages": [repeated, repeated, {"id": "q", "role": "user", "content": "second"}]}).encode()
    first = await post_file(client, "ai-sdk", body, sessionId="repeated-ids")
    [outcome] = first.json()["sessions"]
    assert outcome["storedIds"] == ["q"]
    assert [(r["messageId"], r["field"]) for r in outcome["refused"]] == [("q", "id")]
    again = await post_file(client, "ai-sdk", body, sessionId="repeated-ids")
    [repeat] = again.json()["sessions"]
    assert (repeat["stored"], repeat["alreadyStored"], repeat["changed"]) == (0, 1, [])
    strict = await post_file(client, "ai-sdk", body, sessionId="repeated-ids-strict", strict="true")
    assert strict.status_code == 422 and strict.json()["messageId"] == "q"


async def test_a_session_deleted_while_it_is_imported_into_is_404(database_url: str, direct_database_url: str) -> None:
    async with configured(database_url) as app, http(app) as client:
        assert (await client.post("/sessions", json={"id": "doomed"})).status_code == 201
        deleter = await asyncpg.connect(plain_dsn(direct_database_url))
        transaction = deleter.transaction()
        await transaction.start()
        await deleter.execute("SELECT 1 FROM sessions WHERE id = 'doomed' FOR UPDATE")
        importing = asyncio.create_task(post_file(client, "ai-sdk", samples.ai_sdk(), sessionId="doomed"))
        await until_waiting_for(direct_database_url, deleter.get_server_pid(), importing)
        assert not importing.done(), importing.result().text
        await deleter.execute("DELETE FROM sessions WHERE id = 'doomed'")
        await transaction.commit()
        await deleter.close()
        response = await importing
        assert response.status_code == 404, response.text
        assert "deleted while it was imported" in response.json()["detail"]
        assert (await client.get("/sessions/doomed")).status_code == 404
