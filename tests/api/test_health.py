"""Liveness, readiness, metrics and the request id."""

import asyncio
import json
import logging
import time

import httpx
import pytest
from fastapi import FastAPI

from app.api.routes import health
from app.observability import JsonFormatter, request_id
from tests.api.wire import new_session


async def test_healthz_answers_without_the_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readyz_checks_the_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready"}


class SlowToGiveUp:
    """A database that stopped answering, whose connection takes its time to close once a ping is cancelled
    (SQLAlchemy's graceful close waits up to 2 s for a server that answers nothing)."""

    async def ping(self) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.sleep(1.0))
            raise


async def test_readyz_says_no_within_its_timeout_when_the_database_hangs(
    app: FastAPI, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "READINESS_TIMEOUT_SECONDS", 0.2)
    database = app.state.database
    app.state.database = SlowToGiveUp()
    try:
        started = time.perf_counter()
        response = await client.get("/readyz")
        elapsed = time.perf_counter() - started
    finally:
        app.state.database = database
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert elapsed < 0.2 + 0.5


async def test_metrics_count_requests_by_route_template(client: httpx.AsyncClient) -> None:
    await new_session(client, "s1")
    await client.get("/sessions/s1")
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert 'projector_http_requests_total{method="GET",route="/sessions/{session_id}",status="200"}' in response.text
    assert "projector_http_request_duration_seconds_bucket" in response.text


async def test_metrics_count_a_made_up_method_as_other_so_clients_cannot_add_labels(client: httpx.AsyncClient) -> None:
    for method in ("BREW", "X7F3A9"):
        assert (await client.request(method, "/sessions")).status_code == 405
    metrics = (await client.get("/metrics")).text
    assert 'projector_http_requests_total{method="OTHER",route="/sessions",status="405"}' in metrics
    assert "BREW" not in metrics
    assert "X7F3A9" not in metrics


async def test_every_response_carries_a_request_id_and_a_safe_given_one_is_kept(client: httpx.AsyncClient) -> None:
    generated = await client.get("/healthz")
    assert len(generated.headers["x-request-id"]) == 32
    given = await client.get("/healthz", headers={"x-request-id": "trace-123"})
    assert given.headers["x-request-id"] == "trace-123"
    unsafe = await client.get("/healthz", headers={"x-request-id": "bad id\nwith newline"})
    assert unsafe.headers["x-request-id"] != "bad id\nwith newline"


async def test_unknown_route_is_a_404_problem(client: httpx.AsyncClient) -> None:
    response = await client.get("/nowhere")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith("/not-found")


async def test_wrong_method_is_a_405_problem(client: httpx.AsyncClient) -> None:
    response = await client.put("/sessions")
    assert response.status_code == 405
    assert response.headers["content-type"] == "application/problem+json"


def test_log_lines_are_json_with_the_request_id(caplog: pytest.LogCaptureFixture) -> None:
    token = request_id.set("req-42")
    try:
        record = logging.makeLogRecord({"name": "projector", "levelname": "INFO", "msg": "appended", "count": 3})
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id.reset(token)
    assert line["message"] == "appended"
    assert line["requestId"] == "req-42"
    assert line["count"] == 3
    assert line["level"] == "info"
