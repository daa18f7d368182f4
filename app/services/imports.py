"""Importing a session file: parse it (``app.importers``), check every message as an append checks it, and
store each session in one transaction, appending only what is not stored yet.

Every id comes from the source, so importing the same file again stores nothing new and a file that has
grown appends only its new messages. A message stored before with other content (the last answer of a file
still being written, imported while it streamed) keeps what was stored, and is reported; ``live`` imports
only the messages no later line can change (``ImportedSession.settled``), which is how a follower avoids
that. The wire shape of a message is the API's to check, so the route hands in ``WireReaders``: the services
never import the API.

An import writes what a runtime writes (compactions, branch summaries, agent switches, runtime facts), so it
takes a runtime key, like appending those kinds does; the route checks that.
"""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.errors import InvalidInput, NotFound, ProjectorError
from app.importers.imported import ImportedMessage, ImportedSession, ImportReport
from app.importers.registry import parse_import
from app.lossless_json import same_fields
from app.services.caller import Caller
from app.services.compaction import notify_recorded_compaction
from app.services.intake import MessageInput, prepare_batch
from app.services.size_limits import check_row_fields
from app.settings import Settings
from app.store.database import Database
from app.store.events import Notice, NoticeKind, notify
from app.store.live_start import changes_live_start
from app.store.messages import MessageRepository, NewMessage
from app.store.records import RunRecord
from app.store.runs import RunRepository
from app.store.sessions import SessionRepository
from app.store.storable import refuse_unaddressable


@dataclass(frozen=True, slots=True)
class WireReaders:
    """The API's own checks, handed in by the route: each raises ``InvalidInput`` naming the field."""

    message: Callable[[dict[str, Any]], MessageInput]
    """One ``ImportedMessage.to_append()`` read as the append endpoint reads a message."""
    session_id: Callable[[str], str]
    """A session id the API can address."""
    run: Callable[[dict[str, Any]], "RunToImport"]
    """An archived run read as the run endpoints read one."""
    session: Callable[[dict[str, Any]], dict[str, Any]]
    """An archived session's fields (title, metadata, model, contextWindowTokens) read as ``POST /sessions``
    reads them, by their Python names."""


@dataclass(frozen=True, slots=True)
class RunToImport:
    id: str
    settings: dict[str, Any]
    """As ``POST /sessions/{id}/runs`` takes them, by their wire names."""
    ending: dict[str, Any]
    """``usage`` and ``result`` as ``PATCH`` takes them; empty for a run that had none."""
    created_at: datetime | None = None
    """When the run was created where it was archived: a session's runs are ordered by it."""


@dataclass(frozen=True, slots=True)
class RefusedMessage:
    message_id: str
    field: str
    reason: str


@dataclass(slots=True)
class SessionImport:
    """What one session of the file became."""

    id: str
    created: bool = False
    stored: list[str] = field(default_factory=list)
    """Ids appended by this import, in order."""
    already_stored: int = 0
    changed: list[str] = field(default_factory=list)
    """Ids stored before with other content: the stored message is kept."""
    refused: list[RefusedMessage] = field(default_factory=list)
    """Messages the append checks refuse (too large, nested too deep, a part the schema lacks...)."""
    pending: int = 0
    """``live`` only: messages a later line may still change, left for the next import."""
    runs_created: list[str] = field(default_factory=list)
    runs_changed: list[str] = field(default_factory=list)
    """Runs stored before with other settings or ending: the stored run is kept."""


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    sessions: list[SessionImport]
    report: ImportReport

    @property
    def wrote(self) -> bool:
        return any(session.created or session.stored or session.runs_created for session in self.sessions)


@dataclass(frozen=True, slots=True)
class _Prepared:
    session: ImportedSession
    outcome: SessionImport
    messages: list[NewMessage]
    runs: list[RunToImport]


async def import_file(
    database: Database,
    caller: Caller,
    settings: Settings,
    readers: WireReaders,
    *,
    format: str,
    data: bytes,
    strict: bool,
    live: bool,
    session_id: str | None,
    now: datetime,
) -> ImportOutcome:
    """With ``strict``, a line the importer cannot read or a message the append checks refuse is a 422 and
    nothing is stored; otherwise they are reported and the rest is stored."""
    if not data.strip():
        raise InvalidInput("body: the file is empty", field="body")
    # Parsing a file of megabytes and checking its messages take a while: off the event loop, so other
    # requests keep being served.
    result = await asyncio.to_thread(parse_import, format, data, strict=strict, session_id=session_id)
    prepared = await asyncio.to_thread(
        lambda: [
            _prepare(session, caller, settings, readers, strict=strict, live=live, now=now)
            for session in result.sessions
        ]
    )
    for one in prepared:
        await _store(database, caller.tenant_id, settings, one)
    return ImportOutcome([one.outcome for one in prepared], result.report)


