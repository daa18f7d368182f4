"""Sessions: create, list (cursor), read, delete."""

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response

from app.api.bodies import message_body, run_body, session_body
from app.api.cursors import read_session_cursor, session_cursor
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.off_loop import OffLoopRoute
from app.api.paging import page_limit
from app.api.responses import OrjsonResponse, encode_json
from app.api.schemas import CreateSessionRequest, PathId, SessionOut, SessionPage
from app.api.streaming import ClosingStreamingResponse
from app.importers.archive import MARK as ARCHIVE_MARK
from app.importers.archive import VERSION as ARCHIVE_VERSION
from app.importers.archive import archive_end
from app.services import archive, sessions
from app.store.records import RunRecord

router = APIRouter(route_class=OffLoopRoute, prefix="/sessions", tags=["sessions"])


@router.post(
    "",
    status_code=201,
    response_model=SessionOut,
    responses={
        200: {"model": SessionOut, "description": "A retry: a session of this id with these fields was stored already"}
    },
)
async def create_session(
    body: CreateSessionRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_writer()
    session_id = body.id or sessions.new_session_id()
    row, created = await sessions.create_session(
        database,
        settings,
        principal.tenant_id,
        session_id,
        title=body.title,
        metadata=body.metadata,
        model=body.model,
        context_window_tokens=body.context_window_tokens,
    )
    location = {"Location": f"/sessions/{quote(session_id, safe='')}"}
    return OrjsonResponse(session_body(row), status_code=201 if created else 200, headers=location)


@router.get("", response_model=SessionPage)
async def list_sessions(
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    limit: Annotated[int | None, Query(ge=1)] = None,
    cursor: str | None = None,
    order: Literal["asc", "desc"] = "desc",
) -> Response:
    newest_first = order == "desc"
    after = read_session_cursor(cursor, newest_first) if cursor else None
    rows, has_more = await sessions.page_sessions(
        database, principal.tenant_id, limit=page_limit(limit, settings), newest_first=newest_first, after=after
    )
    next_cursor = session_cursor(rows[-1].created_at, rows[-1].id, newest_first) if rows else cursor
    return OrjsonResponse(
        {"sessions": [session_body(row) for row in rows], "nextCursor": next_cursor, "hasMore": has_more}
    )


@router.get("/{session_id}", response_model=SessionOut)
async def get_session(session_id: PathId, database: DatabaseDep, principal: PrincipalDep) -> Response:
    return OrjsonResponse(session_body(await sessions.get_session(database, principal.tenant_id, session_id)))


ARCHIVE_MEDIA_TYPE = "application/x-ndjson"


@router.get(
    "/{session_id}/archive",
    response_class=ClosingStreamingResponse,
    responses={200: {"content": {ARCHIVE_MEDIA_TYPE: {}}, "description": "One JSON object a line."}},
)
async def archive_session(
    session_id: PathId, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    """The whole session, losslessly, for ``POST /sessions/import?format=projector`` here or on another
    service: a ``session`` line, then a ``run`` line per run, then a ``message`` line per message oldest
    first, each as the API answers it, and an ``end`` line with their counts, without which an import refuses
    the file as cut short. Streamed a page at a time, up to the last message when it was asked."""
    opened = await archive.open_archive(database, settings, principal.tenant_id, session_id)
    return ClosingStreamingResponse(_archive_lines(opened), media_type=ARCHIVE_MEDIA_TYPE)


async def _archive_lines(opened: archive.Archive) -> AsyncIterator[bytes]:
    head = {"type": "session", "format": ARCHIVE_MARK, "version": ARCHIVE_VERSION, **session_body(opened.session)}
    yield _lines([head])
    runs = messages = 0
    async for page in opened.pages:
        bodies = [
            {"type": "run", **run_body(row)} if isinstance(row, RunRecord) else {"type": "message", **message_body(row)}
            for row in page
        ]
        kept = sum(1 for row in page if isinstance(row, RunRecord))
        runs, messages = runs + kept, messages + len(page) - kept
        yield await asyncio.to_thread(_lines, bodies)
    yield _lines([archive_end(runs, messages)])


def _lines(bodies: list[dict[str, Any]]) -> bytes:
    return b"".join(encode_json(body) + b"\n" for body in bodies)


@router.delete("/{session_id}", status_code=204)
async def delete_session(
    session_id: PathId, request: Request, database: DatabaseDep, principal: PrincipalDep
) -> Response:
    """The windows this process kept for the session go at once; other processes drop theirs when the
    deletion's notice reaches them (``app.services.window_reuse``)."""
    principal.require_runtime("delete a session")
    await sessions.delete_session(database, principal.tenant_id, session_id)
    request.app.state.window_reuse.forget_session(principal.tenant_id, session_id)
    return Response(status_code=204)
