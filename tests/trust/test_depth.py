"""Nesting is bounded where every write passes: a value deeper than ``max_json_depth`` is refused with a 422
naming its field, and the deepest value accepted still renders in every response that holds it. Without the
bound, a message 250 levels deep was stored and then failed every page, view and payload holding it."""

from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.api.wire import tool_call, user
from tests.trust.conftest import AppFactory, http_client

DEEPEST_SETTING = Settings.model_fields["max_json_depth"].metadata[-1].le
PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini", "ai-sdk")


def nested(levels: int) -> Any:
    """A value that nests exactly ``levels`` objects and arrays deep (objects and arrays by turns)."""
    value: Any = "leaf"
    for level in range(levels):
        value = {"k": value} if level % 2 else [value]
    return value


def deep_call(levels: int) -> dict[str, Any]:
    """A tool call whose stored content nests ``levels`` deep: content list, part, input, then the rest."""
    return tool_call("c1", "probe", id="m2", deep=nested(levels - 3))


def deep_tools(levels: int) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"p": {"type": "string"}}, "x-deep": nested(levels - 7)}
    return [{"name": "probe", "description": "d", "inputSchema": schema}]


async def refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["field"] == field
    assert "deeper than" in response.json()["detail"]


async def test_a_message_250_levels_deep_is_refused_and_nothing_is_stored(trust_app: AppFactory) -> None:
    async with trust_app() as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        deep_metadata = user("hi", deep=nested(249))
        await refused(await c.post("/sessions/s1/messages", json={"messages": [deep_metadata]}), "messages[0].metadata")
        batch = [user("fine"), deep_call(250)]
        await refused(await c.post("/sessions/s1/messages", json={"messages": batch}), "messages[1].content")
        assert (await c.get("/sessions/s1")).json()["messageCount"] == 0
        assert (await c.get("/sessions/s1/messages")).status_code == 200


def deep_format(levels: int) -> dict[str, Any]:
    """A structured-output format whose schema nests so that the whole format is ``levels`` deep."""
    return {"type": "json_schema", "schema": {"x-deep": nested(levels - 2)}}


@pytest.mark.parametrize("field", ["tools", "format", "metadata"])
async def test_a_run_too_deep_is_refused_naming_the_field(trust_app: AppFactory, field: str) -> None:
    value = {"tools": [{"x": nested(64)}], "format": deep_format(65), "metadata": {"x": nested(64)}}[field]
    async with trust_app() as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        await refused(await c.post("/sessions/s1/runs", json={"id": "r1", field: value}), field)
        assert (await c.get("/sessions/s1/runs/r1")).status_code == 404


@pytest.mark.parametrize("field", ["usage", "result", "metadata"])
async def test_a_run_amendment_too_deep_is_refused_naming_the_field(trust_app: AppFactory, field: str) -> None:
    value = {"usage": {"x": nested(64)}, "result": nested(65), "metadata": {"x": nested(64)}}[field]
    async with trust_app() as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        await c.post("/sessions/s1/runs", json={"id": "r1"})
        await refused(await c.patch("/sessions/s1/runs/r1", json={field: value}), field)


async def test_a_session_or_an_amendment_too_deep_is_refused(trust_app: AppFactory) -> None:
    async with trust_app(max_json_depth=10) as application, http_client(application) as c:
        await refused(await c.post("/sessions", json={"id": "s1", "metadata": {"x": nested(10)}}), "metadata")
        assert (await c.post("/sessions", json={"id": "s1", "metadata": {"x": nested(9)}})).status_code == 201
        await c.post("/sessions/s1/messages", json={"messages": [user("hi", id="m1")]})
        await refused(await c.patch("/sessions/s1/messages/m1", json={"metadata": {"x": nested(10)}}), "metadata")
        assert (await c.get("/sessions/s1/messages/m1")).json()["metadata"] == {}


async def test_brackets_inside_text_do_not_count_as_nesting(trust_app: AppFactory) -> None:
    async with trust_app(max_json_depth=3) as application, http_client(application) as c:
        text = '[[[[{"a": [[[["\\\\"]]]]}]]]] \\" ['
        response = await c.post("/sessions", json={"id": "s1", "metadata": {"note": text, "k": [[1]]}})
        assert response.status_code == 201, response.text
        assert response.json()["metadata"]["note"] == text


