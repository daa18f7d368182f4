"""Compaction: a summary of the older history and a boundary, appended together; nothing is deleted.

The summarizer may take minutes, so no connection is held while it writes: the compaction takes a lease on
the session in the database (one short transaction), reads the live history in one snapshot, lets the
connection go, asks the summarizer, and then writes the boundary and the summary in one short transaction
that first re-checks that nothing it relied on changed. A second compaction of the session while the lease
is live is refused (409); a process that dies mid-compaction leaves a lease that expires by itself.

What counts as *changed* (409, nothing written): another compaction completed in the meantime (the newest
complete compaction is no longer the one the summary continues), or the metadata of a message the summary
covers (or of the summary it continues) was amended, say pruned or hidden, so the summary may describe
history that no longer reads that way. Content never changes. Messages appended after the summarised range
are normal and do not conflict: they join the kept tail, which is sent verbatim after the summary.
"""

import asyncio
import dataclasses
import functools
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from app.context import errors as context_errors
from app.context.compaction import (
    CompactionSelection,
    SummarySource,
    Trigger,
    build_compaction,
    compact_transcript,
    select_compaction,
)
from app.context.model_server import ModelServerWindows
from app.context.summarizer import Summarizer
from app.engine.kinds import Kind
from app.engine.message import EngineMessage
from app.errors import (
    CompactionRefused,
    CompactionRunning,
    CompactionStale,
    InvalidInput,
    MessageConflict,
    NotFound,
    ProjectorError,
    SummarizerFailed,
)
from app.projections.types import ProjectionContext
from app.services.caller import Caller
from app.services.context_config import tail_policy
from app.services.heavy_work import content_weight, run_weighed
from app.services.intake import MessageInput, new_message_id, prepare_batch
from app.services.snapshots import session_model
from app.settings import Settings
from app.store.compaction_leases import CompactionLeaseRepository
from app.store.database import Database
from app.store.events import Notice, NoticeKind, notify
from app.store.live_start import LiveStart
from app.store.messages import MessageRepository, NewMessage
from app.store.records import MessageRecord
from app.store.sessions import SessionRepository

log = logging.getLogger("projector.compaction")

LEASE_SECONDS = 30.0
"""A running compaction renews its lease every third of this (``_keep_renewing``), so it keeps the session for
as long as its summarizer takes; one whose process died, or that could not end its lease because the database
went away under it, frees the session within this, and its caller's retry then runs."""

REFUSAL_FIELDS = {
    "empty_summary": "summary",
    "nothing_to_compact": "sessionId",
    "unknown_through_message": "throughMessageId",
    "through_splits_tool_pair": "throughMessageId",
}


@dataclass(frozen=True, slots=True)
class CompactionAsk:
    session_id: str
    ctx: ProjectionContext
    """Counts tokens as this model sees them; a model it leaves out comes from the session."""
    summary: str | None = None
    """The caller's summary; None asks the configured summarizer."""
    through_message_id: str | None = None
    boundary_id: str | None = None
    summary_id: str | None = None
    trigger: Trigger = "manual"
    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class Compacted:
    boundary: MessageRecord
    summary: MessageRecord
    record: dict[str, Any]
    """The boundary's ``compaction`` metadata: counts and tokens before and after."""
    tokens_after: int
    replayed: bool = False
    """The boundary and summary the ask names were already stored as a compaction: nothing was written."""


async def compact(
    database: Database,
    windows: ModelServerWindows,
    summarizer: Summarizer | None,
    settings: Settings,
    caller: Caller,
    ask: CompactionAsk,
    now: datetime,
) -> Compacted:
    if ask.summary is None and summarizer is None:
        raise InvalidInput("summary: required, since no summarizer is configured", field="summary")
    tenant_id = caller.tenant_id
    stored = await _stored_compaction(database, tenant_id, ask)
    if stored is not None:
        return stored
    lease = await _take_lease(database, tenant_id, ask.session_id)
    renewal = asyncio.create_task(_keep_renewing(database, tenant_id, ask.session_id, lease))
    try:
        try:
            # Again under the lease: the first try may have written, and let go of the lease, since the look.
            stored = await _stored_compaction(database, tenant_id, ask)
            if stored is None:
                return await _compact_under_lease(database, windows, summarizer, settings, caller, ask, now, lease)
        finally:
            renewal.cancel()
            # Its cancellation comes back as a result; one of this request still ends it.
            await asyncio.gather(renewal, return_exceptions=True)
    except BaseException:
        # The successful write released the lease in its own transaction; any other end releases it here.
        await _release(database, tenant_id, ask.session_id, lease)
        raise
    await _release(database, tenant_id, ask.session_id, lease)
    return stored


