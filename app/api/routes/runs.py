"""Runs (opencode's Turn): one request's settings, amended with usage and result when it ends."""

import uuid

from fastapi import APIRouter, Response

from app.api.bodies import run_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.responses import OrjsonResponse
from app.api.schemas import CreateRunRequest, PatchRunRequest, PathId, RunOut
from app.api.storable import storable_size
from app.errors import Conflict, NotFound
from app.store.runs import RunRepository
from app.store.sessions import SessionRepository

router = APIRouter(prefix="/sessions/{session_id}/runs", tags=["runs"])


@router.post("", status_code=201, response_model=RunOut)
async def create_run(
    session_id: PathId, body: CreateRunRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_writer()
    storable_size(body.model_dump(mode="json", by_alias=True, exclude_unset=True), "", settings.max_json_depth)
    run_id = body.id or f"run_{uuid.uuid4().hex}"
    settings = body.model_dump(exclude={"id"})
    async with database.transaction() as connection:
        if await SessionRepository(connection, principal.tenant_id).get(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        row = await RunRepository(connection, principal.tenant_id).create(session_id, run_id, settings)
    if row is None:
        raise Conflict(f"id: a run '{run_id}' already exists in this session", field="id")
    return OrjsonResponse(run_body(row), status_code=201)


@router.get("/{run_id}", response_model=RunOut)
async def get_run(session_id: PathId, run_id: PathId, database: DatabaseDep, principal: PrincipalDep) -> Response:
    async with database.reading() as connection:
        row = await RunRepository(connection, principal.tenant_id).get(session_id, run_id)
    if row is None:
        raise NotFound(f"run '{run_id}' does not exist in session '{session_id}'")
    return OrjsonResponse(run_body(row))


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
    storable_size(body.model_dump(mode="json", by_alias=True, exclude_unset=True), "", settings.max_json_depth)
    changes = body.model_dump(exclude_unset=True)
    async with database.transaction() as connection:
        repository = RunRepository(connection, principal.tenant_id)
        row = (
            await repository.amend(session_id, run_id, changes) if changes else await repository.get(session_id, run_id)
        )
    if row is None:
        raise NotFound(f"run '{run_id}' does not exist in session '{session_id}'")
    return OrjsonResponse(run_body(row))
