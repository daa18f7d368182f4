"""``/chat``: the exact request body a provider accepts, built from the session's model view, and how full
the context is with it."""

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.context.accounting import ContextReport
from app.context.model_server import ModelServerWindows
from app.errors import InvalidInput
from app.projections.projector import project
from app.projections.types import Projection, ProjectionContext, View
from app.providers.chat_request import ChatRequest, build_chat_request
from app.providers.registry import adapter_for
from app.services.context_report import count_context, request_tokens, window_size
from app.services.snapshots import load_snapshot, session_model
from app.settings import Settings
from app.store.database import Database
from app.store.records import RunRecord


@dataclass(frozen=True, slots=True)
class ChatAsk:
    """What a ``/chat`` caller asks for; what it leaves out comes from the run, then the session."""

    session_id: str
    provider: str
    ctx: ProjectionContext
    run_id: str | None = None
    model: str | None = None
    system: str | None = None
    tools: list[dict[str, Any]] | None = None
    mutations: Sequence[Mapping[str, Any]] = ()
    max_output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    request: ChatRequest
    context: ContextReport


def run_model(run: RunRecord | None, provider: str) -> str | None:
    """A run names its model as ``provider/modelId`` or as the bare id."""
    model = run.model if run else None
    return model.removeprefix(f"{provider}/") if model else None


async def build_chat(
    database: Database, windows: ModelServerWindows, settings: Settings, tenant_id: str, ask: ChatAsk
) -> ChatAnswer:
    adapter_for(ask.provider)
    snapshot = await load_snapshot(
        database,
        tenant_id,
        ask.session_id,
        run_id=ask.run_id,
        apply_compact_boundary=ask.ctx.apply_compact_boundary,
    )
    run = snapshot.run
    model = ask.model or run_model(run, ask.provider) or session_model(snapshot.session, ask.provider, None)[1]
    if not model:
        raise InvalidInput("model: required unless the run or the session names one", field="model")
    system = ask.system if ask.system is not None else (run.system if run else None)
    tools = ask.tools if ask.tools is not None else (run.tools if run else None)
    ctx = dataclasses.replace(ask.ctx, provider=ask.provider or ask.ctx.provider, model=model)
    view = project(View.MODEL, snapshot.messages, ctx)
    built = chat_request(ask, view, model=model, system=system, tools=tools)
    resolved = await window_size(snapshot, ctx, windows)
    report = count_context(
        snapshot,
        ctx,
        resolved,
        settings,
        max_output_tokens=ask.max_output_tokens,
        extra_tokens=request_tokens(system, tools),
        view=view,
    )
    return ChatAnswer(built, report)


def chat_request(
    ask: ChatAsk, view: Projection, *, model: str, system: str | None, tools: list[dict[str, Any]] | None
) -> ChatRequest:
    return build_chat_request(
        view,
        provider=ask.provider,
        model=model,
        system=system,
        tools=tools,
        mutations=ask.mutations,
        max_output_tokens=ask.max_output_tokens,
    )
