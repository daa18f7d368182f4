"""``/chat``: the exact request body a provider accepts, built from the session's model view, and how full
the context is with it."""

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.context.accounting import ContextReport
from app.context.model_server import ModelServerWindows
from app.engine.model_ref import model_ref
from app.errors import InvalidInput
from app.projections.projector import project
from app.projections.types import Projection, ProjectionContext, View
from app.providers.chat_request import ChatRequest, build_chat_request
from app.providers.registry import adapter_for
from app.providers.request_settings import RequestSettings, parse_format, parse_variant
from app.services.context_report import count_context, request_tokens, window_size
from app.services.snapshots import for_target, load_snapshot, session_model
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
    variant: str | None = None
    format: Any = None
    agent: str | None = None
    prefill: bool = False


@dataclass(frozen=True, slots=True)
class Asked:
    """What the request asks once the run has filled in what it left out."""

    system: str | None
    tools: list[dict[str, Any]] | None
    tool_switches: dict[str, bool] | None
    settings: RequestSettings
    agent: str | None


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    request: ChatRequest
    context: ContextReport
    agent: str | None
    """The agent this request is for, the request's else the run's: no provider takes an agent in its body,
    and no view rule depends on one."""


def run_model(run: RunRecord | None, provider: str) -> str | None:
    """The model a run names, as a request to ``provider`` takes it."""
    return for_target(provider, run.model)[1] if run is not None else None


def asked_of(ask: ChatAsk, run: RunRecord | None) -> Asked:
    """The request's fields, each taken from the run where the request leaves it out: system text, tools (a
    run's opencode tools map switches the request's definitions on and off), variant (also from the run's
    model reference, as opencode writes it), format and agent."""
    run_tools = run.tools if run is not None else None
    tools = ask.tools if ask.tools is not None else (run_tools if isinstance(run_tools, list) else None)
    found = model_ref(run.model) if run is not None else None
    variant = ask.variant or (run.variant if run is not None else None) or (found.variant if found else None)
    output = ask.format if ask.format is not None else (run.format if run is not None else None)
    return Asked(
        system=ask.system if ask.system is not None else (run.system if run is not None else None),
        tools=tools,
        tool_switches=run_tools if isinstance(run_tools, dict) else None,
        settings=RequestSettings(parse_variant(variant), parse_format(output), ask.prefill),
        agent=ask.agent or (run.agent if run is not None else None),
    )


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
    asked = asked_of(ask, run)
    ctx = dataclasses.replace(
        ask.ctx,
        provider=ask.provider,
        model=model,
        run_models=snapshot.run_models,
    )
    view = project(View.MODEL, snapshot.messages, ctx)
    built = chat_request(ask, view, model=model, asked=asked)
    resolved = await window_size(snapshot, ctx, windows)
    report = count_context(
        snapshot,
        ctx,
        resolved,
        settings,
        max_output_tokens=ask.max_output_tokens,
        extra_tokens=request_tokens(asked.system, asked.tools),
        view=view,
    )
    return ChatAnswer(built, report, asked.agent)


def chat_request(ask: ChatAsk, view: Projection, *, model: str, asked: Asked) -> ChatRequest:
    return build_chat_request(
        view,
        provider=ask.provider,
        model=model,
        system=asked.system,
        tools=asked.tools,
        mutations=ask.mutations,
        max_output_tokens=ask.max_output_tokens,
        settings=asked.settings,
        tool_switches=asked.tool_switches,
    )
