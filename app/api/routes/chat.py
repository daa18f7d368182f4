"""``POST /chat``: the exact request body a provider accepts, built from the session's model view."""

from fastapi import APIRouter, Request, Response

from app.api.bodies import chat_ask, chat_diagnostics_body
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.idempotency import WRITES_NOTHING
from app.api.off_loop import OffLoopRoute
from app.api.responses import EncodedJsonResponse, encode_json
from app.api.schemas import ChatRequestBody, ChatResponseBody
from app.services.chat import build_chat
from app.services.heavy_work import run_weighed

router = APIRouter(route_class=OffLoopRoute, tags=["chat"])


@router.post("/chat", response_model=ChatResponseBody, openapi_extra=WRITES_NOTHING)
async def chat(
    body: ChatRequestBody, request: Request, database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    ask = chat_ask(body)
    state = request.app.state
    answer = await build_chat(
        database,
        state.model_windows,
        settings,
        principal.tenant_id,
        ask,
        remember=principal.may_act_as("writer"),
        reuse=state.window_reuse,
    )
    built = answer.request
    wire = {
        "provider": built.provider,
        "model": built.model,
        "agent": answer.agent,
        "payload": built.payload,
        "diagnostics": chat_diagnostics_body(built.diagnostics, answer.prefix_break),
        "context": answer.context.as_dict(),
    }
    return EncodedJsonResponse(await run_weighed(answer.weight, encode_json, wire))