def _prepare(
    session: ImportedSession,
    caller: Caller,
    settings: Settings,
    readers: WireReaders,
    *,
    strict: bool,
    live: bool,
    now: datetime,
) -> _Prepared:
    readers.session_id(session.id)
    refuse_unaddressable(session.id, "sessionId")
    if session.as_created:
        fields = readers.session(
            {
                "title": session.title,
                "metadata": session.metadata,
                "model": session.model,
                "contextWindowTokens": session.context_window_tokens,
            }
        )
        session.title, session.metadata, session.model = fields["title"], fields["metadata"], fields["model"]
        session.context_window_tokens = fields["context_window_tokens"]
    fields = {"title": session.title, "metadata": session.metadata, "model": session.model}
    check_row_fields(fields, settings)
    runs = [_run(readers, run, settings) for run in session.runs]
    taken = session.messages[: session.settled] if live else session.messages
    outcome = SessionImport(session.id, pending=len(session.messages) - len(taken))
    messages: list[NewMessage] = []
    first_of: dict[str, NewMessage] = {}
    for message in taken:
        try:
            [prepared] = prepare_batch([readers.message(message.to_append())], caller, settings, now)
            earlier = first_of.setdefault(prepared.id, prepared)
            if earlier is not prepared:
                _refuse_repeat(earlier, prepared)
                continue
            messages.append(prepared)
        except ProjectorError as error:
            if strict:
                raise InvalidInput(
                    f"message {message.id}: {error.detail}", field="body", messageId=message.id
                ) from None
            outcome.refused.append(_refusal(message, error))
    return _Prepared(session, outcome, messages, runs)


def _run(readers: WireReaders, archived: dict[str, Any], settings: Settings) -> RunToImport:
    """A run refused refuses the file: the messages that name it would otherwise name none."""
    try:
        run = readers.run(archived)
        check_row_fields({**run.settings, **run.ending}, settings)
    except ProjectorError as error:
        run_id = archived.get("id")
        raise InvalidInput(f"run {run_id!r}: {error.detail}", field="body", runId=run_id) from None
    return run


def _same_run(stored: RunRecord | None, archived: RunToImport) -> bool:
    """Whether the stored run has the archived run's settings and ending (JSON compared as JSON)."""
    if stored is None:
        return False
    return same_fields(stored, {**archived.settings, **archived.ending})


def _refuse_repeat(earlier: NewMessage, repeat: NewMessage) -> None:
    """The session's messages are one batch, checked as an append checks one: an id given twice is the same
    message (stored once) or, with other content, refused, so the file's second message is never reported
    stored while the first is what the store keeps."""
    if not repeat.same_fact_as(earlier):
        raise InvalidInput(
            f"messages[0].id: '{repeat.id}' is also an earlier message of the session with other content",
            field="messages[0].id",
        )


def _refusal(message: ImportedMessage, error: ProjectorError) -> RefusedMessage:
    where = str(error.extensions.get("field", ""))
    return RefusedMessage(message.id, where.removeprefix("messages[0]").lstrip("."), error.detail)


async def _store(database: Database, tenant_id: str, settings: Settings, prepared: _Prepared) -> None:
    """One transaction for the session: created if new, then its messages appended in batches no larger
    than an append may be, each skipping what is already stored, and announced as appends are (the new
    messages, then the compaction they completed, if any) when it commits."""
    session, outcome = prepared.session, prepared.outcome
    async with database.transaction() as connection:
        created = await SessionRepository(connection, tenant_id).create(
            session.id,
            title=session.title,
            metadata=session.metadata,
            model=session.model,
            context_window_tokens=session.context_window_tokens,
        )
        outcome.created = created is not None
        repository = MessageRepository(connection, tenant_id)
        last_seq = await repository.lock_session(session.id)
        if last_seq is None:
            raise NotFound(f"session '{session.id}' was deleted while it was imported")
        runs = RunRepository(connection, tenant_id)
        for run in prepared.runs:
            if await runs.create(session.id, run.id, run.settings, created_at=run.created_at) is not None:
                outcome.runs_created.append(run.id)
                if run.ending:
                    await runs.amend(session.id, run.id, run.ending)
            elif not _same_run(await runs.get(session.id, run.id), run):
                outcome.runs_changed.append(run.id)
        first_seq = last_seq + 1
        compacting = changes_live_start([message.kind for message in prepared.messages])
        live_start = await repository.stored_live_start(session.id) if compacting else None
        batch_size = settings.max_batch_messages
        for start in range(0, len(prepared.messages), batch_size):
            batch = prepared.messages[start : start + batch_size]
            result = await repository.append(session.id, last_seq, batch)
            if result.conflicts:
                changed = {message_id for _, message_id in result.conflicts}
                outcome.changed.extend(message.id for message in batch if message.id in changed)
                batch = [message for message in batch if message.id not in changed]
                result = await repository.append(session.id, last_seq, batch)
            fresh = [row.id for row in result.messages if row.seq > last_seq]
            outcome.stored.extend(fresh)
            outcome.already_stored += len(batch) - len(fresh)
            last_seq += result.created
        if last_seq >= first_seq:
            await notify(connection, Notice(tenant_id, session.id, NoticeKind.MESSAGE, first_seq, last_seq))
            if compacting:
                await notify_recorded_compaction(connection, tenant_id, session.id, live_start)
