"""One consistent snapshot of a session for the model-side use cases (``/chat``, the context report).

The session, the run a request names, the live history and the run models are read in one REPEATABLE READ
snapshot, and the connection goes back before anything asks another server.
"""

from dataclasses import dataclass

from app.engine.message import EngineMessage
from app.errors import NotFound
from app.projections.live_history import FIRST_SEQ
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
    run_models: dict[str, str]


async def load_snapshot(
    database: Database,
    tenant_id: str,
    session_id: str,
    *,
    run_id: str | None = None,
    apply_compact_boundary: bool = True,
) -> SessionSnapshot:
    async with database.reading() as connection:
        session = await SessionRepository(connection, tenant_id).get(session_id)
        if session is None:
            raise NotFound(f"sessionId: session '{session_id}' does not exist", field="sessionId")
        runs = RunRepository(connection, tenant_id)
        run = None
        if run_id is not None:
            run = await runs.get(session_id, run_id)
            if run is None:
                raise NotFound(f"runId: run '{run_id}' does not exist in session '{session_id}'", field="runId")
        repository = MessageRepository(connection, tenant_id)
        messages = (
            await repository.live_history(session_id)
            if apply_compact_boundary
            else await repository.from_seq(session_id, FIRST_SEQ)
        )
        run_models = await runs.models(session_id)
    return SessionSnapshot(session, run, messages, run_models)


def session_model(session: SessionRecord, provider: str | None, model: str | None) -> tuple[str | None, str | None]:
    """The model to count for: the request's, else the session's ``provider/modelId`` reference."""
    reference = session.model
    if model or not reference:
        return provider, model
    session_provider, _, session_model_id = reference.rpartition("/")
    if not session_provider:
        return provider, reference
    if provider and provider != session_provider:
        return provider, None
    return session_provider, session_model_id
