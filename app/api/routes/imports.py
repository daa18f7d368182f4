"""``POST /sessions/import``: a session file as the tool wrote it, stored as messages, with a report."""

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.api.bodies import IMPORT_READERS, import_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.responses import OrjsonResponse
from app.api.schemas import ImportOut, ImportQuery
from app.services import imports

router = APIRouter(tags=["import"])

FILE_BODY = {
    "required": True,
    "description": "The file as the tool wrote it: JSONL, a JSON document, or its bytes.",
    "content": {
        media_type: {"schema": {"type": "string", "format": "binary"}}
        for media_type in ("application/x-ndjson", "application/json", "application/octet-stream")
    },
}


@router.post(
    "/sessions/import",
    status_code=201,
    response_model=ImportOut,
    responses={200: {"model": ImportOut, "description": "Everything was already stored."}},
    openapi_extra={"requestBody": FILE_BODY},
)
async def import_sessions(
    request: Request,
    query: Annotated[ImportQuery, Query()],
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    """Creates the file's session(s) where new and appends the messages not stored yet; importing the same
    file again stores nothing, and a file that grew appends what is new. Needs a runtime key."""
    principal.require_runtime("import sessions")
    outcome = await imports.import_file(
        database,
        principal,
        settings,
        IMPORT_READERS,
        format=query.format,
        data=await request.body(),
        strict=query.strict,
        live=query.live,
        session_id=query.session_id,
        now=datetime.now(UTC),
    )
    return OrjsonResponse(import_body(outcome), status_code=201 if outcome.wrote else 200)
