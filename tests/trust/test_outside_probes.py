"""What a probe from outside found, pinned: forged cursors, integers past every bound, ids a URL cannot
address, NaN and Infinity, and an API document that says less than the service enforces. Each answer is a
4xx problem naming the field, never a 500 and never a value quietly stored."""

import base64
from collections.abc import AsyncIterator
from typing import Any, get_args

import httpx
import orjson
import pytest
from fastapi import FastAPI

from app.api.schemas import Provider
from app.providers.registry import SUPPORTED_PROVIDERS
from tests.api.wire import user
from tests.trust.conftest import AppFactory, http_client

PROBLEM = "application/problem+json"


def forged(payload: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()


@pytest.fixture
async def client(trust_app: AppFactory) -> AsyncIterator[httpx.AsyncClient]:
    async with trust_app() as application, http_client(application) as c:
        assert (await c.post("/sessions", json={"id": "s1"})).status_code == 201
        assert (await c.post("/sessions/s1/messages", json={"messages": [user("hi", id="m1")]})).status_code == 201
        yield c


def problem_naming(response: httpx.Response, status: int, field: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["field"] == field


@pytest.mark.parametrize("seq", [2**63, 2**64 - 1, 2**63 + 12345, True, -1, 1.5, "7", None])
@pytest.mark.parametrize("parameter", ["after", "before"])
async def test_a_forged_message_cursor_is_400(client: httpx.AsyncClient, seq: Any, parameter: str) -> None:
    cursor = forged({"v": 1, "s": "s1", "q": seq})
    problem_naming(await client.get("/sessions/s1/messages", params={parameter: cursor}), 400, parameter)
    view = {"view": "transcript", parameter: cursor}
    problem_naming(await client.get("/sessions/s1/projection", params=view), 400, parameter)


@pytest.mark.parametrize(
    "payload",
    [
        {"v": 1, "t": "2026-01-01T00:00:00+00:00", "i": 7, "d": "desc"},
        {"v": 1, "t": "2026-01-01T00:00:00+00:00", "i": ["s1"], "d": "desc"},
        {"v": 1, "t": "2026-01-01T00:00:00+00:00", "i": None, "d": "desc"},
        {"v": 1, "t": "2026-01-01T00:00:00", "i": "s1", "d": "desc"},
        {"v": 1, "t": 17, "i": "s1", "d": "desc"},
        {"v": 1, "i": "s1", "d": "desc"},
    ],
)
async def test_a_forged_session_cursor_is_400(client: httpx.AsyncClient, payload: dict[str, Any]) -> None:
    problem_naming(await client.get("/sessions", params={"cursor": forged(payload)}), 400, "cursor")


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/chat", {"sessionId": "s1", "provider": "gemini", "model": "m", "maxOutputTokens": 2**63}, "maxOutputTokens"),
        ("/chat", {"sessionId": "s1", "provider": "gemini", "model": "m", "maxOutputTokens": 2**64}, "maxOutputTokens"),
        (
            "/chat",
            {"sessionId": "s1", "provider": "openai", "model": "m", "projection": {"toolResultSoftLimitChars": 2**64}},
            "projection.toolResultSoftLimitChars",
        ),
        ("/sessions", {"contextWindowTokens": 2**63}, "contextWindowTokens"),
        ("/sessions/s1/prune", {"protectToolTokens": 2**64}, "protectToolTokens"),
        ("/sessions/s1/prune", {"minimumSavingsTokens": 2**63}, "minimumSavingsTokens"),
        ("/sessions/s1/prune", {"protectUserTurns": 2**31}, "protectUserTurns"),
    ],
)
async def test_integers_past_their_bound_are_422_naming_the_field(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    problem_naming(await client.post(path, json=body, headers={"idempotency-key": f"k-{field}"}), 422, field)


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        (
            "/sessions/s1/projection?view=model&toolResultSoftLimitChars=18446744073709551616",
            "toolResultSoftLimitChars",
        ),
        ("/sessions/s1/context?maxOutputTokens=9223372036854775808", "maxOutputTokens"),
        ("/sessions/s1/messages?limit=18446744073709551616", "limit"),
        ("/sessions?limit=9223372036854775808", "limit"),
    ],
)
async def test_query_integers_past_their_bound_are_422(client: httpx.AsyncClient, path: str, parameter: str) -> None:
    problem_naming(await client.get(path), 422, parameter)


