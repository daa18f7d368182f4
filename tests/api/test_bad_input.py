"""Every kind of bad input: a problem+json 4xx naming the field, and nothing stored."""

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from app.main import create_app
from tests.api.wire import as_json, new_session, stored_count, user
from tests.conftest import settings_for_tests

GOOD = user("fine", id="ok")
TOOL_CALL = {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {}}
TOOL_RESULT = {"type": "tool-result", "toolCallId": "c1", "toolName": "Read", "output": {"type": "text", "value": "x"}}

DEEP: Any = "leaf"
for _ in range(70):
    DEEP = [DEEP]
"""Nested past the default ``max_json_depth`` (64): stored content is refused past it, unknown keys' too."""

BAD_BATCHES: list[tuple[str, Any, int, str]] = [
    ("unknown role", [{"role": "robot", "content": "x"}], 422, "messages[1]"),
    ("missing role", [{"content": "x"}], 422, "messages[1]"),
    ("content of the wrong type", [{"role": "user", "content": 5}], 422, "messages[1].content"),
    ("tool-call part from a user", [{"role": "user", "content": [TOOL_CALL]}], 422, "messages[1].content[0]"),
    (
        "tool-result part from a user",
        [{"role": "user", "content": [TOOL_RESULT]}],
        422,
        "messages[1].content[0]",
    ),
    (
        "image part in a system message",
        [{"role": "system", "content": [{"type": "image", "image": "AAAA"}]}],
        422,
        "messages[1].content[0]",
    ),
    ("tool message as a string", [{"role": "tool", "content": "x"}], 422, "messages[1].content"),
    ("tool message with no parts", [{"role": "tool", "content": []}], 422, "messages[1].content"),
    ("text part without text", [{"role": "user", "content": [{"type": "text"}]}], 422, "messages[1].content[0].text"),
    (
        "tool call without an id",
        [{"role": "assistant", "content": [{"type": "tool-call", "toolName": "R", "input": {}}]}],
        422,
        "messages[1].content[0].toolCallId",
    ),
    (
        "tool result with an unknown output type",
        [{"role": "tool", "content": [{**TOOL_RESULT, "output": {"type": "blob", "value": 1}}]}],
        422,
        "messages[1].content[0].output",
    ),
    ("unknown field on a message", [{"role": "user", "content": "x", "colour": "red"}], 422, "messages[1].colour"),
    (
        "a part's unknown key nested past the depth limit",
        [{"role": "user", "content": [{"type": "text", "text": "x", "bold": DEEP}]}],
        422,
        "messages[1].content",
    ),
    ("empty id", [{"role": "user", "content": "x", "id": ""}], 422, "messages[1].id"),
    ("id over 128 characters", [{"role": "user", "content": "x", "id": "i" * 129}], 422, "messages[1].id"),
    (
        "metadata that is not an object",
        [{"role": "user", "content": "x", "metadata": [1]}],
        422,
        "messages[1].metadata",
    ),
    (
        "naive createdAt",
        [{"role": "user", "content": "x", "createdAt": "2026-01-01T00:00:00"}],
        422,
        "messages[1].createdAt",
    ),
    (
        "createdAt before year 1 in UTC",
        [{"role": "user", "content": "x", "createdAt": "0001-01-01T00:00:00+14:00"}],
        422,
        "messages[1].createdAt",
    ),
    (
        "createdAt after year 9999 in UTC",
        [{"role": "user", "content": "x", "createdAt": "9999-12-31T23:59:59-14:00"}],
        422,
        "messages[1].createdAt",
    ),
    *(
        (
            f"createdAt of {created}",
            [{"role": "user", "content": "x", "createdAt": created}],
            422,
            "messages[1].createdAt",
        )
        for created in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "0001-01-01T01:00:00+01:00")
    ),
    *(
        (
            f"time.created of {created!r}",
            [{"role": "user", "content": "x", "time": {"created": created}}],
            422,
            "messages[1].time",
        )
        for created in (1e20, 1e300, 10**30, "9999-12-31T23:59:59-14:00", -62_135_596_800_000)
    ),
    (
        "integer past 64 bits in a tool input",
        [{"role": "assistant", "content": [{**TOOL_CALL, "input": {"k": 2**64}}]}],
        422,
        "messages[1].content[0].input.k",
    ),
    (
        "unpaired surrogate in an id",
        [{"role": "user", "content": "x", "id": "half \ud83d"}],
        422,
        "messages[1].id",
    ),
]


