"""One consistent snapshot of a session for the model-side use cases (``/chat``, the context report).

The session, the run a request names, the live history and the run models are read in one REPEATABLE READ
snapshot, and the connection goes back before anything asks another server. With a ``WindowReuse``, a window
kept from an earlier request is extended by the messages appended since, when the session row says nothing
else changed (``app.services.window_reuse``).
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from app.engine.message import EngineMessage
from app.engine.model_ref import model_ref, provider_family
from app.errors import NotFound
from app.projections.live_history import FIRST_SEQ
from app.providers.registry import REFERENCE_TARGETS
from app.services.heavy_work import content_weight, run_weighed
from app.services.window_reuse import KeptWindow, WindowKey, WindowReuse, stamp_of, window_size
from app.store.database import Database
from app.store.messages import MessageRepository
from app.store.records import RunRecord, SessionRecord
from app.store.runs import RunRepository
from app.store.sessions import SessionRepository


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    session: SessionRecord
    run: RunRecord | None
    messages: list[EngineMessage]
    """The live history (from the newest complete compaction on), or every message when the boundary is off."""
    run_models: dict[str, object]
    """Each run's model reference as stored (``provider/modelId``, a bare id or opencode's object)."""
    weight: int = 0
    """The messages' ``heavy_work.content_weight``: a kept window's own plus that of the messages since."""


T = TypeVar("T")
AlsoRead = Callable[[AsyncConnection, SessionRecord, RunRecord | None], Awaitable[T]]
"""What a use case reads besides, given the session and run read: in the same snapshot and checkout."""


async def load_snapshot(
    database: Database,
    tenant_id: str,
    session_id: str,
    *,
    run_id: str | None = None,
    apply_compact_boundary: bool = True,
    reuse: WindowReuse | None = None,
) -> SessionSnapshot:
    snapshot, _ = await load_snapshot_with(
        database,
        tenant_id,
        session_id,
        _nothing,
        run_id=run_id,
        apply_compact_boundary=apply_compact_boundary,
        reuse=reuse,
    )
    return snapshot


async def _nothing(_connection: AsyncConnection, _session: SessionRecord, _run: RunRecord | None) -> None:
    return None


async def load_snapshot_with(
    database: Database,
    tenant_id: str,
    session_id: str,
    also: AlsoRead[T],
    *,
    run_id: str | None = None,
    apply_compact_boundary: bool = True,
    reuse: WindowReuse | None = None,
) -> tuple[SessionSnapshot, T]:
    """The snapshot, and what ``also`` reads once the session and run are known (an error it raises comes
    before the window is read)."""
    async with database.reading() as connection:
        read = await SessionRepository(connection, tenant_id).get_with_live_start(session_id)
        if read is None:
            raise NotFound(f"sessionId: session '{session_id}' does not exist", field="sessionId")
        session, live_start = read
        runs = RunRepository(connection, tenant_id)
        run = None
        if run_id is not None:
            run = await runs.get(session_id, run_id)
            if run is None:
                raise NotFound(f"runId: run '{run_id}' does not exist in session '{session_id}'", field="runId")
        found = await also(connection, session, run)
        repository = MessageRepository(connection, tenant_id)
        key = WindowKey(tenant_id, session_id, apply_compact_boundary)
        if reuse is None or reuse.capacity <= 0:
            messages, stamp, kept = await _window(repository, key), None, None
        else:
            stamp = stamp_of(session, live_start)
            messages, kept = await _current(repository, key, reuse, reuse.usable(key, stamp, session), session)
        run_models = await runs.models(session_id)
    fresh = content_weight(message.content for message in messages[len(kept.messages) if kept else 0 :])
    weight = fresh + (kept.weight if kept else 0)
    if reuse is not None and stamp is not None:
        # Measuring a window walks its parts: a large one (a first read) is measured in a worker thread.
        size = await run_weighed(fresh, window_size, messages, kept)
        reuse.keep(key, stamp, session, messages, size, weight)
    return SessionSnapshot(session, run, messages, run_models, weight), found


async def _window(repository: MessageRepository, key: WindowKey) -> list[EngineMessage]:
    if key.apply_compact_boundary:
        return await repository.live_history(key.session_id)
    return await repository.from_seq(key.session_id, FIRST_SEQ)


async def _current(
    repository: MessageRepository, key: WindowKey, reuse: WindowReuse, kept: KeptWindow | None, session: SessionRecord
) -> tuple[list[EngineMessage], KeptWindow | None]:
    """The window now, and the kept window (brought up to date) it starts with; None when it was read whole."""
    rewrites = kept.rewrites_since(session) if kept is not None else 0
    if kept is not None and rewrites:
        amended = await repository.amended_since(key.session_id, kept.revision)
        if amended.stamps != rewrites:
            kept = None
        else:
            before = kept.messages
            kept, replaced = kept.with_replaced(amended.messages)
            if replaced:
                reuse.refresh_turns(key, before, replaced)
    reuse.counted("miss" if kept is None else "refresh" if rewrites else "hit")
    if kept is None:
        return await _window(repository, key), None
    if kept.last_seq == session.last_seq:
        return list(kept.messages), kept
    newer = await repository.seq_range(key.session_id, kept.last_seq + 1, session.last_seq)
    return [*kept.messages, *newer], kept


def session_model(session: SessionRecord, provider: str | None, model: str | None) -> tuple[str | None, str | None]:
    """The model to count for: the request's, else the session's reference."""
    if model or session.model is None:
        return provider, model
    return for_target(provider, session.model)


def for_target(provider: str | None, reference: object) -> tuple[str | None, str | None]:
    """A stored model reference (any form ``model_ref`` reads) as the ``(provider, model)`` of a request to
    ``provider``: the model id for a provider of its family (or any, when it names none), the whole
    ``provider/modelId`` for a target that takes one (``ai-sdk``), no model for another provider's."""
    found = model_ref(reference)
    if found is None:
        return provider, None
    if provider in REFERENCE_TARGETS:
        return provider, found.reference()
    if found.provider is None or provider is None:
        return provider or found.provider, found.model
    if provider_family(provider) != found.family:
        return provider, None
    return provider, found.model
