"""Sessions: create, page through (newest first by default), read, delete."""

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.errors import Conflict, NotFound
from app.lossless_json import same_fields
from app.services.size_limits import check_row_fields
from app.settings import Settings
from app.store.database import Database
from app.store.events import Notice, NoticeKind, notify
from app.store.records import SessionRecord
from app.store.sessions import SessionRepository
from app.store.storable import refuse_unaddressable


def new_session_id() -> str:
    return f"ses_{uuid.uuid4().hex}"


async def create_session(
    database: Database,
    settings: Settings,
    tenant_id: str,
    session_id: str,
    *,
    title: str | None,
    metadata: dict[str, Any],
    model: str | Mapping[str, Any] | None,
    context_window_tokens: int | None,
) -> tuple[SessionRecord, bool]:
    """The session and whether this request created it: a session of this id with these fields is a retry
    whose first try landed (its answer lost), answered with the stored session; other fields are 409."""
    refuse_unaddressable(session_id, "id")
    check_row_fields({"title": title, "metadata": metadata, "model": model}, settings)
    fields = {"title": title, "metadata": metadata, "model": model, "context_window_tokens": context_window_tokens}
    async with database.transaction() as connection:
        repository = SessionRepository(connection, tenant_id)
        row = await repository.create(
            session_id, title=title, metadata=metadata, model=model, context_window_tokens=context_window_tokens
        )
        stored = await repository.get(session_id) if row is None else None
    if row is not None:
        return row, True
    if stored is not None and same_fields(stored, fields):
        return stored, False
    raise Conflict(f"id: a session '{session_id}' already exists with other fields", field="id")


async def page_sessions(
    database: Database, tenant_id: str, *, limit: int, newest_first: bool, after: tuple[datetime, str] | None
) -> tuple[list[SessionRecord], bool]:
    async with database.reading() as connection:
        return await SessionRepository(connection, tenant_id).page(limit=limit, newest_first=newest_first, after=after)


async def get_session(database: Database, tenant_id: str, session_id: str) -> SessionRecord:
    async with database.reading() as connection:
        row = await SessionRepository(connection, tenant_id).get(session_id)
    if row is None:
        raise NotFound(f"session '{session_id}' does not exist")
    return row


async def delete_session(database: Database, tenant_id: str, session_id: str) -> None:
    """Deletes the session with its messages and runs, and tells its followers, whose streams end."""
    async with database.transaction() as connection:
        deleted = await SessionRepository(connection, tenant_id).delete(session_id)
        if deleted:
            await notify(connection, Notice(tenant_id, session_id, NoticeKind.DELETED, 0, 0))
    if not deleted:
        raise NotFound(f"session '{session_id}' does not exist")
