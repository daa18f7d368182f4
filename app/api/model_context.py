"""Loading what the model sees of a session and counting it against the model's window.

Shared by ``POST /chat`` and ``GET /sessions/{id}/context`` so both report the same numbers: the store reads
only the compaction window, the window size comes from the one resolution order, and the count is the
context layer's.
"""

from dataclasses import dataclass
from typing import Any

import orjson

from app.api.context_config import threshold_policy
from app.api.cycle_collector import cycle_collection_paused
from app.context.accounting import ContextReport, account_context
from app.context.model_server import ModelServerWindows
from app.context.window import ContextWindow
from app.engine.message import EngineMessage
from app.engine.tokens import estimate_tokens
from app.errors import NotFound
from app.projections.types import Projection, ProjectionContext
from app.projections.window import FIRST_SEQ
from app.settings import Settings
from app.store.database import Database
from app.store.messages import MessageRepository
from app.store.runs import RunRepository
from app.store.sessions import SessionRepository


@dataclass(frozen=True, slots=True)
class SessionWindow:
    session: dict[str, Any]
    run: dict[str, Any] | None
    messages: list[EngineMessage]
    run_models: dict[str, str]


async def load_session_window(
    database: Database,
    tenant_id: str,
    session_id: str,
    *,
    run_id: str | None = None,
    apply_compact_boundary: bool = True,
) -> SessionWindow:
    """One consistent snapshot of the session, its run and the messages the model view needs."""
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
            await repository.model_window(session_id)
            if apply_compact_boundary
            else await repository.from_seq(session_id, FIRST_SEQ)
        )
        run_models = await runs.models(session_id)
    return SessionWindow(session, run, messages, run_models)


def request_tokens(system: str | None, tools: list[dict[str, Any]] | None) -> int:
    """What a request sends besides the history: its system text and tool schemas."""
    return estimate_tokens(system or "") + (estimate_tokens(orjson.dumps(tools).decode()) if tools else 0)


async def context_report(
    window: SessionWindow,
    ctx: ProjectionContext,
    windows: ModelServerWindows,
    settings: Settings,
    *,
    max_output_tokens: int | None = None,
    extra_tokens: int = 0,
) -> ContextReport:
    resolved = await window_size(window, ctx, windows)
    with cycle_collection_paused():
        return count_context(
            window, ctx, resolved, settings, max_output_tokens=max_output_tokens, extra_tokens=extra_tokens
        )


async def window_size(window: SessionWindow, ctx: ProjectionContext, windows: ModelServerWindows) -> ContextWindow:
    """The model's context window (the part of ``context_report`` that may ask a model server)."""
    return await windows.resolve(ctx.provider, ctx.model, session_tokens=window.session["context_window_tokens"])


def count_context(
    window: SessionWindow,
    ctx: ProjectionContext,
    resolved: ContextWindow,
    settings: Settings,
    *,
    max_output_tokens: int | None = None,
    extra_tokens: int = 0,
    view: Projection | None = None,
) -> ContextReport:
    """The synchronous rest of ``context_report``, once the window size is known; ``view``: the model view
    under ``ctx`` when the caller has built it already."""
    return account_context(
        window.messages,
        window=resolved,
        policy=threshold_policy(settings),
        ctx=ctx,
        max_output_tokens=max_output_tokens,
        request_tokens=extra_tokens,
        run_models=window.run_models,
        view=view,
    )


def session_model(session: dict[str, Any], provider: str | None, model: str | None) -> tuple[str | None, str | None]:
    """The model to count for: the request's, else the session's ``provider/modelId`` reference."""
    reference = session.get("model")
    if model or not reference:
        return provider, model
    session_provider, _, session_model_id = reference.rpartition("/")
    if not session_provider:
        return provider, reference
    if provider and provider != session_provider:
        return provider, None
    return session_provider, session_model_id
