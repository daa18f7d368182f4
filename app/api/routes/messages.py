"""Messages: append (atomic, idempotent per id), list with cursors, read one, amend metadata."""

from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from app.api.bodies import message_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.intake import prepare_batch
from app.api.paging import page_limit, read_walk
from app.api.responses import OrjsonResponse
from app.api.schemas import AppendMessagesRequest, MessageOut, MessagePage, MessagesOut, PatchMessageRequest, PathId
from app.api.storable import storable_size
from app.engine.kinds import Kind
from app.errors import Forbidden, InvalidInput, MessageConflict, NotFound
from app.store.messages import MessageRepository
from app.store.sessions import SessionRepository

router = APIRouter(prefix="/sessions/{session_id}/messages", tags=["messages"])

IMMUTABLE_METADATA_KEYS = ("runtimeKind",)
"""The kind is fixed at write time (it is indexed, and reserved kinds are checked then)."""


@router.post("", status_code=201, response_model=MessagesOut, responses={200: {"model": MessagesOut}})
async def append_messages(
    session_id: PathId,
    body: AppendMessagesRequest,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    principal.require_writer()
    batch = prepare_batch(body, principal, settings, datetime.now(UTC))
    async with database.transaction() as connection:
        repository = MessageRepository(connection, principal.tenant_id)
        last_seq = await repository.lock_session(session_id)
        if last_seq is None:
            raise NotFound(f"session '{session_id}' does not exist")
        result = await repository.append(session_id, last_seq, batch)
    if result.conflicts:
        index, message_id = result.conflicts[0]
        raise MessageConflict(
            f"messages[{index}].id: '{message_id}' is already stored with different content",
            field=f"messages[{index}].id",
            conflicts=[{"field": f"messages[{i}].id", "id": mid} for i, mid in result.conflicts],
        )
    return OrjsonResponse(
        {"messages": [message_body(row) for row in result.messages]},
        status_code=201 if result.created else 200,
    )


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
    async with database.reading() as connection:
        if await SessionRepository(connection, principal.tenant_id).get(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        rows, has_more = await MessageRepository(connection, principal.tenant_id).page(
            session_id, limit=page_size, after_seq=walk.after_seq, before_seq=walk.before_seq, backwards=walk.backwards
        )
    next_cursor = walk.next_cursor([row["seq"] for row in rows])
    if walk.backwards != (order == "desc"):
        rows.reverse()
    return OrjsonResponse(
        {"messages": [message_body(row) for row in rows], "nextCursor": next_cursor, "hasMore": has_more}
    )


@router.get("/{message_id}", response_model=MessageOut)
async def get_message(
    session_id: PathId, message_id: PathId, database: DatabaseDep, principal: PrincipalDep
) -> Response:
    async with database.reading() as connection:
        row = await MessageRepository(connection, principal.tenant_id).get(session_id, message_id)
    if row is None:
        raise NotFound(f"message '{message_id}' does not exist in session '{session_id}'")
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
    principal.require_may_amend(body.metadata)
    storable_size(body.metadata, "metadata", settings.max_json_depth)
    for key in IMMUTABLE_METADATA_KEYS:
        if key in body.metadata:
            raise InvalidInput(f"metadata.{key}: fixed when the message is written", field=f"metadata.{key}")
    async with database.transaction() as connection:
        repository = MessageRepository(connection, principal.tenant_id)
        current = await repository.get(session_id, message_id)
        if current is None:
            raise NotFound(f"message '{message_id}' does not exist in session '{session_id}'")
        if not principal.may_write_kind(Kind(current["kind"])):
            raise Forbidden(f"only a runtime key may amend a {current['kind']} message")
        row = await repository.amend_metadata(session_id, message_id, body.metadata)
    return OrjsonResponse(message_body(row))