async def test_gemini_receives_the_largest_output_budget_a_request_may_ask(client: httpx.AsyncClient) -> None:
    body = {"sessionId": "s1", "provider": "gemini", "model": "gemini-2.5-pro", "maxOutputTokens": 2**31 - 1}
    response = await client.post("/chat", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["payload"]["generationConfig"]["maxOutputTokens"] == 2**31 - 1


@pytest.mark.parametrize("bad_id", ["a/b", "/", ".", "..", "a/../b"])
async def test_ids_a_url_path_cannot_address_are_422(client: httpx.AsyncClient, bad_id: str) -> None:
    problem_naming(await client.post("/sessions", json={"id": bad_id}), 422, "id")
    problem_naming(await client.post("/sessions/s1/runs", json={"id": bad_id}), 422, "id")
    refused = await client.post("/sessions/s1/messages", json={"messages": [user("x", id=bad_id)]})
    problem_naming(refused, 422, "messages[0].id")
    assert (await client.get("/sessions/s1")).json()["messageCount"] == 1


@pytest.mark.parametrize("good_id", ["...", ".a", "a.", "a..b", "v1.2", "日本語", "a b", "a?b#c%2F"])
async def test_ids_with_dots_or_any_other_printable_text_are_stored_and_addressable(
    client: httpx.AsyncClient, good_id: str
) -> None:
    created = await client.post("/sessions", json={"id": good_id})
    assert created.status_code == 201, created.text
    read = await client.get(created.headers["location"])
    assert read.status_code == 200 and read.json()["id"] == good_id


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_in_a_body_are_422_not_stored_as_null(client: httpx.AsyncClient, literal: str) -> None:
    appended = await client.post(
        "/sessions/s1/messages",
        content=f'{{"messages": [{{"role": "user", "content": "x", "metadata": {{"score": {literal}}}}}]}}',
        headers={"content-type": "application/json"},
    )
    problem_naming(appended, 422, "messages[0].metadata.score")
    created = await client.post(
        "/sessions", content=f'{{"metadata": {{"w": [{literal}]}}}}', headers={"content-type": "application/json"}
    )
    problem_naming(created, 422, "metadata.w[0]")
    assert (await client.get("/sessions/s1")).json()["messageCount"] == 1


def test_the_provider_enum_is_the_registry() -> None:
    assert get_args(Provider) == SUPPORTED_PROVIDERS


async def test_the_api_document_says_what_is_enforced(trust_app: AppFactory) -> None:
    async with trust_app(max_page_size=123) as application, http_client(application) as c:
        document = (await c.get("/openapi.json")).json()
    paths = document["paths"]
    limits = [
        branch.get("maximum")
        for operations in paths.values()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["name"] == "limit"
        for branch in parameter["schema"].get("anyOf", [parameter["schema"]])
        if branch.get("type") == "integer"
    ]
    assert limits and set(limits) == {123}, "every listing declares the configured maximum"
    chat_body = paths["/chat"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    assert document["components"]["schemas"][chat_body]["properties"]["provider"]["enum"] == list(SUPPORTED_PROVIDERS)
    projection = paths["/sessions/{session_id}/projection"]["get"]["responses"]["200"]["content"]
    assert set(projection) == {"application/json", "text/markdown"}


async def test_the_markdown_export_is_text_markdown(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions/s1/projection", params={"view": "export", "format": "markdown"})
    assert response.headers["content-type"].startswith("text/markdown")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/sessions", "GET, HEAD, POST"),
        ("PUT", "/sessions/s1", "DELETE, GET, HEAD"),
        ("POST", "/sessions/s1/messages/m1", "GET, HEAD, PATCH"),
        ("GET", "/chat", "POST"),
        ("DELETE", "/sessions/s1/runs/r1", "GET, HEAD, PATCH"),
    ],
)
async def test_a_405_lists_every_method_of_the_path(keyed_app: FastAPI, method: str, path: str, allowed: str) -> None:
    async with http_client(keyed_app, "rt_acme_runtime_0123456789") as c:
        response = await c.request(method, path)
    assert response.status_code == 405
    assert response.headers["content-type"] == PROBLEM
    assert response.headers["allow"] == allowed


@pytest.mark.parametrize(
    ("path", "parameter"),
    [("/search?q=C%00", "q"), ("/search?q=a&tool=b%00", "tool"), ("/sessions/s1/search?q=%00x", "q")],
)
async def test_a_nul_in_search_text_is_422_not_a_database_error(
    client: httpx.AsyncClient, path: str, parameter: str
) -> None:
    problem_naming(await client.get(path), 422, parameter)