@pytest.mark.parametrize(("case", "tail", "status", "field"), BAD_BATCHES, ids=[case[0] for case in BAD_BATCHES])
async def test_bad_message_rejects_the_whole_batch_naming_the_field(
    client: httpx.AsyncClient, case: str, tail: list[dict[str, Any]], status: int, field: str
) -> None:
    await new_session(client)
    response = await client.post("/sessions/s1/messages", **as_json({"messages": [GOOD, *tail]}))
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    fields = [error["field"] for error in problem.get("errors", [])] or [problem.get("field")]
    assert field in fields, problem
    assert field in problem["detail"]
    assert await stored_count(client, "s1") == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "messages"), ({"messages": []}, "messages"), ({"messages": "x"}, "messages"), ([], "body")],
)
async def test_malformed_envelope_is_422(client: httpx.AsyncClient, body: Any, field: str) -> None:
    await new_session(client)
    response = await client.post("/sessions/s1/messages", json=body)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field


@pytest.mark.parametrize(("path", "query"), [("/analytics", {}), ("/search", {"q": "hi"})])
@pytest.mark.parametrize(
    ("parameter", "value"),
    [("from", "0001-01-01T00:00:00+14:00"), ("to", "9999-12-31T23:59:59-23:59"), ("from", "0001-01-01T00:00:00Z")],
)
async def test_a_query_time_at_or_past_the_edge_of_utc_is_answered_or_refused_naming_it(
    client: httpx.AsyncClient, path: str, query: dict[str, str], parameter: str, value: str
) -> None:
    await new_session(client)
    response = await client.get(path, params={**query, parameter: value})
    if value.endswith("Z"):
        assert response.status_code == 200, response.text
        return
    assert response.status_code == 422, response.text
    assert parameter in [error["field"] for error in response.json()["errors"]]


async def test_invalid_json_is_422(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await client.post(
        "/sessions/s1/messages", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    "content_type", ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
@pytest.mark.parametrize("large", [False, True], ids=["small", "large"])
async def test_a_json_body_sent_as_another_media_type_is_415_naming_the_header(
    client: httpx.AsyncClient, content_type: str | None, large: bool
) -> None:
    await new_session(client)
    text = "x" * (300_000 if large else 10)
    body = orjson.dumps({"messages": [user(text, id="m1")]})
    headers = {"content-type": content_type} if content_type else {}
    response = await client.post("/sessions/s1/messages", content=body, headers=headers)
    assert response.status_code == 415, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == "Content-Type"
    assert await stored_count(client, "s1") == 0


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "application/merge-patch+json"])
async def test_json_media_types_with_parameters_or_a_json_suffix_are_read(
    client: httpx.AsyncClient, content_type: str
) -> None:
    response = await client.post(
        "/sessions", content=orjson.dumps({"id": "s1"}), headers={"content-type": content_type}
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize("large", [False, True], ids=["small", "large"])
@pytest.mark.parametrize("path", ["/sessions/s1/messages", "/sessions"])
async def test_a_body_that_is_not_utf8_is_400_naming_the_body(
    client: httpx.AsyncClient, path: str, large: bool
) -> None:
    """As Windows PowerShell 5.1 sends a string body: ISO-8859-1, whatever the Content-Type says."""
    await new_session(client)
    padding = "x" * (300_000 if large else 0)
    body = {"messages": [user(f"{padding}café", id="m1")]} if path.endswith("messages") else {"id": f"café{padding}"}
    response = await client.post(
        path,
        content=json.dumps(body, ensure_ascii=False).encode("latin-1"),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == "body"
    assert "UTF-8" in response.json()["detail"]
    assert await stored_count(client, "s1") == 0


@pytest.mark.parametrize("path", ["/sessions/s1/messages", "/sessions/import?format=claude-code"])
async def test_a_compressed_body_is_415_naming_content_encoding(client: httpx.AsyncClient, path: str) -> None:
    await new_session(client)
    body = orjson.dumps({"messages": [user("hi", id="m1")]})
    response = await client.post(
        path,
        content=gzip.compress(body),
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert response.status_code == 415, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["accept-encoding"] == "identity"
    assert response.json()["field"] == "Content-Encoding"
    assert await stored_count(client, "s1") == 0


@pytest.mark.parametrize("encoding", ["", " ", "identity", " Identity "])
async def test_a_body_sent_as_it_is_may_say_so_or_say_nothing(client: httpx.AsyncClient, encoding: str) -> None:
    response = await client.post(
        "/sessions",
        content=orjson.dumps({"id": "s1"}),
        headers={"content-type": "application/json", "content-encoding": encoding},
    )
    assert response.status_code == 201, response.text


async def test_a_reserved_kind_from_a_user_message_is_ignored_not_escalated(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await client.post("/sessions/s1/messages", json={"messages": [user("hi", runtimeKind="no_such_kind")]})
    assert response.status_code == 201
    assert response.json()["messages"][0]["kind"] == "user_input"


async def test_size_limits_give_413_naming_the_field_and_store_nothing(database_url: str) -> None:
    from asgi_lifespan import LifespanManager

    settings = settings_for_tests(
        max_body_bytes=4000,
        max_message_bytes=600,
        max_batch_messages=3,
        max_parts_per_message=2,
        max_metadata_bytes=100,
    )
    app = create_app(settings, database_url=database_url)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        await new_session(client, "limits")
        cases = [
            ({"messages": [user("x" * 5000)]}, "body"),
            ({"messages": [user("x" * 700)]}, "messages[0]"),
            ({"messages": [user("a"), user("b"), user("c"), user("d")]}, "messages"),
            ({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}] * 3}]}, "messages[0].content"),
            ({"messages": [user("a", blob="m" * 200)]}, "messages[0].metadata"),
        ]
        for body, field in cases:
            response = await client.post("/sessions/limits/messages", json=body)
            assert response.status_code == 413, (field, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["field"] == field
        assert await stored_count(client, "limits") == 0
        await client.delete("/sessions/limits")


async def test_a_chunked_body_over_the_limit_is_413(database_url: str) -> None:
    from asgi_lifespan import LifespanManager

    app = create_app(settings_for_tests(max_body_bytes=1000), database_url=database_url)

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit must count bytes as they arrive
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(20):
            yield b"x" * 100
        yield b'"}]}'

    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
    ):
        await new_session(client, "chunked")
        response = await client.post(
            "/sessions/chunked/messages", content=chunks(), headers={"content-type": "application/json"}
        )
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/problem+json"
        await client.delete("/sessions/chunked")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": "s1", "metadata": {"deep": {"n": 2**70}}}, "metadata.deep.n"),
        ({"id": "half \ud83d"}, "id"),
        ({"id": "s1", "contextWindowTokens": 2**31}, "contextWindowTokens"),
        ({"id": "bad\nid"}, "id"),
        ({"id": "x" * 129}, "id"),
    ],
)
async def test_unstorable_session_input_is_422_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/sessions", **as_json(body))
    assert response.status_code == 422, response.text
    problem = response.json()
    fields = [error["field"] for error in problem.get("errors", [])] or [problem.get("field")]
    assert field in fields
    assert (await client.get("/sessions", params={"limit": 500})).json()["sessions"] == []


