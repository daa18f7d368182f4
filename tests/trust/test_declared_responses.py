"""Real requests to every operation of the API document, the successes and the refusals the README promises,
each answer held to what the document declares for it: a declared status, a declared content type, and a body
its schema accepts. Client generators build from the document, so an answer outside it breaks their clients.
The schemathesis run (``test_schema_fuzz.py``) sends generated input, which seldom gets past a 404 or a 422;
these requests reach the answers a real history gives (a compaction, a summarizer that fails, a usage)."""

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
import pytest
import schemathesis
from fastapi import FastAPI
from starlette.routing import compile_path

from app.main import create_app
from tests.conftest import settings_for_tests
from tests.context.fake_model_server import unused_base_url
from tests.trust.conftest import AppFactory, http_client
from tests.trust.keys import API_KEYS, OTHER_TENANT, READER, RUNTIME, WRITER

Check = Callable[[httpx.Response], httpx.Response]


@dataclass(frozen=True)
class Callers:
    """One client per role of tenant ``acme``, one without a key, and a runtime of another tenant."""

    anonymous: httpx.AsyncClient
    reader: httpx.AsyncClient
    writer: httpx.AsyncClient
    runtime: httpx.AsyncClient
    other: httpx.AsyncClient


class DeclaredAnswers:
    """Checks each answer against the app's own API document and records which operations were reached. The
    event stream is reached by its refusals: its 200 is a stream that never ends, by design."""

    def __init__(self, app: FastAPI) -> None:
        self.document = app.openapi()
        self.schema = schemathesis.openapi.from_dict(self.document)
        self.templates: list[tuple[re.Pattern[str], str]] = [
            (compile_path(template)[0], template) for template in self.document["paths"]
        ]
        self.reached: set[tuple[str, str]] = set()

    def operations(self) -> set[tuple[str, str]]:
        return {(method.upper(), path) for path, methods in self.document["paths"].items() for method in methods}

    def template(self, path: str) -> str:
        matches = [template for pattern, template in self.templates if pattern.match(path)]
        assert matches, f"{path} is no path of the API document"
        return matches[0]

    def check(self, response: httpx.Response) -> httpx.Response:
        method, template = response.request.method, self.template(response.request.url.path)
        operation = self.document["paths"][template][method.lower()]
        where = f"{method} {template} answered {response.status_code}"
        declared = operation["responses"].get(str(response.status_code))
        assert declared is not None, f"{where}, a status its document does not declare: {response.text[:300]}"
        content = declared.get("content", {})
        media_type = response.headers.get("content-type", "").split(";")[0].strip()
        if content:
            assert media_type in content, f"{where} as {media_type!r}; its document declares {sorted(content)}"
        else:
            assert not response.content, f"{where} with a body; its document declares none"
        self.schema[template][method].validate_response(response)
        self.reached.add((method, template))
        return response


@pytest.fixture
async def trusted(trust_app: AppFactory) -> AsyncIterator[FastAPI]:
    """Keys on (so the walls can be reached), a summarizer nobody answers for (502), one live Idempotency-Key
    a tenant (429)."""
    settings = {
        "api_keys": orjson.dumps(API_KEYS).decode(),
        "summarizer_base_url": unused_base_url(),
        "summarizer_model": "summarizer",
        "idempotency_max_keys_per_tenant": 1,
    }
    async with trust_app(**settings) as application:
        yield application


def history() -> list[dict[str, Any]]:
    """A turn with reasoning, a tool call and its result, an error result, usage on the answers, and a
    reminder: what gives every view, the analytics and the cost something to say."""
    return [
        {"id": "u1", "role": "user", "content": "Why does the build fail?", "runId": "r1"},
        {
            "id": "a1",
            "role": "assistant",
            "runId": "r1",
            "content": [
                {"type": "reasoning", "text": "Read the log.", "providerOptions": {"anthropic": {"signature": "s"}}},
                {"type": "text", "text": "Let me look."},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "make"}},
                {"type": "tool-call", "toolCallId": "c2", "toolName": "bash", "input": {"command": "cat log"}},
            ],
            "metadata": {
                "model": "anthropic/claude-sonnet-4-5",
                "usage": {"inputTokens": 1200, "outputTokens": 40, "cacheReadTokens": 10, "cacheWriteTokens": 5},
            },
        },
        {
            "id": "t1",
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "bash",
                    "output": {"type": "text", "value": "x" * 4000},
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "toolName": "bash",
                    "output": {"type": "error-text", "value": "no log"},
                },
            ],
        },
        {"id": "rem", "role": "system", "content": "Be brief.", "metadata": {"runtimeKind": "runtime_reminder"}},
        {"id": "u2", "role": "user", "content": [{"type": "text", "text": "And now?"}]},
        {
            "id": "a2",
            "role": "assistant",
            "content": "Fixed.",
            "metadata": {"model": "openai/gpt-5", "usage": {"inputTokens": 9, "outputTokens": 2}},
        },
        {"id": "u3", "role": "user", "content": "Thanks."},
    ]


