"""Messages: append (atomic, idempotent per id), list with cursors, read one, amend metadata."""

from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from app.api.bodies import message_body, message_inputs
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.off_loop import OffLoopRoute
from app.api.paging import page_limit, read_walk
from app.api.responses import EncodedJsonResponse, OrjsonResponse, encode_json, json_answer
from app.api.schemas import AppendMessagesRequest, MessageOut, MessagePage, MessagesOut, PatchMessageRequest, PathId
from app.services import messages
from app.services.heavy_work import content_weight, run_weighed

router = APIRouter(route_class=OffLoopRoute, prefix="/sessions/{session_id}/messages", tags=["messages"])


@router.post("", status_code=201, response_model=MessagesOut, responses={200: {"model": MessagesOut}})
async def append_messages(
    session_id: PathId,
    body: AppendMessagesRequest,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    principal.require_writer()
    inputs = await run_weighed(content_weight(message.content for message in body.messages), message_inputs, body)
    result = await messages.append_messages(database, principal, settings, session_id, inputs, datetime.now(UTC))
    answer = {"messages": [message_body(row) for row in result.messages]}
    encoded = await run_weighed(content_weight(row.content for row in inputs), encode_json, answer)
    return EncodedJsonResponse(encoded, status_code=201 if result.created else 200)


@router.get("", response_model=MessagePage)
async def list_messages(
    session_id: PathId,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    limit: Annotated[int | None, Query(ge=1)] = None,
    after: Annotated[str | None, Query(description="Cursor: messages newer than it.")] = None,
    before: Annotated[str | None, Query(description="Cursor: messages older than it.")] = None,
    order: Literal["asc", "desc"] = "asc",
) -> Response:
    page_size = page_limit(limit, settings)
    walk = read_walk(session_id, after, before, order)
    page = await messages.page_messages(
        database,
        principal.tenant_id,
        session_id,
        limit=page_size,
        after_seq=walk.after_seq,
        before_seq=walk.before_seq,
        backwards=walk.backwards,
        newest_first=order == "desc",
        budget=messages.response_budget(settings),
    )
    bodies = [message_body(row) for row in page.messages]
    rest = {"nextCursor": walk.next_cursor([row.seq for row in page.messages]), "hasMore": page.has_more}
    return json_answer({}, "messages", bodies, rest, weight=content_weight(row.content for row in page.messages))


@router.get("/{message_id}", response_model=MessageOut)
async def get_message(
    session_id: PathId, message_id: PathId, database: DatabaseDep, principal: PrincipalDep
) -> Response:
    row = await messages.get_message(database, principal.tenant_id, session_id, message_id)
    return OrjsonResponse(message_body(row))


@router.patch("/{message_id}", response_model=MessageOut)
async def amend_message(
    session_id: PathId,
    message_id: PathId,
    body: PatchMessageRequest,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    principal.require_writer()
    row = await messages.amend_message(database, principal, settings, session_id, message_id, body.metadata)
    return OrjsonResponse(message_body(row))