async def _stored_compaction(database: Database, tenant_id: str, ask: CompactionAsk) -> Compacted | None:
    """The compaction a retry names, when it landed already: a runtime whose connection dropped after the
    write sends the same ``boundaryId`` and ``summaryId`` again, and learns that it landed, as a retried append
    does, instead of having a history it no longer sees summarised again. A caller's summary must be the one
    stored, and so must the message it says it covers (else the ids conflict, 409, as any id stored with other
    content); a summarizer's may differ."""
    if ask.boundary_id is None or ask.summary_id is None:
        return None
    async with database.reading(on_primary=True) as connection:
        repository = MessageRepository(connection, tenant_id)
        boundary = await repository.get(ask.session_id, ask.boundary_id)
        summary = await repository.get(ask.session_id, ask.summary_id)
    if (
        boundary is None
        or summary is None
        or boundary.kind != Kind.COMPACT_BOUNDARY
        or summary.kind != Kind.COMPACT_SUMMARY
        or summary.metadata.get("summaryForBoundaryId") != boundary.id
        or (ask.summary is not None and summary.content != ask.summary.strip())
        or (
            ask.through_message_id is not None
            and boundary.metadata.get("compactThroughMessageId") != ask.through_message_id
        )
    ):
        return None
    record = boundary.metadata.get("compaction")
    record = record if isinstance(record, dict) else {}
    tokens_after = sum(value for key in ("keptTokens", "summaryTokens") if isinstance(value := record.get(key), int))
    return Compacted(boundary, summary, record, tokens_after, replayed=True)


async def _take_lease(database: Database, tenant_id: str, session_id: str) -> str:
    async with database.transaction() as connection:
        if not await SessionRepository(connection, tenant_id).hold(session_id):
            raise NotFound(f"session '{session_id}' does not exist")
        lease = await CompactionLeaseRepository(connection, tenant_id).take(session_id, LEASE_SECONDS)
    if lease is None:
        raise CompactionRunning(f"a compaction of session '{session_id}' is already running")
    return lease


