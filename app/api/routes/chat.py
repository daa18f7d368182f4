"""``POST /chat``: the exact request body a provider accepts, built from the session's model view."""

from typing import Any

from fastapi import APIRouter, Request, Response

from app.api.bodies import diagnostics_body
from app.api.cycle_collector import cycle_collection_paused
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.model_context import (
    count_context,
    load_session_window,
    request_tokens,
    session_model,
    window_size,
)
from app.api.responses import OrjsonResponse
from app.api.schemas import ChatRequestBody, ChatResponseBody
from app.errors import InvalidInput
from app.projections.projector import project
from app.projections.types import Projection, View
from app.providers.chat_request import ChatRequest, build_chat_request
from app.providers.registry import adapter_for

router = APIRouter(tags=["chat"])


def run_model(run: dict[str, Any] | None, provider: str) -> str | None:
    """A run names its model as ``provider/modelId`` or as the bare id."""
    model = run["model"] if run else None
    return model.removeprefix(f"{provider}/") if model else None


@router.post("/chat", response_model=ChatResponseBody)
async def chat(
    body: ChatRequestBody, request: Request, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    adapter_for(body.provider)
    window = await load_session_window(
        database,
        principal.tenant_id,
        body.session_id,
        run_id=body.run_id,
        apply_compact_boundary=body.projection.apply_compact_boundary,
    )
    run = window.run
    model = body.model or run_model(run, body.provider) or session_model(window.session, body.provider, None)[1]
    if not model:
        raise InvalidInput("model: required unless the run or the session names one", field="model")
    system = body.system if body.system is not None else (run["system"] if run else None)
    tools = body.tools if body.tools is not None else (run["tools"] if run else None)

    ctx = body.projection.to_context(provider=body.provider, model=model)
    # The cycle collector is paused over the synchronous stretches only, never across an await (see its
    # module); each runs in a function of its own so that what it made and dropped is freed before resuming.
    with cycle_collection_paused():
        view = project(View.MODEL, window.messages, ctx)
        built = chat_request(body, view, model=model, system=system, tools=tools)
    resolved = await window_size(window, ctx, request.app.state.model_windows)
    with cycle_collection_paused():
        report = count_context(
            window,
            ctx,
            resolved,
            settings,
            max_output_tokens=body.max_output_tokens,
            extra_tokens=request_tokens(system, tools),
            view=view,
        )
        return OrjsonResponse(
            {
                "provider": built.provider,
                "model": built.model,
                "payload": built.payload,
                "diagnostics": diagnostics_body(built.diagnostics),
                "context": report.as_dict(),
            }
        )


def chat_request(
    body: ChatRequestBody, view: Projection, *, model: str, system: str | None, tools: list[dict[str, Any]] | None
) -> ChatRequest:
    return build_chat_request(
        view,
        provider=body.provider,
        model=model,
        system=system,
        tools=tools,
        mutations=body.mutations,
        max_output_tokens=body.max_output_tokens,
    )
