"""``/chat``: the exact request body a provider accepts, built from the session's model view, and how full
the context is with it."""

import dataclasses
import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy.ext.asyncio import AsyncConnection

from app.context.accounting import ContextReport, context_report
from app.context.cache_report import HistoryState, PrefixBreak, history_state, next_request, prefix_break
from app.context.catalog import bundled_catalog, default_max_output_tokens, with_readable_media
from app.context.model_server import ModelServerWindows
from app.context.window import ContextWindow
from app.engine.message import EngineMessage
from app.engine.model_ref import model_ref
from app.errors import InvalidInput
from app.observability import TURN_SPLICES
from app.projections.projector import project
from app.projections.types import Projection, ProjectionContext, View
from app.providers.caching import (
    AUTO,
    CachedReach,
    CachePolicy,
    CacheTarget,
    PromptPrefix,
    prompt_cache_key,
)
from app.providers.chat_request import ChatRequest, Draft, draft_chat_request
from app.providers.registry import adapter_for
from app.providers.request_settings import RequestSettings, parse_format, parse_variant
from app.services.context_config import threshold_policy
from app.services.context_report import request_tokens, window_size
from app.services.heavy_work import run_within
from app.services.snapshots import SessionSnapshot, for_target, load_snapshot_with, session_model
from app.services.turn_splice import KeptTurn, build_turn, count_turn
from app.services.window_reuse import TurnKey, WindowKey, WindowReuse
from app.settings import Settings
from app.store.database import Database
from app.store.prompt_prefixes import PromptPrefixRecord, PromptPrefixRepository
from app.store.records import RunRecord, SessionRecord


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
    cache: CachePolicy = AUTO


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
    prefix_break: PrefixBreak | None = None
    """What broke the stable prefix the previous request of the same parameters sent, if anything did."""
    weight: int = 0
    """The window's ``heavy_work.content_weight``: past ``OFF_LOOP_WEIGHT`` the answer, about the size of the
    window, is encoded in a worker thread too."""


def run_model(run: RunRecord | None, provider: str) -> str | None:
    """The model a run names, as a request to ``provider`` takes it."""
    return for_target(provider, run.model)[1] if run is not None else None


def asked_of(ask: ChatAsk, run: RunRecord | None, model_variant: str | None = None) -> Asked:
    """The request's fields, each taken from the run where the request leaves it out: system text, tools (a
    run's opencode tools map switches the request's definitions on and off), variant (also from the run's
    model reference, as opencode writes it, else ``model_variant``: the session's, when its model is the one
    asked), format and agent."""
    run_tools = run.tools if run is not None else None
    tools = ask.tools if ask.tools is not None else (run_tools if isinstance(run_tools, list) else None)
    found = model_ref(run.model) if run is not None else None
    variant = (
        ask.variant or (run.variant if run is not None else None) or (found.variant if found else None) or model_variant
    )
    output = ask.format if ask.format is not None else (run.format if run is not None else None)
    return Asked(
        system=ask.system if ask.system is not None else (run.system if run is not None else None),
        tools=tools,
        tool_switches=run_tools if isinstance(run_tools, dict) else None,
        settings=RequestSettings(parse_variant(variant), parse_format(output), ask.prefill),
        agent=ask.agent or (run.agent if run is not None else None),
    )


