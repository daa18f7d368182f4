"""CORS is off unless origins are configured; when on, browsers may send the key and Idempotency-Key and read
the headers clients rely on. Only preflights and header checks: no database is needed."""

import httpx
import pytest

from app.main import create_app
from tests.conftest import settings_for_tests

PREFLIGHT = {
    "origin": "https://app.example",
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type, idempotency-key",
}


def client(**overrides: object) -> httpx.AsyncClient:
    app = create_app(settings_for_tests(**overrides))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


async def test_cors_is_off_by_default() -> None:
    async with client() as http:
        preflight = await http.options("/sessions", headers=PREFLIGHT)
        simple = await http.get("/healthz", headers={"origin": "https://app.example"})
    assert "access-control-allow-origin" not in preflight.headers
    assert preflight.status_code == 405
    assert "access-control-allow-origin" not in simple.headers


async def test_configured_origins_may_send_keys_and_read_the_headers_clients_need() -> None:
    async with client(cors_origins=["https://app.example"]) as http:
        preflight = await http.options("/sessions", headers=PREFLIGHT)
        simple = await http.get("/healthz", headers={"origin": "https://app.example"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert {"authorization", "content-type", "idempotency-key"} <= {h.strip() for h in allowed.split(",")}
    assert "access-control-allow-credentials" not in preflight.headers
    exposed = simple.headers["access-control-expose-headers"].lower()
    assert {"etag", "location", "idempotent-replayed", "x-request-id"} <= {h.strip() for h in exposed.split(",")}


async def test_a_browser_may_resume_an_event_stream_and_follow_a_markdown_pages_link() -> None:
    resume = {
        **PREFLIGHT,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization, last-event-id",
    }
    async with client(cors_origins=["https://app.example"]) as http:
        preflight = await http.options("/sessions/s1/events", headers=resume)
        simple = await http.get("/healthz", headers={"origin": "https://app.example"})
    assert preflight.status_code == 200, preflight.text
    assert "link" in {h.strip() for h in simple.headers["access-control-expose-headers"].lower().split(",")}


async def test_other_origins_are_not_allowed() -> None:
    async with client(cors_origins=["https://app.example"]) as http:
        preflight = await http.options("/sessions", headers={**PREFLIGHT, "origin": "https://evil.example"})
        simple = await http.get("/healthz", headers={"origin": "https://evil.example"})
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in simple.headers


def test_origins_are_read_from_the_environment_as_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECTOR_CORS_ORIGINS", "https://a.example, https://b.example")
    assert settings_for_tests().cors_origins == ["https://a.example", "https://b.example"]


async def test_a_browser_may_ask_for_the_head_of_what_it_may_get() -> None:
    """Every ``GET`` answers ``HEAD`` (an ETag checked without the body); with the key it needs a preflight."""
    head = {**PREFLIGHT, "access-control-request-method": "HEAD", "access-control-request-headers": "authorization"}
    async with client(cors_origins=["https://app.example"]) as http:
        preflight = await http.options("/sessions/s1/projection", headers=head)
    assert preflight.status_code == 200, preflight.text
