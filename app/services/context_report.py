"""How full a session's context is: what the model view sends, counted against the model's window.

``/chat`` and ``GET /sessions/{id}/context`` count the same way: the live history from one snapshot, the
window size from the one resolution order (which may ask a model server, with no connection held), and the
context layer's count.
"""

import dataclasses

from app import lossless_json
from app.context.accounting import ContextReport, account_context
from app.context.catalog import bundled_catalog, default_max_output_tokens, with_readable_media
from app.context.model_server import ModelServerWindows
from app.context.window import ContextWindow
from app.engine.tokens import estimate_tokens
from app.projections.types import ProjectionContext
from app.services.context_config import threshold_policy
from app.services.heavy_work import run_within
from app.services.snapshots import SessionSnapshot, load_snapshot, session_model
from app.services.window_reuse import WindowReuse
from app.settings import Settings
from app.store.database import Database


async def report_context(
    database: Database,
    windows: ModelServerWindows,
    settings: Settings,
    tenant_id: str,
    session_id: str,
    ctx: ProjectionContext,
    *,
    max_output_tokens: int | None,
    reuse: WindowReuse | None = None,
) -> ContextReport:
    """``ctx`` names the model to count for, or leaves it to the session's; ``max_output_tokens`` left out is
    the model's output limit from the catalog, so the threshold reserves the room the answer may take.
    ``reuse``: windows kept between requests. Counting a large window (which builds the model view) runs in
    a worker thread within the view time budget."""
    snapshot = await load_snapshot(
        database, tenant_id, session_id, apply_compact_boundary=ctx.apply_compact_boundary, reuse=reuse
    )
    provider, model = session_model(snapshot.session, ctx.provider, ctx.model)
    ctx = with_readable_media(
        bundled_catalog(),
        dataclasses.replace(
            ctx, provider=provider or ctx.provider, model=model or ctx.model, run_models=snapshot.run_models
        ),
    )
    resolved = await window_size(snapshot, ctx, windows)
    if max_output_tokens is None:
        max_output_tokens = default_max_output_tokens(bundled_catalog(), ctx.provider, ctx.model, resolved.tokens)
    return await run_within(
        settings.view_timeout_seconds,
        snapshot.weight,
        count_context,
        snapshot,
        ctx,
        resolved,
        settings,
        max_output_tokens=max_output_tokens,
    )


async def window_size(snapshot: SessionSnapshot, ctx: ProjectionContext, windows: ModelServerWindows) -> ContextWindow:
    """The model's context window (the step that may ask a model server)."""
    return await windows.resolve(ctx.provider, ctx.model, session_tokens=snapshot.session.context_window_tokens)


def count_context(
    snapshot: SessionSnapshot,
    ctx: ProjectionContext,
    resolved: ContextWindow,
    settings: Settings,
    *,
    max_output_tokens: int | None = None,
) -> ContextReport:
    return account_context(
        snapshot.messages,
        window=resolved,
        policy=threshold_policy(settings),
        ctx=ctx,
        max_output_tokens=max_output_tokens,
    )


def request_tokens(system: str | None, tools: list[dict[str, object]] | None) -> int:
    """What a request sends besides the history: its system text and tool schemas."""
    return estimate_tokens(system or "") + (estimate_tokens(lossless_json.dumps(tools).decode()) if tools else 0)