async def build_chat(
    database: Database,
    windows: ModelServerWindows,
    settings: Settings,
    tenant_id: str,
    ask: ChatAsk,
    *,
    remember: bool,
    reuse: WindowReuse | None = None,
) -> ChatAnswer:
    """The payload, its context report, and the prefix it shares with the previous request of the same
    parameters (remembered per session in one small row, written after building when ``remember``: a caller
    who may not write, a reader, neither adds rows nor replaces the runtime's). ``reuse``: windows kept
    between turns (``app.services.window_reuse``). The build itself (model view, payload, count) runs in a
    worker thread within the view time budget when the window is large."""
    adapter_for(ask.provider)
    snapshot, resolved = await load_snapshot_with(
        database,
        tenant_id,
        ask.session_id,
        functools.partial(_resolve, ask, tenant_id),
        run_id=ask.run_id,
        apply_compact_boundary=ask.ctx.apply_compact_boundary,
        reuse=reuse,
    )
    model, asked, params, previous = resolved
    ctx = with_readable_media(
        bundled_catalog(),
        dataclasses.replace(ask.ctx, provider=ask.provider, model=model, run_models=snapshot.run_models),
    )
    window = await window_size(snapshot, ctx, windows)
    max_output = ask.max_output_tokens or default_max_output_tokens(
        bundled_catalog(), ask.provider, model, window.tokens
    )
    target = CacheTarget(ask.cache, settings.cache_min_tokens, cache_key=_cache_key(settings, tenant_id, ask))
    measured = None if previous is None else _remembered_prefix(previous)
    keeps_turns = reuse is not None and reuse.capacity > 0 and not ask.mutations
    turn_key = TurnKey(WindowKey(tenant_id, ask.session_id, ctx.apply_compact_boundary), params)
    kept_turn = reuse.kept_turn(turn_key) if reuse is not None and keeps_turns else None
    plan = _Plan(
        ask, snapshot, ctx, asked, model, max_output, target, measured, window, settings, keeps_turns, kept_turn
    )
    built, report, now, next_turn = await run_within(settings.view_timeout_seconds, snapshot.weight, _build, plan)
    if reuse is not None and keeps_turns:
        reuse.keep_turn(turn_key, next_turn, snapshot.session)
    broke = None
    if previous is not None and measured is not None and not built.unchanged:
        then = HistoryState(previous.revision, previous.boundary_id, previous.pruned)
        broke = prefix_break(then, now, previous_tokens=measured.tokens, mutated=bool(ask.mutations))
    if remember:
        await _remember_prefix(database, tenant_id, ask.session_id, params, built, now, added=previous is None)
    return ChatAnswer(built, report, asked.agent, broke, snapshot.weight)


class _Resolved(NamedTuple):
    model: str
    asked: Asked
    params: str
    """The request parameters' hash (``_params_hash``)."""
    previous: PromptPrefixRecord | None
    """The prefix the previous request of the same parameters remembered."""


async def _resolve(
    ask: ChatAsk, tenant_id: str, connection: AsyncConnection, session: SessionRecord, run: RunRecord | None
) -> _Resolved:
    """What the run, then the session, fill in, and the remembered prefix: read in the session's snapshot."""
    given = ask.model or run_model(run, ask.provider)
    model = given or session_model(session, ask.provider, None)[1]
    if not model:
        raise InvalidInput(f"model: {_why_no_model(ask.provider, run, session)}", field="model")
    session_ref = None if given else model_ref(session.model)
    asked = asked_of(ask, run, session_ref.variant if session_ref is not None else None)
    params = _params_hash(ask, model, asked)
    return _Resolved(
        model, asked, params, await PromptPrefixRepository(connection, tenant_id).get(ask.session_id, params)
    )


def _why_no_model(provider: str, run: RunRecord | None, session: SessionRecord) -> str:
    """A model the run or session names for another provider is not taken for this one: said, since "names
    none" would be false."""
    for owner, reference in (("run", run.model if run is not None else None), ("session", session.model)):
        found = model_ref(reference)
        if found is not None:
            return (
                f"required: the {owner} names {found.reference()}, a model of another provider than {provider};"
                " name one of this provider's"
            )
    return "required unless the run or the session names one"


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything the pure build needs, read before it."""

    ask: ChatAsk
    snapshot: SessionSnapshot
    ctx: ProjectionContext
    asked: Asked
    model: str
    max_output: int | None
    target: CacheTarget
    previous: PromptPrefix | None
    window: ContextWindow
    settings: Settings
    keeps_turns: bool = False
    """Whether the build keeps what the next turn's may splice (``app.services.turn_splice``)."""
    kept_turn: KeptTurn | None = None
    """What the previous build of the same parameters kept, when its window is this one's start."""

    def draft(self, view: Projection, *, continues: bool = False) -> Draft:
        """``max_output``: the request's, or the catalog's default for the model; only Anthropic's payload takes
        the default (its ``max_tokens`` is required), other targets get a limit only when one is asked.
        ``continues``: see ``draft_chat_request``."""
        ask, asked = self.ask, self.asked
        return draft_chat_request(
            view,
            provider=ask.provider,
            model=self.model,
            system=asked.system,
            tools=asked.tools,
            mutations=ask.mutations,
            max_output_tokens=self.max_output if ask.provider == "anthropic" else ask.max_output_tokens,
            settings=dataclasses.replace(asked.settings, output_limit=self.max_output),
            tool_switches=asked.tool_switches,
            cache=self.target,
            continues=continues,
        )

    def build_whole(self, messages: Sequence[EngineMessage]) -> tuple[Projection, Draft]:
        view = project(View.MODEL, messages, self.ctx)
        return view, self.draft(view)

    def build_tail(self, messages: Sequence[EngineMessage]) -> tuple[Projection, Draft]:
        view = project(View.MODEL, messages, self.ctx)
        return view, self.draft(view, continues=True)


