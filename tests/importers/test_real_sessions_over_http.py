"""The real sessions (beside the checkout, never copied into it) imported the way a user imports them, over
HTTP, then read back through every view and ``/chat`` for every provider: each payload passes its provider's
checks, and the transcript lists every imported message in order. Skips when the folder is absent."""

from typing import Any

import httpx
import pytest

from app.importers.registry import parse_import
from app.projections.types import View
from app.providers.registry import SUPPORTED_PROVIDERS
from tests.importers import checks
from tests.importers.test_real_sessions import EXPECTED, FOLDER
from tests.providers.ai_sdk_preflight import Preflight
from tests.providers.payload_check import problems

pytestmark = pytest.mark.skipif(FOLDER is None, reason="the real sessions folder is absent")


async def every_page(client: httpx.AsyncClient, path: str, **params: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Every message of a listing or a paged view, and the ids the view hid."""
    messages: list[dict[str, Any]] = []
    hidden: list[str] = []
    cursor: str | None = None
    while True:
        page = await client.get(path, params={**params, "limit": 500, **({"after": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        messages += body["messages"]
        hidden += body.get("diagnostics", {}).get("hiddenMessageIds", [])
        if not body["hasMore"]:
            return messages, hidden
        cursor = body["nextCursor"]


@pytest.mark.parametrize("name", EXPECTED)
async def test_a_real_session_imported_over_http_serves_every_view_and_payload(
    client: httpx.AsyncClient, name: str, ai_sdk_preflight: Preflight
) -> None:
    assert FOLDER is not None
    path = FOLDER / name
    if not path.exists():
        pytest.skip(f"{name} is absent")
    format = name.split("/")[0]
    data = path.read_bytes()
    [session] = parse_import(format, data).sessions
    imported = await client.post(
        "/sessions/import", params={"format": format}, content=data, headers={"content-type": "application/json"}
    )
    assert imported.status_code == 201, imported.text
    [outcome] = imported.json()["sessions"]
    ids = [message.id for message in session.messages]
    assert (outcome["storedIds"], outcome["refused"]) == (ids, [])

    stored, _ = await every_page(client, f"/sessions/{session.id}/messages")
    assert [message["id"] for message in stored] == ids
    transcript, hidden = await every_page(client, f"/sessions/{session.id}/projection", view="transcript")
    shown = [message["sourceMessageIds"][0] for message in transcript]
    assert shown == sorted(shown, key=ids.index)
    assert sorted(shown + hidden, key=ids.index) == ids
    for view in View:
        response = await client.get(f"/sessions/{session.id}/projection", params={"view": str(view)})
        assert response.status_code == 200, (view, response.text)

    ai_sdk_payloads = []
    for provider in SUPPORTED_PROVIDERS:
        model = checks.model_for(provider, session)
        chat = await client.post(
            "/chat", json={"sessionId": session.id, "provider": provider, "model": model, "tools": checks.TOOLS}
        )
        assert chat.status_code == 200, (provider, chat.text)
        payload = chat.json()["payload"]
        assert problems(provider, payload, model=model) == [], provider
        if provider == "ai-sdk":
            ai_sdk_payloads.append(payload)
    assert [result for result in ai_sdk_preflight(ai_sdk_payloads) if not result["ok"]] == []
