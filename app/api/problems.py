"""Renders every error as RFC 9457 problem+json, including validation errors (naming the field) and a
database that is down (503, quickly, instead of a hang or a bare 500). A client that left before its body
arrived is no error: it gets an empty 499 that nobody reads, and nothing is logged as failing."""

import logging
from http import HTTPStatus
from typing import Any

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import compile_path

from app.api.responses import ProblemResponse
from app.errors import PROBLEM_BASE, InvalidInput, ProjectorError, ServiceUnavailable
from app.observability import CLIENT_CLOSED_REQUEST

log = logging.getLogger("projector.errors")

UNAVAILABLE_SQLSTATES = {
    "57014": "a statement timed out",
    "55P03": "a lock wait timed out",
    "40001": "a read on a replica was cancelled by a conflict with replication",
}
"""query_canceled (statement_timeout) and lock_not_available (lock_timeout) mean "busy", not "broken"; so
does serialization_failure, which only a hot standby raises here (no transaction is SERIALIZABLE, and a
REPEATABLE READ one only reads): its replay needed rows the read could still see."""

HTTP_SLUGS = {
    404: "not-found",
    405: "method-not-allowed",
    406: "not-acceptable",
    408: "request-timeout",
    413: "too-large",
}


PROBLEM_SCHEMA = {
    "type": "object",
    "required": ["type", "title", "status"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
    },
    "additionalProperties": True,
}


def problem_responses(meanings: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """The API document's entry for each status answered as a problem, with what it means."""
    return {
        status: {"description": meaning, "content": {"application/problem+json": {"schema": PROBLEM_SCHEMA}}}
        for status, meaning in meanings.items()
    }


def problem(error: ProjectorError, request: Request) -> ProblemResponse:
    body: dict[str, Any] = {
        "type": error.type,
        "title": error.title,
        "status": error.status,
        "detail": error.detail,
        "instance": request.url.path,
        **error.extensions,
    }
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after is not None else None
    return ProblemResponse(body, status_code=error.status, headers=headers)


def http_problem(exc: HTTPException, request: Request) -> ProblemResponse:
    """The framework's refusals (an unknown path, a method the path lacks) and the body limit's (413, and 408
    for a body that stopped arriving), keeping the status they carry."""
    body = {
        "type": PROBLEM_BASE + HTTP_SLUGS.get(exc.status_code, "http-error"),
        "title": HTTPStatus(exc.status_code).phrase,
        "status": exc.status_code,
        "detail": str(exc.detail),
        "instance": request.url.path,
    }
    return ProblemResponse(body, status_code=exc.status_code, headers=exc.headers)


def field_path(loc: tuple[Any, ...], body: Any) -> str:
    """Turns pydantic's location into ``messages[0].content[2].text``, walking the input itself so that
    union labels and discriminator tags in the location (``user``, ``list[...]``) are left out."""
    path = ""
    data = body
    segments = loc[1:] if loc and loc[0] == "body" else loc
    for position, segment in enumerate(segments):
        is_last = position == len(segments) - 1
        if isinstance(segment, int) and isinstance(data, list):
            path += f"[{segment}]"
            data = data[segment] if segment < len(data) else None
        elif isinstance(data, dict) and not is_last and segment in (data.get("type"), data.get("role")):
            continue
        elif isinstance(data, dict) and (segment in data or is_last):
            path += f".{segment}" if path else str(segment)
            data = data.get(segment)
    return path or "body"


def validation_errors(exc: RequestValidationError) -> list[dict[str, str]]:
    body = getattr(exc, "body", None)
    seen: dict[str, dict[str, str]] = {}
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))
        if loc and loc[0] in ("query", "path", "header"):
            field = ".".join(str(part) for part in loc[1:])
        else:
            field = field_path(loc, body)
        if _is_losing_union_branch(loc, body):
            continue
        entry = {"field": field, "message": error.get("msg", "invalid"), "type": error.get("type", "")}
        if field in seen and entry["type"] in ("string_type", "list_type"):
            seen[field]["message"] = "Input should be a string or a list of parts"
            continue
        seen.setdefault(field, entry)
    return list(seen.values())