class _Built(NamedTuple):
    request: ChatRequest
    report: ContextReport
    now: HistoryState
    kept_turn: KeptTurn | None


def _build(plan: _Plan) -> _Built:
    """The model view, the payload and its context report: no I/O, so it may run in a worker thread. The
    pipeline runs on the messages from the kept turn's cut on when it may (``turn_splice.splice``)."""
    snapshot, asked = plan.snapshot, plan.asked
    messages = snapshot.messages
    turn = build_turn(
        messages,
        plan.build_whole,
        plan.build_tail,
        cache=plan.target,
        previous=plan.previous,
        kept=plan.kept_turn,
        keep=plan.keeps_turns,
    )
    TURN_SPLICES.labels(turn.outcome).inc()
    view, built = turn.view, turn.request
    applied = view.diagnostics.applied_compact_boundary_id
    session = snapshot.session
    now = history_state(session.revision - session.last_seq, messages, applied)
    unchanged = None if plan.previous is None else built.shared
    counted, next_turn = count_turn(messages, view, plan.ctx, turn.joined, turn.next_turn)
    report = context_report(
        counted,
        window=plan.window,
        policy=threshold_policy(plan.settings),
        ctx=plan.ctx,
        max_output_tokens=plan.max_output,
        request_tokens=request_tokens(asked.system, asked.tools),
        applied=applied,
    )
    ttl = plan.target.policy.ttl
    return _Built(built, _with_next_request(report, built, unchanged, plan.max_output, ttl), now, next_turn)


def _cache_key(settings: Settings, tenant_id: str, ask: ChatAsk) -> str | None:
    secret = settings.cache_key_secret
    if secret is None or not ask.cache.on:
        return None
    return prompt_cache_key(secret.get_secret_value().encode(), tenant_id, ask.session_id)


def _params_hash(ask: ChatAsk, model: str, asked: Asked) -> str:
    """Requests that differ in anything but the history build different payloads: one remembered prefix each."""
    given = (ask.provider, model, asked.system, asked.tools, asked.tool_switches, list(ask.mutations))
    key = repr((*given, ask.ctx, asked.settings, ask.cache, ask.max_output_tokens))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


async def _remember_prefix(
    database: Database,
    tenant_id: str,
    session_id: str,
    params: str,
    built: ChatRequest,
    now: HistoryState,
    *,
    added: bool,
) -> None:
    """Keeps this payload's stable prefix for the next request of the same parameters to compare with.
    ``added``: no row of these parameters was read, so this one is new and the session's oldest may go."""
    prefix = built.prefix
    assert prefix is not None
    written = prefix.written
    record = PromptPrefixRecord(
        prefix.units,
        prefix.digest,
        prefix.length,
        prefix.total_length,
        now.rewrites,
        now.boundary_id,
        now.pruned,
        *((None, None, None) if written is None else (written.units, written.digest, written.length)),
    )
    async with database.single_write() as connection:
        repository = PromptPrefixRepository(connection, tenant_id)
        await repository.put(session_id, params, record)
        if added:
            await repository.trim(session_id)


def _remembered_prefix(record: PromptPrefixRecord) -> PromptPrefix:
    """The prefix a previous request remembered, with how far it wrote the cache when it wrote past it."""
    units, digest, length = record.written_units, record.written_digest, record.written_length
    written = None if units is None or digest is None or length is None else CachedReach(units, digest, length)
    return PromptPrefix(record.units, record.digest, record.length, record.total_length, written)


def _with_next_request(
    report: ContextReport, built: ChatRequest, unchanged: int | None, max_output: int | None, cache_ttl: str | None
) -> ContextReport:
    """The report with what the request about to be sent shares with the previous one and will cost."""
    assert report.cache is not None and built.prefix is not None
    prompt = report.estimated_tokens
    total = built.prefix.total_length
    unchanged_tokens = None if unchanged is None else (round(prompt * unchanged / total) if total else 0)
    upcoming = next_request(
        bundled_catalog(),
        provider=built.provider,
        model=built.model,
        prompt_tokens=prompt,
        unchanged_tokens=unchanged_tokens,
        breakpoints=built.breakpoints,
        max_output_tokens=max_output,
        at=datetime.now(UTC),
        cache_ttl=cache_ttl,
    )
    return dataclasses.replace(report, cache=dataclasses.replace(report.cache, next_request=upcoming))
