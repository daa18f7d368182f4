"""Sessions: create, list (cursor), read, delete."""

from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Response

from app.api.bodies import session_body
from app.api.cursors import read_session_cursor, session_cursor
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.off_loop import OffLoopRoute
from app.api.paging import page_limit
from app.api.responses import OrjsonResponse
from app.api.schemas import CreateSessionRequest, PathId, SessionOut, SessionPage
from app.services import sessions

router = APIRouter(route_class=OffLoopRoute, prefix="/sessions", tags=["sessions"])


@router.post("", status_code=201, response_model=SessionOut)
async def create_session(
    body: CreateSessionRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_writer()
    session_id = body.id or sessions.new_session_id()
    row = await sessions.create_session(
        database,
        settings,
        principal.tenant_id,
        session_id,
        title=body.title,
        metadata=body.metadata,
        model=body.model,
        context_window_tokens=body.context_window_tokens,
    )
    return OrjsonResponse(
        session_body(row), status_code=201, headers={"Location": f"/sessions/{quote(session_id, safe='')}"}
    )


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


@router.delete("/{session_id}", status_code=204)
async def delete_session(session_id: PathId, database: DatabaseDep, principal: PrincipalDep) -> Response:
    principal.require_runtime("delete a session")
    await sessions.delete_session(database, principal.tenant_id, session_id)
    return Response(status_code=204)