async def _compact_under_lease(
    database: Database,
    windows: ModelServerWindows,
    summarizer: Summarizer | None,
    settings: Settings,
    caller: Caller,
    ask: CompactionAsk,
    now: datetime,
    lease: str,
) -> Compacted:
    # On the primary, like the lease just taken and the write to come: a replica may not have the messages
    # the caller appended a moment ago, which the summary must cover.
    async with database.reading(on_primary=True) as connection:
        session = await SessionRepository(connection, caller.tenant_id).get(ask.session_id)
        if session is None:
            raise NotFound(f"session '{ask.session_id}' does not exist")
        history = await MessageRepository(connection, caller.tenant_id).live_history(ask.session_id)
    # No connection is held from here until the write.
    provider, model = session_model(session, ask.ctx.provider, ask.ctx.model)
    ctx = dataclasses.replace(ask.ctx, provider=provider or ask.ctx.provider, model=model or ask.ctx.model)
    window = await windows.resolve(ctx.provider, ctx.model, session_tokens=session.context_window_tokens)
    # Selecting, projecting for the summarizer and planning walk the whole live history: in a worker thread
    # once it is large, so the event loop goes on serving other requests.
    weight = content_weight(message.content for message in history)
    try:
        selection = await run_weighed(
            weight,
            select_compaction,
            history,
            policy=tail_policy(settings),
            window_tokens=window.tokens,
            through_message_id=ask.through_message_id,
            ctx=ctx,
        )
        text = ask.summary
        source: SummarySource = "caller"
        summarizer_model: str | None = None
        summarizer_calls = 0
        if text is None and summarizer is not None:
            transcript = await run_weighed(weight, compact_transcript, selection, ctx)
            answer = await summarizer.summarize(
                transcript,
                previous_summary=selection.previous_summary,
                instructions=ask.instructions,
                window_tokens=await windows.summarizer_window(summarizer.config),
                before_next_part=functools.partial(_renew, database, caller.tenant_id, ask.session_id, lease),
            )
            text, source, summarizer_model = answer.text, "summarizer", summarizer.model
            summarizer_calls = answer.calls
        plan = await run_weighed(
            weight,
            build_compaction,
            selection,
            text or "",
            boundary_id=ask.boundary_id or new_message_id(),
            summary_id=ask.summary_id or new_message_id(),
            trigger=ask.trigger,
            summary_source=source,
            summarizer_model=summarizer_model,
            summarizer_calls=summarizer_calls,
        )
    except context_errors.CompactionRefused as refused:
        field = REFUSAL_FIELDS[refused.reason]
        raise CompactionRefused(f"{field}: {refused.detail}", field=field, reason=refused.reason) from refused
    except context_errors.SummarizerError as failed:
        raise SummarizerFailed(f"summarizer: {failed.detail}", reason=failed.reason) from failed
    inputs = [MessageInput(role=m.role, content=m.content, id=m.id, metadata=m.metadata) for m in plan.messages]
    try:
        batch = prepare_batch(inputs, caller, settings, now)
    except ProjectorError as refused:
        raise _as_asked(refused) from None
    boundary, summary = await _write(database, caller.tenant_id, ask.session_id, lease, selection, batch)
    return Compacted(boundary, summary, plan.boundary.metadata["compaction"], plan.tokens_after)


async def _release(database: Database, tenant_id: str, session_id: str, lease: str) -> None:
    async with database.transaction() as connection:
        await CompactionLeaseRepository(connection, tenant_id).release(session_id, lease)


async def _keep_renewing(database: Database, tenant_id: str, session_id: str, lease: str) -> None:
    """Renews the lease while the compaction runs, until it is lost (taken over after a renewal failed for a
    whole term: the write then finds it gone and answers 409)."""
    while True:
        await asyncio.sleep(LEASE_SECONDS / 3)
        try:
            async with database.transaction() as connection:
                if not await CompactionLeaseRepository(connection, tenant_id).extend(session_id, lease, LEASE_SECONDS):
                    return
        except Exception:
            # Best effort: the next renewal tries again, and a lease lost meanwhile is found by the write.
            log.warning("could not renew a compaction's lease", exc_info=True)


async def _renew(database: Database, tenant_id: str, session_id: str, lease: str) -> None:
    """Between the parts of a long history's summary: each part may take the summarizer's whole time."""
    async with database.transaction() as connection:
        if not await CompactionLeaseRepository(connection, tenant_id).extend(session_id, lease, LEASE_SECONDS):
            raise CompactionRunning(f"the compaction's lease on session '{session_id}' ran out and was taken over")


_ASKED_IDS = ("boundaryId", "summaryId")
"""The request field that names each message the compaction appends: the boundary, then the summary."""


def _as_asked(refused: ProjectorError) -> ProjectorError:
    """The append's checks name the fields of the batch they checked (``messages[1].content``...); the caller
    sent ``boundaryId``, ``summaryId`` and ``summary``, so that is what the refusal names."""
    field = str(refused.extensions.get("field", ""))
    for index, id_field in enumerate(_ASKED_IDS):
        where = f"messages[{index}]"
        if field.startswith(where):
            asked = id_field if field == f"{where}.id" or index == 0 else "summary"
            return type(refused)(refused.detail.replace(field, asked, 1), **{**refused.extensions, "field": asked})
    return refused


