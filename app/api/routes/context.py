"""Context accounting, compaction and pruning: how full a session is, and the two ways to make room.

Compaction appends a boundary and its summary atomically (deleting nothing); pruning marks old tool
results ``compactedAt`` (keeping their content). Both are the runtime's to do.
"""

import dataclasses
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from sqlalchemy import func, select

from app.api.bodies import message_body
from app.api.context_config import prune_policy, tail_policy
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.intake import new_message_id, prepare_batch
from app.api.model_context import context_report, load_session_window, session_model
from app.api.responses import OrjsonResponse
from app.api.schemas import AppendMessagesRequest, CompactionRequest, ContextQuery, PathId, PruneRequest
from app.context import errors as context_errors
from app.context.compaction import build_compaction, compact_transcript, select_compaction
from app.context.pruning import compacted_at_patch, plan_prune
from app.context.summarizer import Summarizer
from app.errors import CompactionRefused, CompactionRunning, InvalidInput, MessageConflict, NotFound, SummarizerFailed
from app.store.messages import MessageRepository
from app.store.sessions import SessionRepository

router = APIRouter(prefix="/sessions/{session_id}", tags=["context"])

COMPACTION_LOCK_NAMESPACE = 0x636F6D70  # "comp"
"""Advisory-lock namespace: one compaction per session at a time, released when its transaction ends."""

REFUSAL_FIELDS = {
    "empty_summary": "summary",
    "nothing_to_compact": "sessionId",
    "unknown_through_message": "throughMessageId",
    "through_splits_tool_pair": "throughMessageId",
}


@router.get("/context")
async def get_context(
    session_id: PathId,
    query: Annotated[ContextQuery, Query()],
    request: Request,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    window = await load_session_window(
        database, principal.tenant_id, session_id, apply_compact_boundary=query.apply_compact_boundary
    )
    provider, model = session_model(window.session, query.provider, query.model)
    ctx = query.to_context(provider=provider, model=model)
    report = await context_report(
        window, ctx, request.app.state.model_windows, settings, max_output_tokens=query.max_output_tokens
    )
    return OrjsonResponse({"sessionId": session_id, **report.as_dict()})


@router.post("/compactions", status_code=201)
async def compact(
    session_id: PathId,
    body: CompactionRequest,
    request: Request,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    principal.require_runtime("compact a session")
    summarizer: Summarizer | None = request.app.state.summarizer
    if body.summary is None and summarizer is None:
        raise InvalidInput("summary: required, since no summarizer is configured", field="summary")
    async with database.transaction() as connection:
        lock_key = func.hashtext(f"{principal.tenant_id}:{session_id}")
        if not await connection.scalar(select(func.pg_try_advisory_xact_lock(COMPACTION_LOCK_NAMESPACE, lock_key))):
            raise CompactionRunning(f"a compaction of session '{session_id}' is already running")
        session = await SessionRepository(connection, principal.tenant_id).get(session_id)
        if session is None:
            raise NotFound(f"session '{session_id}' does not exist")
        repository = MessageRepository(connection, principal.tenant_id)
        history = await repository.model_window(session_id)
        provider, model = session_model(session, body.projection.provider, body.projection.model)
        ctx = body.projection.to_context(provider=provider, model=model)
        window = await request.app.state.model_windows.resolve(
            provider, model, session_tokens=session["context_window_tokens"]
        )
        try:
            selection = select_compaction(
                history,
                policy=tail_policy(settings),
                window_tokens=window.tokens,
                through_message_id=body.through_message_id,
                ctx=ctx,
            )
            text, source, summarizer_model = body.summary, "caller", None
            if text is None and summarizer is not None:
                answer = await summarizer.summarize(
                    compact_transcript(selection, ctx),
                    previous_summary=selection.previous_summary,
                    instructions=body.instructions,
                )
                text, source, summarizer_model = answer.text, "summarizer", summarizer.model
            plan = build_compaction(
                selection,
                text or "",
                boundary_id=body.boundary_id or new_message_id(),
                summary_id=body.summary_id or new_message_id(),
                trigger=body.trigger,
                summary_source=source,
                summarizer_model=summarizer_model,
            )
        except context_errors.CompactionRefused as refused:
            field = REFUSAL_FIELDS[refused.reason]
            raise CompactionRefused(f"{field}: {refused.detail}", field=field, reason=refused.reason) from refused
        except context_errors.SummarizerError as failed:
            raise SummarizerFailed(f"summarizer: {failed.detail}", reason=failed.reason) from failed

        written = AppendMessagesRequest.model_validate({"messages": [m.as_dict() for m in plan.messages]})
        batch = prepare_batch(written, principal, settings, datetime.now(UTC))
        last_seq = await repository.lock_session(session_id)
        result = await repository.append(session_id, last_seq or 0, batch)
        if result.conflicts:
            _, taken = result.conflicts[0]
            raise MessageConflict(f"id '{taken}' is already stored in this session", field="boundaryId")
    boundary, summary = result.messages
    return OrjsonResponse(
        {
            "boundary": message_body(boundary),
            "summary": message_body(summary),
            "compaction": plan.boundary.metadata["compaction"],
            "tokensAfter": plan.tokens_after,
        },
        status_code=201,
    )


@router.post("/prune")
async def prune(
    session_id: PathId, body: PruneRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_runtime("prune a session")
    policy = prune_policy(settings)
    overrides: dict[str, Any] = {
        "protect_user_turns": body.protect_user_turns,
        "protect_tool_tokens": body.protect_tool_tokens,
        "minimum_savings_tokens": body.minimum_savings_tokens,
        "protected_tool_names": frozenset(body.protected_tools) if body.protected_tools is not None else None,
    }
    policy = dataclasses.replace(policy, **{key: value for key, value in overrides.items() if value is not None})
    async with database.transaction() as connection:
        repository = MessageRepository(connection, principal.tenant_id)
        if await repository.lock_session(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        history = await repository.model_window(session_id)
        plan = plan_prune(history, policy, body.projection.to_context())
        marked: list[str] = []
        if plan.applied and not body.dry_run:
            stamp = compacted_at_patch(datetime.now(UTC))["compactedAt"]
            marked = await repository.mark_compacted(session_id, list(plan.message_ids), stamp)
    return OrjsonResponse({**plan.as_dict(), "dryRun": body.dry_run, "markedMessageIds": marked})
