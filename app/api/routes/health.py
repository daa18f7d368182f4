"""Liveness, readiness (the database answers) and Prometheus metrics."""

import asyncio

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.dependencies import DatabaseDep
from app.api.responses import OrjsonResponse
from app.errors import ServiceUnavailable

router = APIRouter(tags=["health"])

READINESS_TIMEOUT_SECONDS = 2.0
"""A load balancer wants a quick no, not a hung probe."""


@router.get("/healthz")
async def healthz() -> Response:
    return OrjsonResponse({"status": "ok"})


@router.get("/readyz")
async def readyz(database: DatabaseDep) -> Response:
    try:
        await asyncio.wait_for(database.ping(), READINESS_TIMEOUT_SECONDS)
    except Exception as error:
        raise ServiceUnavailable("The database does not answer.") from error
    return OrjsonResponse({"status": "ready"})


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