async def _write(
    database: Database,
    tenant_id: str,
    session_id: str,
    lease: str,
    selection: CompactionSelection,
    batch: list[NewMessage],
) -> tuple[MessageRecord, MessageRecord]:
    """Appends the boundary and the summary, and ends the lease, if the lease still holds and nothing the
    summary relied on changed; otherwise writes nothing."""
    async with database.transaction() as connection:
        repository = MessageRepository(connection, tenant_id)
        last_seq = await repository.lock_session(session_id)
        if last_seq is None:
            raise NotFound(f"session '{session_id}' does not exist")
        leases = CompactionLeaseRepository(connection, tenant_id)
        if not await leases.holds(session_id, lease):
            raise CompactionRunning(f"the compaction's lease on session '{session_id}' ran out and was taken over")
        await _check_unchanged(repository, session_id, selection)
        result = await repository.append(session_id, last_seq, batch)
        # An id stored already, even with the same content (a boundary's text never changes), is another
        # message's: the append would take it for this one and write a summary for an older boundary. A retry
        # of this very compaction is answered from what was stored (``_stored_compaction``).
        stored = [(index, message.id) for index, message in enumerate(result.messages) if message.seq <= last_seq]
        if result.conflicts or stored:
            index, taken = (result.conflicts or stored)[0]
            field = _ASKED_IDS[index]
            raise MessageConflict(f"{field}: id '{taken}' is already stored in this session", field=field)
        await leases.release(session_id, lease)
        boundary, summary = result.messages
        await notify_compaction(connection, tenant_id, session_id, boundary, summary)
    return boundary, summary


async def notify_compaction(
    connection: AsyncConnection, tenant_id: str, session_id: str, boundary: MessageRecord, summary: MessageRecord
) -> None:
    """Announces the two new messages, then the compaction they make."""
    seqs = (boundary.seq, summary.seq)
    await notify(connection, Notice(tenant_id, session_id, NoticeKind.MESSAGE, min(seqs), max(seqs)))
    await notify(connection, _compaction_notice(tenant_id, session_id, boundary, summary))


async def notify_recorded_compaction(
    connection: AsyncConnection, tenant_id: str, session_id: str, before: LiveStart | None
) -> None:
    """After appending (and announcing) messages that hold a boundary or a summary, under the session's lock:
    announces the compaction they completed, if the live history now starts at another one than ``before``."""
    repository = MessageRepository(connection, tenant_id)
    after = await repository.stored_live_start(session_id)
    if after is None or (before is not None and _compaction_seqs(before) == _compaction_seqs(after)):
        return
    [boundary] = await repository.seq_range(session_id, after.boundary_seq, after.boundary_seq)
    [summary] = await repository.seq_range(session_id, after.summary_seq, after.summary_seq)
    await notify(connection, _compaction_notice(tenant_id, session_id, boundary, summary))


def _compaction_seqs(start: LiveStart) -> tuple[int, int]:
    return start.boundary_seq, start.summary_seq


def _compaction_notice(
    tenant_id: str, session_id: str, boundary: MessageRecord | EngineMessage, summary: MessageRecord | EngineMessage
) -> Notice:
    details = {"boundaryId": boundary.id, "summaryId": summary.id}
    return Notice(tenant_id, session_id, NoticeKind.COMPACTION, boundary.seq, summary.seq, details)


async def _check_unchanged(repository: MessageRepository, session_id: str, selection: CompactionSelection) -> None:
    """Runs under the session's append lock: nothing can change between this check and the append."""
    newest = await repository.stored_live_start(session_id)
    continued = selection.previous
    if (newest.boundary_seq if newest else None) != (continued.boundary.seq if continued else None):
        raise CompactionStale(
            f"another compaction of session '{session_id}' completed while this one was summarising",
            field="sessionId",
        )
    relied_on: list[EngineMessage] = [*selection.to_summarize]
    if continued is not None:
        relied_on.append(continued.summary)
    current = await repository.metadata_of(session_id, [message.id for message in relied_on])
    changed = [message.id for message in relied_on if current.get(message.id) != message.metadata]
    if changed:
        raise CompactionStale(
            f"message '{changed[0]}' was amended while the compaction was summarising it", field="sessionId"
        )
