"""Runs (opencode's Turn): one request's settings, amended with usage and result when it ends."""

from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Response

from app.api.bodies import run_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.off_loop import OffLoopRoute
from app.api.paging import page_limit, read_run_walk
from app.api.responses import OrjsonResponse
from app.api.schemas import CreateRunRequest, PatchRunRequest, PathId, RunOut, RunPage
from app.services import messages, runs

router = APIRouter(route_class=OffLoopRoute, prefix="/sessions/{session_id}/runs", tags=["runs"])


@router.post(
    "",
    status_code=201,
    response_model=RunOut,
    responses={
        200: {"model": RunOut, "description": "A retry: a run of this id with these settings was stored already"}
    },
)
async def create_run(
    session_id: PathId, body: CreateRunRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_writer()
    run_id = body.id or runs.new_run_id()
    row, created = await runs.create_run(
        database, settings, principal.tenant_id, session_id, run_id, body.model_dump(exclude={"id"})
    )
    location = f"/sessions/{quote(session_id, safe='')}/runs/{quote(run_id, safe='')}"
    return OrjsonResponse(run_body(row), status_code=201 if created else 200, headers={"Location": location})


@router.get("", response_model=RunPage)
async def list_runs(
    session_id: PathId,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    limit: Annotated[int | None, Query(ge=1)] = None,
    after: Annotated[str | None, Query(description="Cursor: runs created after it.")] = None,
    before: Annotated[str | None, Query(description="Cursor: runs created before it.")] = None,
    order: Literal["asc", "desc"] = "asc",
) -> Response:
    walk = read_run_walk(session_id, after, before, order)
    page = await runs.page_runs(
        database,
        principal.tenant_id,
        session_id,
        limit=page_limit(limit, settings),
        after=walk.after,
        before=walk.before,
        newest_first=walk.newest_first,
        budget=messages.response_budget(settings),
    )
    next_cursor = walk.next_cursor([(run.created_at, run.id) for run in page.runs])
    return OrjsonResponse(
        {"runs": [run_body(run) for run in page.runs], "nextCursor": next_cursor, "hasMore": page.has_more}
    )


@router.get("/{run_id}", response_model=RunOut)
async def get_run(session_id: PathId, run_id: PathId, database: DatabaseDep, principal: PrincipalDep) -> Response:
    return OrjsonResponse(run_body(await runs.get_run(database, principal.tenant_id, session_id, run_id)))


@router.patch("/{run_id}", response_model=RunOut)
async def amend_run(
    session_id: PathId,
    run_id: PathId,
    body: PatchRunRequest,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    principal.require_writer()
    changes = body.model_dump(exclude_unset=True)
    row = await runs.amend_run(database, settings, principal.tenant_id, session_id, run_id, changes)
    return OrjsonResponse(run_body(row))
