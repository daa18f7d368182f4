"""Liveness, readiness (the database answers) and Prometheus metrics."""

import asyncio

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.dependencies import DatabaseDep
from app.api.responses import OrjsonResponse
from app.api.schemas import StatusOut
from app.errors import ServiceUnavailable

router = APIRouter(tags=["health"])

READINESS_TIMEOUT_SECONDS = 2.0
"""A load balancer wants a quick no, not a hung probe."""

_closing: set[asyncio.Task[None]] = set()
"""Pings given up on, kept referenced while their connections close."""


@router.get("/healthz", response_model=StatusOut)
async def healthz() -> Response:
    return OrjsonResponse({"status": "ok"})


@router.get("/readyz", response_model=StatusOut)
async def readyz(database: DatabaseDep) -> Response:
    """A ping given up on is cancelled without waiting for it: SQLAlchemy closes a connection cancelled
    mid-query gracefully, giving a server that stopped answering 2 s more, which would double the answer."""
    ping = asyncio.ensure_future(database.ping())
    await asyncio.wait({ping}, timeout=READINESS_TIMEOUT_SECONDS)
    if not ping.done():
        ping.cancel()
        _closing.add(ping)
        ping.add_done_callback(_forget)
        raise ServiceUnavailable("The database does not answer.")
    if (error := ping.exception()) is not None:
        raise ServiceUnavailable("The database does not answer.") from error
    return OrjsonResponse({"status": "ready"})


def _forget(ping: asyncio.Task[None]) -> None:
    _closing.discard(ping)
    if not ping.cancelled():
        ping.exception()  # retrieved, so asyncio does not log it as never retrieved


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