def _is_losing_union_branch(loc: tuple[Any, ...], body: Any) -> bool:
    """``content: str | list[Part]`` reports both branches; keep only the branch the input chose."""
    if "str" not in loc:
        return False
    data = body
    for segment in loc[1:] if loc[0] == "body" else loc:
        if segment == "str":
            return isinstance(data, list)
        if (isinstance(segment, int) and isinstance(data, list) and segment < len(data)) or (
            isinstance(data, dict) and segment in data
        ):
            data = data[segment]
    return False


def database_problem(sqlstate: str | None, *, connection_lost: bool) -> ProjectorError:
    """One mapping for database errors, whether raised through SQLAlchemy or straight from asyncpg."""
    if sqlstate in UNAVAILABLE_SQLSTATES:
        return ServiceUnavailable(f"The database is busy: {UNAVAILABLE_SQLSTATES[sqlstate]}.")
    if connection_lost or (sqlstate or "").startswith(("08", "57P")):
        log.warning("database unavailable", extra={"sqlstate": sqlstate})
        return ServiceUnavailable("The database is unavailable; retry shortly.")
    log.exception("database error")
    return ProjectorError("An unexpected database error occurred.")


def allowed_methods(request: Request) -> dict[str, str]:
    """``Allow`` with every method of the path, read from the API document (the router names only the first
    route that matched the path, so ``PUT /sessions/s1`` would say ``GET`` without ``DELETE``); a ``GET`` path
    answers ``HEAD`` too (``middleware.HeadAsGet``)."""
    for template, operations in request.app.openapi().get("paths", {}).items():
        if compile_path(template)[0].match(request.url.path):
            methods = {method.upper() for method in operations}
            return {"Allow": ", ".join(sorted(methods | ({"HEAD"} if "GET" in methods else set())))}
    return {}


def install_problem_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProjectorError)
    async def on_projector_error(request: Request, exc: ProjectorError) -> ProblemResponse:
        return problem(exc, request)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> ProblemResponse:
        errors = validation_errors(exc)
        first = errors[0] if errors else {"field": "body", "message": "invalid"}
        detail = f"{first['field']}: {first['message']}"
        return problem(InvalidInput(detail, field=first["field"], errors=errors), request)

    @app.exception_handler(HTTPException)
    async def on_http_error(request: Request, exc: HTTPException) -> ProblemResponse:
        response = http_problem(exc, request)
        if exc.status_code == 405:
            response.headers.update(allowed_methods(request))
        return response

    @app.exception_handler(ClientDisconnect)
    async def on_client_gone(request: Request, exc: ClientDisconnect) -> Response:
        """The client left before its body arrived whole: nothing ran and nobody is there to read an answer.
        Not an error of the service (``RequestLogging`` counts it as 499)."""
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    @app.exception_handler(DBAPIError)
    async def on_database_error(request: Request, exc: DBAPIError) -> ProblemResponse:
        lost = isinstance(exc, OperationalError | InterfaceError) or exc.connection_invalidated
        return problem(database_problem(getattr(exc.orig, "sqlstate", None), connection_lost=lost), request)

    @app.exception_handler(asyncpg.PostgresError)
    async def on_driver_error(request: Request, exc: asyncpg.PostgresError) -> ProblemResponse:
        """Hot reads use the asyncpg connection directly; its errors get the same answers."""
        lost = isinstance(exc, asyncpg.PostgresConnectionError)
        return problem(database_problem(getattr(exc, "sqlstate", None), connection_lost=lost), request)

    @app.exception_handler(asyncpg.InterfaceError)
    @app.exception_handler(asyncpg.exceptions.InternalClientError)
    async def on_driver_interface_error(request: Request, exc: Exception) -> ProblemResponse:
        """The driver lost its connection, or was left by a server going away mid-statement in a state it
        cannot leave ("cannot switch to state 12"): the database, not the request, is what failed."""
        return problem(ServiceUnavailable("The database connection was lost; retry shortly."), request)

    @app.exception_handler(PoolTimeout)
    async def on_pool_timeout(request: Request, exc: PoolTimeout) -> ProblemResponse:
        return problem(ServiceUnavailable("No database connection was free in time; retry shortly."), request)

    @app.exception_handler(OSError)
    async def on_os_error(request: Request, exc: OSError) -> ProblemResponse:
        log.warning("database unreachable", extra={"error": type(exc).__name__})
        return problem(ServiceUnavailable("The database is unreachable; retry shortly."), request)

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> ProblemResponse:
        log.exception("unhandled error")
        return problem(ProjectorError("An unexpected error occurred."), request)
