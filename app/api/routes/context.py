"""Context accounting, compaction and pruning: how full a session is, and the two ways to make room.

Compaction appends a boundary and its summary atomically (deleting nothing); pruning marks old tool
results ``compactedAt`` (keeping their content). Both are the runtime's to do.
"""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from app.api.bodies import compaction_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.off_loop import OffLoopRoute
from app.api.problems import problem_responses
from app.api.responses import OrjsonResponse
from app.api.schemas import CompactionOut, CompactionRequest, ContextOut, ContextQuery, PathId, PruneOut, PruneRequest
from app.services import compaction, pruning
from app.services.context_report import report_context

router = APIRouter(route_class=OffLoopRoute, prefix="/sessions/{session_id}", tags=["context"])


@router.get("/context", response_model=ContextOut)
async def get_context(
    session_id: PathId,
    query: Annotated[ContextQuery, Query()],
    request: Request,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    windows = request.app.state.model_windows
    report = await report_context(
        database,
        windows,
        settings,
        principal.tenant_id,
        session_id,
        query.to_context(),
        max_output_tokens=query.max_output_tokens,
        reuse=request.app.state.window_reuse,
    )
    return OrjsonResponse({"sessionId": session_id, **report.as_dict()})


SUMMARIZER_FAILED = problem_responses(
    {502: "The summarizer failed, gave no summary, or its window cannot hold the history in 64 parts"}
)
COMPACTION_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": CompactionOut, "description": "A retry: this boundary and summary were stored already"},
    **SUMMARIZER_FAILED,
}


@router.post("/compactions", status_code=201, response_model=CompactionOut, responses=COMPACTION_RESPONSES)
async def compact(
    session_id: PathId,
    body: CompactionRequest,
    request: Request,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    principal.require_runtime("compact a session")
    ask = compaction.CompactionAsk(
        session_id=session_id,
        ctx=body.projection.to_context(),
        summary=body.summary,
        through_message_id=body.through_message_id,
        boundary_id=body.boundary_id,
        summary_id=body.summary_id,
        trigger=body.trigger,
        instructions=body.instructions,
    )
    state = request.app.state
    done = await compaction.compact(
        database, state.model_windows, state.summarizer, settings, principal, ask, datetime.now(UTC)
    )
    return OrjsonResponse(compaction_body(done), status_code=200 if done.replayed else 201)


@router.post("/prune", response_model=PruneOut)
async def prune(
    session_id: PathId, body: PruneRequest, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    principal.require_runtime("prune a session")
    ask = pruning.PruneAsk(
        session_id=session_id,
        ctx=body.projection.to_context(),
        dry_run=body.dry_run,
        protect_user_turns=body.protect_user_turns,
        protect_tool_tokens=body.protect_tool_tokens,
        minimum_savings_tokens=body.minimum_savings_tokens,
        protected_tools=frozenset(body.protected_tools) if body.protected_tools is not None else None,
    )
    pruned = await pruning.prune(database, settings, principal.tenant_id, ask, datetime.now(UTC))
    return OrjsonResponse(
        {**pruned.plan.as_dict(), "dryRun": body.dry_run, "markedMessageIds": pruned.marked_message_ids}
    )