async def test_a_non_ascii_session_id_is_stored_and_its_location_is_percent_encoded(client: httpx.AsyncClient) -> None:
    response = await client.post("/sessions", json={"id": "会话-1"})
    assert response.status_code == 201
    assert response.headers["location"] == "/sessions/%E4%BC%9A%E8%AF%9D-1"
    assert (await client.get("/sessions/会话-1")).status_code == 200


async def test_a_huge_integer_in_a_tool_input_is_422_naming_it(client: httpx.AsyncClient) -> None:
    await new_session(client)
    call = {**TOOL_CALL, "input": {"n": 2**64}}
    response = await client.post("/sessions/s1/messages", json={"messages": [{"role": "assistant", "content": [call]}]})
    assert response.status_code == 422
    assert response.json()["field"] == "messages[0].content[0].input.n"
    assert await stored_count(client, "s1") == 0


async def test_unstorable_run_fields_are_422(client: httpx.AsyncClient) -> None:
    await new_session(client)
    created = await client.post("/sessions/s1/runs", json={"id": "r1", "metadata": {"n": 2**64}})
    assert created.status_code == 422
    assert created.json()["field"] == "metadata.n"
    await client.post("/sessions/s1/runs", json={"id": "r1"})
    patched = await client.patch("/sessions/s1/runs/r1", json={"usage": {"inputTokens": 2**80}})
    assert patched.status_code == 422
    assert patched.json()["field"] == "usage.inputTokens"


@pytest.mark.parametrize("path", ["/sessions/a%00b", "/sessions/a%00b/messages", "/sessions/s1/messages/a%01b"])
async def test_ids_with_control_characters_in_the_path_are_422_not_500(client: httpx.AsyncClient, path: str) -> None:
    await new_session(client)
    response = await client.get(path)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
