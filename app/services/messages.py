"""Messages: append a batch (atomic, idempotent per id), page through them, read one, amend metadata."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from anyio import to_thread

from app.engine.kinds import Kind
from app.engine.promotion import SUMMARY_MARKS, infer_kind
from app.errors import Forbidden, InvalidInput, MessageConflict, NotFound
from app.services.caller import Caller
from app.services.compaction import notify_recorded_compaction
from app.services.heavy_work import content_weight, run_weighed
from app.services.intake import MessageInput, prepare_batch
from app.services.size_limits import check_merged_metadata
from app.settings import Settings
from app.store.database import Database
from app.store.events import Notice, NoticeKind, notify
from app.store.live_start import changes_live_start
from app.store.messages import AppendResult, IdTakenMeanwhile, MessageRepository, PageBudget
from app.store.metadata import merged_in_python
from app.store.records import MessageRecord
from app.store.sessions import SessionRepository
from app.store.storable import measure

IMMUTABLE_METADATA_KEYS = ("runtimeKind",)
"""The kind is fixed at write time (it is indexed, and reserved kinds are checked then)."""


@dataclass(frozen=True, slots=True)
class MessagePage:
    messages: list[MessageRecord]
    """In the order asked for."""
    has_more: bool


async def append_messages(
    database: Database, caller: Caller, settings: Settings, session_id: str, inputs: list[MessageInput], now: datetime
) -> AppendResult:
    """Stores the batch whole or not at all; a retried id with the same content replays the stored message."""
    weight = content_weight(message.content for message in inputs)
    batch = await run_weighed(weight, prepare_batch, inputs, caller, settings, now)
    # The common case, new messages, is one statement; a replay, a conflict, an unknown session or a
    # compaction's messages take the lock and the careful path below.
    writer = (caller.tenant_id, session_id)
    try:
        async with database.single_write(locking=writer) as connection:
            stored = await MessageRepository(connection, caller.tenant_id).append_new(session_id, batch)
    except IdTakenMeanwhile:
        stored = None
    if stored is not None:
        return stored
    async with database.transaction(locking=writer) as connection:
        repository = MessageRepository(connection, caller.tenant_id)
        last_seq = await repository.lock_session(session_id)
        if last_seq is None:
            raise NotFound(f"session '{session_id}' does not exist")
        compacting = changes_live_start([message.kind for message in batch])
        live_start = await repository.stored_live_start(session_id) if compacting else None
        result = await repository.append(session_id, last_seq, batch)
        if result.created and not result.conflicts:
            appended = Notice(caller.tenant_id, session_id, NoticeKind.MESSAGE, last_seq + 1, last_seq + result.created)
            await notify(connection, appended)
            if compacting:
                await notify_recorded_compaction(connection, caller.tenant_id, session_id, live_start)
    if result.conflicts:
        index, message_id = result.conflicts[0]
        raise MessageConflict(
            f"messages[{index}].id: '{message_id}' is already stored with different content",
            field=f"messages[{index}].id",
            conflicts=[{"field": f"messages[{i}].id", "id": mid} for i, mid in result.conflicts],
        )
    return result


def response_budget(settings: Settings) -> PageBudget:
    """What one page may hold besides its count, so a page's memory is bounded by settings."""
    return PageBudget(max_bytes=settings.max_response_bytes, max_parts=settings.max_response_parts)


async def page_messages(
    database: Database,
    tenant_id: str,
    session_id: str,
    *,
    limit: int,
    after_seq: int | None,
    before_seq: int | None,
    backwards: bool,
    newest_first: bool,
    budget: PageBudget,
) -> MessagePage:
    """``limit`` messages next to the cursor (fewer past the ``budget``), walked ``backwards`` (towards
    older) or not, and answered newest first or oldest first."""
    async with database.reading() as connection:
        if await SessionRepository(connection, tenant_id).get(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        rows, has_more = await MessageRepository(connection, tenant_id).page(
            session_id, limit=limit, after_seq=after_seq, before_seq=before_seq, backwards=backwards, budget=budget
        )
    if backwards != newest_first:
        rows.reverse()
    return MessagePage(rows, has_more)


async def get_message(database: Database, tenant_id: str, session_id: str, message_id: str) -> MessageRecord:
    async with database.reading() as connection:
        row = await MessageRepository(connection, tenant_id).get(session_id, message_id)
    if row is None:
        raise NotFound(f"message '{message_id}' does not exist in session '{session_id}'")
    return row


async def amend_message(
    database: Database, caller: Caller, settings: Settings, session_id: str, message_id: str, changes: dict[str, Any]
) -> MessageRecord:
    """Merges ``changes`` into the metadata (null removes a key); content and kind never change."""
    caller.require_may_set(changes, "metadata")
    measured = measure(changes, "metadata", settings.max_json_depth)
    for key in IMMUTABLE_METADATA_KEYS:
        if key in changes:
            raise InvalidInput(f"metadata.{key}: fixed when the message is written", field=f"metadata.{key}")
    async with database.transaction(locking=(caller.tenant_id, session_id)) as connection:
        repository = MessageRepository(connection, caller.tenant_id)
        # The session row before the message row, the order every writer of both takes: a prune locks the
        # session, then marks messages; locking the message first would deadlock against it.
        if await repository.lock_session(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        current = await repository.get(session_id, message_id, lock=True)
        if current is None:
            raise NotFound(f"message '{message_id}' does not exist in session '{session_id}'")
        if not caller.may_write_kind(Kind(current.kind)):
            raise Forbidden(f"only a runtime key may amend a {current.kind} message")
        merged = merged_in_python(current.metadata, changes)
        _check_kind_kept(current, merged, changes)
        await to_thread.run_sync(_check_amended_size, current.content, merged, settings)
        row = await repository.amend_metadata(session_id, message_id, changes, unusual_text=measured.unusual_text)
        if row is not None:
            details = {"messageId": message_id}
            await notify(
                connection, Notice(caller.tenant_id, session_id, NoticeKind.AMENDED, row.seq, row.seq, details)
            )
    if row is None:
        raise NotFound(f"message '{message_id}' does not exist in session '{session_id}'")
    return row


def _check_kind_kept(current: MessageRecord, merged: dict[str, Any], changes: dict[str, Any]) -> None:
    """Refuses an amendment that would give the message another kind when it is read (opencode's summary
    marks on an assistant message): the kind was checked against the caller's role, indexed and used to place
    the live history when the message was written, so a writer could otherwise turn its own message into a
    compaction summary."""
    kind, _ = infer_kind(current.role, current.content, merged)
    if kind != current.kind and kind != infer_kind(current.role, current.content, current.metadata)[0]:
        # The change moved the kind (a row an older release read differently moves nothing). runtimeKind is
        # refused before, so the change is one of the summary marks.
        where = next((f"metadata.{key}" for key in changes if key in SUMMARY_MARKS), "metadata")
        raise InvalidInput(
            f"{where}: would make this {current.kind} message a {kind}; a message's kind is fixed when it is written",
            field=where,
        )


def _check_amended_size(content: object, merged: dict[str, Any], settings: Settings) -> None:
    """The message as amended within the limits an append holds it to; off the event loop, as the content
    may be megabytes."""
    content_size = measure(content, "content", settings.max_json_depth).size
    check_merged_metadata(merged, "metadata", settings, other_bytes=content_size)
