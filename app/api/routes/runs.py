"""Runs (opencode's Turn): one request's settings, amended with usage and result when it ends."""

from fastapi import APIRouter, Response

from app.api.bodies import run_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.responses import OrjsonResponse
from app.api.schemas import CreateRunRequest, PatchRunRequest, PathId, RunOut
from app.services import runs

router = APIRouter(prefix="/sessions/{session_id}/runs", tags=["runs"])


@router.post("", status_code=201, response_model=RunOut)
async def create_run(
    session_id: PathId, body: CreateRunRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_writer()
    run_id = body.id or runs.new_run_id()
    row = await runs.create_run(
        database, settings, principal.tenant_id, session_id, run_id, body.model_dump(exclude={"id"})
    )
    return OrjsonResponse(run_body(row), status_code=201)


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