async def test_the_deepest_accepted_values_render_in_every_response(trust_app: AppFactory) -> None:
    """At the highest depth the setting allows, every write succeeds and every read that holds the values
    answers: pages, single reads, every view, the Markdown export, the context report and each provider."""
    depth = DEEPEST_SETTING
    async with trust_app(max_json_depth=depth) as application, http_client(application) as c:
        session = {"id": "s1", "model": "anthropic/claude-sonnet-4-5", "metadata": {"x": nested(depth - 1)}}
        writes = [
            await c.post("/sessions", json=session),
            await c.post(
                "/sessions/s1/runs",
                json={
                    "id": "r1",
                    "model": "claude-sonnet-4-5",
                    "tools": deep_tools(depth),
                    "format": deep_format(depth),
                    "metadata": {"x": nested(depth - 1)},
                },
            ),
            await c.patch("/sessions/s1/runs/r1", json={"usage": {"x": nested(depth - 1)}, "result": nested(depth)}),
            await c.post(
                "/sessions/s1/messages",
                json={
                    "messages": [
                        user("go", id="m1", deep=nested(depth - 1)),
                        deep_call(depth),
                        {
                            "id": "m3",
                            "role": "tool",
                            "content": [
                                {
                                    "type": "tool-result",
                                    "toolCallId": "c1",
                                    "toolName": "probe",
                                    "output": {"type": "json", "value": nested(depth - 3)},
                                }
                            ],
                        },
                    ]
                },
            ),
            await c.patch("/sessions/s1/messages/m1", json={"metadata": {"more": nested(depth - 1)}}),
        ]
        assert [response.status_code for response in writes] == [201, 201, 200, 201, 200], [w.text for w in writes]
        reads = [
            await c.get("/sessions"),
            await c.get("/sessions/s1"),
            await c.get("/sessions/s1/messages"),
            await c.get("/sessions/s1/messages/m2"),
            await c.get("/sessions/s1/runs/r1"),
            await c.get("/sessions/s1/context"),
            await c.get("/sessions/s1/projection", params={"view": "export", "format": "markdown", "redact": "true"}),
            *[await c.get("/sessions/s1/projection", params={"view": view}) for view in VIEWS],
            *[
                await c.post("/chat", json={"sessionId": "s1", "runId": "r1", "provider": provider})
                for provider in PROVIDERS
            ],
        ]
        failed = [(response.request.url, response.status_code, response.text[:200]) for response in reads]
        assert [status for _, status, _ in failed] == [200] * len(reads), failed


VIEWS = ("transcript", "model", "compact", "debug", "export")


def brackets(levels: int) -> str:
    """JSON text nesting ``levels`` arrays: past about a thousand, deeper than Python's JSON reader follows."""
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [1_000, 1_020, 100_000])
async def test_a_body_nested_past_what_a_json_reader_follows_is_a_422_on_every_json_route(
    trust_app: AppFactory, levels: int
) -> None:
    deep = brackets(levels)
    as_json = {"content-type": "application/json"}
    large = " " * 300_000  # past the size from which a body is read in a worker thread
    async with trust_app() as application, http_client(application) as c:
        await c.post("/sessions", json={"id": "s1"})
        answers = [
            await c.post("/sessions", content=f'{{"metadata": {{"x": {deep}}}}}', headers=as_json),
            await c.post("/sessions/s1/messages", content=f'{{"messages": {deep}}}', headers=as_json),
            await c.post("/sessions/s1/messages", content=f'{{"messages": [{deep}]}}{large}', headers=as_json),
            await c.post("/sessions/s1/messages", content=f'{{"messages": {deep}}}{large}', headers=as_json),
            await c.post(
                "/chat", content=f'{{"sessionId": "s1", "provider": "anthropic", "tools": {deep}}}', headers=as_json
            ),
            await c.patch("/sessions/s1/messages/m1", content=f'{{"metadata": {deep}}}', headers=as_json),
        ]
        assert [answer.status_code for answer in answers] == [422] * len(answers), [a.text for a in answers]
        assert all(answer.headers["content-type"] == "application/problem+json" for answer in answers)
        for format, body in [
            ("openai-chat", deep),
            ("openai-chat", f'{{"messages": [{{"role": "user", "content": {deep}}}]}}'),
            ("claude-code", f'{{"type": "user", "message": {{"role": "user", "content": {deep}}}}}\n'),
            ("pi", f'{{"type": "message", "message": {{"role": "user", "content": {deep}}}}}\n'),
        ]:
            imported = await c.post("/sessions/import", params={"format": format, "strict": "true"}, content=body)
            assert imported.status_code == 422, (format, imported.text)
        assert (await c.get("/sessions/s1")).json()["messageCount"] == 0
