"""The security pass, pinned: SQL binds every value, API keys never reach the logs, and an export asked to
redact shows no secret in any form (JSON or Markdown; text, tool input, tool output)."""

import ast
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi import FastAPI

from app.observability import JsonFormatter
from tests.trust.conftest import AppFactory, http_client
from tests.trust.keys import API_KEYS, OTHER_TENANT, READER, RUNTIME, WRITER

ROOT = Path(__file__).resolve().parents[2]


def string_built_sql(tree: ast.AST) -> list[int]:
    """Lines where ``text(...)`` or ``.execute(...)`` gets a string assembled at run time (f-string, ``%``,
    ``+`` or ``.format``), the shape through which values end up inside SQL instead of bound to it."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in ("text", "execute", "exec_driver_sql", "fetch", "fetchrow", "fetchval"):
            continue
        first = node.args[0]
        assembled = isinstance(first, ast.JoinedStr | ast.BinOp) or (
            isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "format"
        )
        if assembled:
            found.append(node.lineno)
    return found


def test_no_sql_in_the_app_or_its_migrations_is_assembled_from_strings() -> None:
    sources = [*sorted((ROOT / "app").rglob("*.py")), *sorted((ROOT / "alembic").rglob("*.py"))]
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in sources
        if (lines := string_built_sql(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


def test_the_scan_recognises_assembled_sql() -> None:
    sample = 'text(f"SELECT {x}")\nconnection.execute("SELECT " + x)\ntext("SELECT :x")\n'
    assert string_built_sql(ast.parse(sample)) == [1, 2]


async def test_api_keys_never_reach_the_logs(keyed_app: FastAPI, caplog: pytest.LogCaptureFixture) -> None:
    formatter = JsonFormatter()
    with caplog.at_level(logging.DEBUG):
        for key in (READER, WRITER, RUNTIME, OTHER_TENANT, "sk-not-configured-0123456789"):
            async with http_client(keyed_app, key) as client:
                await client.post("/sessions", json={"id": "s1"}, headers={"idempotency-key": "logged?"})
                await client.post("/sessions/s1/messages", json={"messages": [{"role": "nobody"}]})
                await client.get("/sessions/s1/messages", params={"after": "not-a-cursor"})
                await client.delete("/sessions/s1")
    lines = [formatter.format(record) for record in caplog.records]
    assert any('"status":401' in line for line in lines)  # the access log did record these requests
    for secret in (READER, WRITER, RUNTIME, OTHER_TENANT, "sk-not-configured-0123456789"):
        assert not [line for line in lines if secret in line]


SECRETS = {
    "openai": "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "aws": "AKIAABCDEFGHIJKLMNOP",
    "password": "hunter2hunter2",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
}


def history_with_secrets() -> list[dict[str, Any]]:
    call = {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "deploy",
        "input": {"token": SECRETS["github"], "command": f"login --password={SECRETS['password']}"},
    }
    result = {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "deploy",
        "output": {"type": "text", "value": f"AWS_ACCESS_KEY_ID={SECRETS['aws']} ok"},
    }
    return [
        {"id": "m1", "role": "user", "content": f"my key is {SECRETS['openai']}, deploy please"},
        {"id": "m2", "role": "assistant", "content": [call]},
        {"id": "m3", "role": "tool", "content": [result]},
    ]


async def seeded_with_secrets(app: FastAPI) -> None:
    async with http_client(app, WRITER) as writer:
        await writer.post("/sessions", json={"id": "s1", "title": "deploy"})
        appended = await writer.post("/sessions/s1/messages", json={"messages": history_with_secrets()})
        assert appended.status_code == 201


async def test_an_export_asked_to_redact_shows_no_secret_in_json_or_markdown(keyed_app: FastAPI) -> None:
    await seeded_with_secrets(keyed_app)
    async with http_client(keyed_app, RUNTIME) as runtime:
        plain = await runtime.get("/sessions/s1/projection", params={"view": "export"})
        redacted = await runtime.get("/sessions/s1/projection", params={"view": "export", "redact": "true"})
        markdown = await runtime.get(
            "/sessions/s1/projection", params={"view": "export", "redact": "true", "format": "markdown"}
        )
    assert plain.status_code == redacted.status_code == markdown.status_code == 200
    assert SECRETS["openai"] in plain.text  # for a runtime or writer key, redaction is asked for, not imposed
    for body in (redacted.text, markdown.text, orjson.dumps(redacted.json()).decode()):
        assert [name for name, secret in SECRETS.items() if secret in body] == []
    assert "[REDACTED" in markdown.text
    assert [m["sourceMessageIds"] for m in redacted.json()["messages"]] == [["m1"], ["m2"], ["m3"]]


async def test_a_reader_key_gets_exports_redacted_even_when_it_asks_otherwise(keyed_app: FastAPI) -> None:
    await seeded_with_secrets(keyed_app)
    async with http_client(keyed_app, READER) as reader, http_client(keyed_app, RUNTIME) as runtime:
        unasked = await reader.get("/sessions/s1/projection", params={"view": "export"})
        refused = await reader.get("/sessions/s1/projection", params={"view": "export", "redact": "false"})
        markdown = await reader.get("/sessions/s1/projection", params={"view": "export", "format": "markdown"})
        plain = await runtime.get("/sessions/s1/projection", params={"view": "export"})
    for body in (unasked.text, refused.text, markdown.text):
        assert [name for name, secret in SECRETS.items() if secret in body] == []
    # Another caller's plain copy never answers the reader's revalidation.
    assert unasked.headers["etag"] != plain.headers["etag"]


async def test_a_redacted_markdown_export_masks_a_secret_in_the_sessions_title(keyed_app: FastAPI) -> None:
    async with http_client(keyed_app, WRITER) as writer:
        title = f"deploy with {SECRETS['github']}"
        assert (await writer.post("/sessions", json={"id": "s1", "title": title})).status_code == 201
        await writer.post("/sessions/s1/messages", json={"messages": history_with_secrets()})
    markdown = {"view": "export", "format": "markdown"}
    async with http_client(keyed_app, READER) as reader, http_client(keyed_app, RUNTIME) as runtime:
        answers = [
            await reader.get("/sessions/s1/projection", params=markdown),
            await reader.get("/sessions/s1/projection", params={**markdown, "limit": "1"}),
            await reader.get("/sessions/s1/projection", params={**markdown, "order": "desc"}),
            await runtime.get("/sessions/s1/projection", params={**markdown, "redact": "true"}),
        ]
        plain = await runtime.get("/sessions/s1/projection", params=markdown)
    for answer in answers:
        assert answer.status_code == 200
        assert answer.text.startswith("# deploy with [REDACTED"), answer.text[:80]
        assert [name for name, secret in SECRETS.items() if secret in answer.text] == []
    assert plain.text.startswith(f"# {title}\n")


async def test_an_operator_may_let_reader_keys_choose(trust_app: AppFactory) -> None:
    async with trust_app(api_keys=orjson.dumps(API_KEYS).decode(), redact_reader_exports=False) as application:
        await seeded_with_secrets(application)
        async with http_client(application, READER) as reader:
            plain = await reader.get("/sessions/s1/projection", params={"view": "export"})
    assert SECRETS["openai"] in plain.text