async def sessions(check: Check, callers: Callers) -> None:
    """Health, the key wall, sessions created, listed and read, and headers past the limits."""
    check(await callers.anonymous.get("/healthz"))
    check(await callers.anonymous.get("/readyz"))
    check(await callers.anonymous.get("/sessions"))
    session = {"id": "s1", "title": "Fix the build", "model": "anthropic/claude-sonnet-4-5"}
    check(await callers.reader.post("/sessions", json=session))
    check(await callers.writer.post("/sessions", json=session))
    check(await callers.writer.post("/sessions", json=session))
    check(await callers.writer.post("/sessions", json={"id": "a/b"}))
    check(await callers.writer.post("/sessions", json={"title": "no model"}))
    check(await callers.writer.get("/sessions", params={"limit": 1}))
    check(await callers.writer.get("/sessions", params={"cursor": "forged"}))
    check(await callers.writer.get("/sessions/s1"))
    check(await callers.other.get("/sessions/s1"))
    check(await callers.writer.get("/sessions/s1", headers={f"x-extra-{n}": "1" for n in range(120)}))
    check(await callers.writer.get("/sessions/s1", headers={"Projector-Consistency": "not a position"}))


async def runs(check: Check, callers: Callers) -> None:
    """Runs created, listed, read and amended."""
    run = {"id": "r1", "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}, "variant": "high"}
    check(await callers.writer.post("/sessions/s1/runs", json=run))
    check(await callers.writer.post("/sessions/s1/runs", json=run))
    check(await callers.writer.post("/sessions/s1/runs", json={"id": "r2", "tools": {"bash": True}, "system": "Sys."}))
    check(await callers.writer.post("/sessions/s1/runs", json={"variant": "loud"}))
    check(await callers.writer.get("/sessions/s1/runs", params={"limit": 1, "order": "desc"}))
    check(await callers.writer.get("/sessions/s1/runs/r1"))
    check(await callers.writer.get("/sessions/s1/runs/none"))
    check(
        await callers.writer.patch(
            "/sessions/s1/runs/r1", json={"usage": {"inputTokens": 1}, "result": {"finish": "stop"}}
        )
    )
    check(await callers.writer.patch("/sessions/s1/runs/none", json={}))


async def messages(check: Check, callers: Callers) -> None:
    """Appends, replays, conflicts, reserved kinds, sizes, Idempotency-Keys, pages and amendments."""
    messages = history()
    check(await callers.runtime.post("/sessions/s1/messages", json={"messages": messages}))
    check(await callers.runtime.post("/sessions/s1/messages", json={"messages": messages}))
    check(
        await callers.writer.post(
            "/sessions/s1/messages", json={"messages": [{"id": "u1", "role": "user", "content": "?"}]}
        )
    )
    check(
        await callers.writer.post(
            "/sessions/s1/messages", json={"messages": [{"role": "user", "content": [{"type": "tool-call"}]}]}
        )
    )
    check(
        await callers.writer.post(
            "/sessions/s1/messages",
            json={"messages": [{"role": "system", "content": "r", "metadata": {"runtimeKind": "runtime_reminder"}}]},
        )
    )
    huge = {"role": "user", "content": "big", "metadata": {"blob": "x" * 300_000}}
    check(await callers.writer.post("/sessions/s1/messages", json={"messages": [huge]}))
    check(await callers.writer.post("/sessions/none/messages", json={"messages": [{"role": "user", "content": "hi"}]}))
    # Kept, replayed, the key reused for another body, and a second key.
    for message_id, text, key in (("k1", "a", "k1"), ("k1", "a", "k1"), ("k2", "b", "k1"), ("k3", "c", "k2")):
        message = {"id": message_id, "role": "user", "content": text}
        check(
            await callers.writer.post(
                "/sessions/s1/messages", json={"messages": [message]}, headers={"Idempotency-Key": key}
            )
        )
    check(await callers.writer.post("/sessions", json={"title": "x"}, headers={"Idempotency-Key": ""}))
    page = check(await callers.writer.get("/sessions/s1/messages", params={"limit": 2})).json()
    check(await callers.writer.get("/sessions/s1/messages", params={"limit": 2, "after": page["nextCursor"]}))
    check(await callers.writer.get("/sessions/s1/messages", params={"order": "desc", "limit": 600}))
    check(await callers.writer.get("/sessions/s1/messages", params={"after": "forged"}))
    check(await callers.writer.get("/sessions/s1/messages/a1"))
    check(await callers.writer.get("/sessions/s1/messages/none"))
    check(await callers.writer.patch("/sessions/s1/messages/a1", json={"metadata": {"note": "seen"}}))
    check(
        await callers.writer.patch(
            "/sessions/s1/messages/a1", json={"metadata": {"compactedAt": "2026-01-01T00:00:00Z"}}
        )
    )
    check(await callers.writer.patch("/sessions/s1/messages/a1", json={"metadata": {"runtimeKind": "compact_summary"}}))
    check(await callers.writer.patch("/sessions/s1/messages/none", json={"metadata": {}}))


async def views(check: Check, callers: Callers) -> None:
    """Every view, its 304, pages, the Markdown export and the refusals."""
    for view in ("transcript", "model", "compact", "debug", "export"):
        answer = check(await callers.reader.get("/sessions/s1/projection", params={"view": view}))
        check(
            await callers.reader.get(
                "/sessions/s1/projection", params={"view": view}, headers={"If-None-Match": answer.headers["etag"]}
            )
        )
    check(await callers.reader.get("/sessions/s1/projection", params={"view": "debug", "limit": 2, "order": "desc"}))
    check(
        await callers.reader.get("/sessions/s1/projection", params={"view": "export", "format": "markdown", "limit": 2})
    )
    check(await callers.reader.get("/sessions/s1/projection", params={"view": "model", "limit": 2}))
    check(await callers.reader.get("/sessions/s1/projection", params={"view": "model", "unknown": 1}))
    check(await callers.other.get("/sessions/s1/projection", params={"view": "model"}))


async def chat_and_context(check: Check, callers: Callers) -> None:
    """Every provider's payload and the context report."""
    targets = [
        ("openai", "gpt-5"),
        ("openai-responses", "gpt-5"),
        ("anthropic", "claude-sonnet-4-5"),
        ("gemini", "gemini-2.5-pro"),
        ("ai-sdk", "anthropic/claude-sonnet-4-5"),
    ]
    tools = [{"name": "bash", "description": "Run a command", "inputSchema": {"type": "object"}}]
    for provider, model in targets:
        body = {"sessionId": "s1", "provider": provider, "model": model, "system": "Sys.", "tools": tools}
        check(await callers.reader.post("/chat", json=body))
        check(await callers.writer.post("/chat", json=body))
    check(await callers.writer.post("/chat", json={"sessionId": "s1", "runId": "r1", "provider": "anthropic"}))
    check(
        await callers.writer.post(
            "/chat", json={"sessionId": "s1", "provider": "openai", "model": "gpt-5", "prefill": True}
        )
    )
    check(await callers.writer.post("/chat", json={"sessionId": "none", "provider": "openai", "model": "gpt-5"}))
    check(await callers.writer.post("/chat", json={"sessionId": "s1", "provider": "elsewhere"}))
    check(await callers.reader.get("/sessions/s1/context"))
    check(
        await callers.reader.get(
            "/sessions/s1/context", params={"model": "gpt-5", "provider": "openai", "maxOutputTokens": 1000}
        )
    )
    check(await callers.reader.get("/sessions/none/context"))


async def prune_and_compact(check: Check, callers: Callers) -> None:
    """Pruning and compaction, the summarizer that fails among them, and the views after."""
    check(await callers.writer.post("/sessions/s1/prune", json={}))
    check(await callers.runtime.post("/sessions/s1/prune", json={"dryRun": True}))
    check(
        await callers.runtime.post(
            "/sessions/s1/prune", json={"protectUserTurns": 0, "protectToolTokens": 0, "minimumSavingsTokens": 0}
        )
    )
    check(await callers.runtime.post("/sessions/s1/prune", json={"protectUserTurns": -1}))
    check(await callers.writer.post("/sessions/s1/compactions", json={"summary": "So far."}))
    check(await callers.runtime.post("/sessions/s1/compactions", json={}))
    check(await callers.runtime.post("/sessions/s1/compactions", json={"summary": ""}))
    check(await callers.runtime.post("/sessions/s1/compactions", json={"summary": "So far.", "throughMessageId": "a2"}))
    check(await callers.runtime.post("/sessions/none/compactions", json={"summary": "So far."}))
    for view in ("transcript", "model", "debug"):
        check(await callers.reader.get("/sessions/s1/projection", params={"view": view}))
    check(await callers.reader.get("/sessions/s1/context"))


async def search_and_analytics(check: Check, callers: Callers) -> None:
    """Search and analytics, in a session and across the tenant."""
    check(await callers.reader.get("/search", params={"q": "build"}))
    check(await callers.reader.get("/search", params={"q": "build", "cursor": "forged"}))
    check(await callers.reader.get("/search", params={"q": "build", "kind": "no_such_kind"}))
    check(await callers.reader.get("/sessions/s1/search", params={"q": "log", "role": "tool", "tool": "bash"}))
    check(await callers.other.get("/sessions/s1/search", params={"q": "log"}))
    check(await callers.reader.get("/sessions/s1/analytics"))
    check(await callers.other.get("/sessions/s1/analytics"))
    check(await callers.reader.get("/analytics", params={"from": "2020-01-01T00:00:00Z", "limit": 1}))
    check(await callers.reader.get("/analytics", params={"from": "2030-01-01T00:00:00Z", "to": "2020-01-01T00:00:00Z"}))


async def archive_import_and_events(check: Check, callers: Callers) -> None:
    """An archive and its import, a cut one, a strict import, and the event stream's refusals."""
    archive = check(await callers.reader.get("/sessions/s1/archive")).content
    check(await callers.other.get("/sessions/s1/archive"))
    ndjson = {"content-type": "application/x-ndjson"}
    copy = {"format": "projector", "sessionId": "s1-copy"}
    check(await callers.writer.post("/sessions/import", params=copy, content=archive, headers=ndjson))
    check(await callers.runtime.post("/sessions/import", params=copy, content=archive, headers=ndjson))
    check(await callers.runtime.post("/sessions/import", params=copy, content=archive, headers=ndjson))
    check(await callers.runtime.post("/sessions/import", params=copy, content=archive[:-10], headers=ndjson))
    check(
        await callers.runtime.post(
            "/sessions/import", params={"format": "claude-code", "strict": True}, content=b"{", headers=ndjson
        )
    )
    check(await callers.reader.get("/sessions/none/events"))
    check(await callers.reader.get("/sessions/s1/events", params={"after": "forged"}))


async def deletion(check: Check, callers: Callers) -> None:
    """Deleting a session: the wall, the deletion, the second time."""
    check(await callers.writer.delete("/sessions/s1"))
    check(await callers.runtime.delete("/sessions/s1"))
    check(await callers.runtime.delete("/sessions/s1"))


TOURS = [
    sessions,
    runs,
    messages,
    views,
    chat_and_context,
    prune_and_compact,
    search_and_analytics,
    archive_import_and_events,
    deletion,
]
"""In order: each leaves what the next reads."""


async def test_every_operation_answers_within_what_its_document_declares(trusted: FastAPI) -> None:
    declared = DeclaredAnswers(trusted)
    async with (
        http_client(trusted) as anonymous,
        http_client(trusted, READER) as reader,
        http_client(trusted, WRITER) as writer,
        http_client(trusted, RUNTIME) as runtime,
        http_client(trusted, OTHER_TENANT) as other,
    ):
        callers = Callers(anonymous, reader, writer, runtime, other)
        for tour in TOURS:
            await tour(declared.check, callers)

    unreached = declared.operations() - declared.reached
    assert unreached == set(), "operations of the API document sent nothing here: add their requests"


def test_every_json_answer_the_document_declares_has_a_schema_naming_its_fields() -> None:
    """An empty schema tells a client generator nothing: it types the answer as anything."""
    document = create_app(settings_for_tests()).openapi()
    unnamed = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            for status, answer in operation["responses"].items():
                json = answer.get("content", {}).get("application/json")
                if status.startswith("2") and json is not None and not json.get("schema"):
                    unnamed.append(f"{method.upper()} {path} {status}")
    assert unnamed == []


def test_every_operation_declares_the_refusals_any_request_may_get() -> None:
    """The middleware answers these before a route runs, on whatever path: a body that stops arriving (408),
    headers past the limits (431), besides the key (401) and the database (503)."""
    document = create_app(settings_for_tests()).openapi()
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            for status in ("401", "408", "413", "431", "503"):
                answer = operation["responses"].get(status)
                assert answer is not None, f"{method.upper()} {path} does not declare {status}"
                assert "application/problem+json" in answer["content"]
