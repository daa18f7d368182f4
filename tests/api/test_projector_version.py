"""A view's ETag names the projector version, so a client that kept a view from before an upgrade revalidates it
(304) only while the new code would answer it with the same bytes: every view of a fixed history, pinned by
digest to the version that answers it."""

import hashlib
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from app.projections.types import PROJECTOR_VERSION

VIEW_DIGESTS = {
    "3": "14c6ef97b2bf6e9985180a67b12ff970167bc010fab04d77a9f871db5be5f55d",
}
"""What every view of ``HISTORY`` hashes to, by the projector version that answers it. A view answering
differently fails here: bump ``PROJECTOR_VERSION`` and put its digest in place of the old one, so that no client
keeps the old answer."""

SESSION = "notes on deploy#1"
"""An id the Markdown export's next-page link has to percent-encode."""

HISTORY: list[dict[str, Any]] = [
    {"id": "sys", "role": "system", "content": "You fix builds."},
    {"id": "u1", "role": "user", "content": "Why does the build fail? <main.c> 🙂 sk-ant-api03-abcdefghijklmnopqrstu"},
    {
        "id": "a1",
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "Read the log.", "providerOptions": {"anthropic": {"signature": "sig"}}},
            {"type": "text", "text": "Reading it."},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "input": {"path": "build.log", "n": 1.5}},
        ],
        "metadata": {"model": "claude-sonnet-4-5"},
    },
    {
        "id": "t1",
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "Read",
                "output": {"type": "text", "value": "error: missing ;\n" * 40},
            }
        ],
        "metadata": {"compactedAt": "2026-11-30T00:00:00Z"},
    },
    {"id": "a2", "role": "assistant", "content": "A missing `;`."},
    {"id": "u2", "role": "user", "content": "Add a test."},
    {
        "id": "b1",
        "role": "system",
        "content": "compacted",
        "metadata": {"runtimeKind": "compact_boundary", "compactThroughMessageId": "a2"},
    },
    {
        "id": "s1",
        "role": "user",
        "content": "Fixed the `;` in main.c.",
        "metadata": {"runtimeKind": "compact_summary", "summaryForBoundaryId": "b1"},
    },
    {"id": "r1", "role": "system", "content": "Keep it short.", "metadata": {"runtimeKind": "runtime_reminder"}},
    {"id": "u3", "role": "user", "content": "Why is CI slow?"},
    {"id": "a3", "role": "assistant", "content": "No cache."},
]

REQUESTS: list[dict[str, str]] = [
    {"view": "transcript", "limit": "500"},
    {"view": "model"},
    {"view": "model", "model": "claude-sonnet-4-5", "provider": "anthropic"},
    {"view": "model", "model": "gpt-5", "provider": "openai"},
    {"view": "compact"},
    {"view": "debug", "limit": "500"},
    {"view": "export", "limit": "500"},
    {"view": "export", "limit": "500", "redact": "true"},
    {"view": "export", "format": "markdown"},
    {"view": "export", "format": "markdown", "redact": "true"},
    {"view": "export", "format": "markdown", "limit": "4"},
]


def without_times(value: Any) -> Any:
    """The body without the times the server stamped the history with."""
    if isinstance(value, dict):
        return {key: without_times(item) for key, item in value.items() if key != "createdAt"}
    if isinstance(value, list):
        return [without_times(item) for item in value]
    return value


async def test_a_views_answer_changes_only_with_the_projector_version(client: httpx.AsyncClient) -> None:
    title = "Deploy with sk-ant-api03-abcdefghijklmnopqrstu"
    assert (await client.post("/sessions", json={"id": SESSION, "title": title})).status_code == 201
    path = f"/sessions/{quote(SESSION, safe='')}"
    assert (await client.post(f"{path}/messages", json={"messages": HISTORY})).status_code == 201
    digest = hashlib.sha256()
    for params in REQUESTS:
        response = await client.get(f"{path}/projection", params=params)
        assert response.status_code == 200, response.text
        body = response.content if params.get("format") == "markdown" else without_times(response.json())
        digest.update(body if isinstance(body, bytes) else orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
    assert digest.hexdigest() == VIEW_DIGESTS.get(PROJECTOR_VERSION), (
        "the views answer differently for the same history: bump PROJECTOR_VERSION and pin the new digest"
    )
