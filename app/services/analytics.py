"""Analytics: what a session, or a tenant over a time range, did and cost, overall and per model.

The counts come from SQL aggregates (``AnalyticsRepository``), read in one snapshot. Cost is the context
layer's: each answer that records usage is priced on its own by the bundled model catalog (a long prompt's
tier and the price of its day are per answer, so sums of tokens cannot be priced), then added up per model and
per session; a total with an answer the catalog cannot price has no cost (``None``), never a guess.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from app.context.catalog import bundled_catalog
from app.context.cost import CostTotal, ResponseCost, session_cost, total_cost, usage_record
from app.errors import NotFound
from app.store.analytics import (
    AnalyticsRepository,
    AnalyticsScope,
    KindCount,
    SessionSummary,
    TokenSums,
    ToolCount,
    TurnTimes,
    Upkeep,
    UsageRow,
)
from app.store.database import Database
from app.store.sessions import SessionRepository


@dataclass(slots=True)
class Figures:
    """What one scope, or one model within it, did."""

    messages_by_kind: dict[str, int] = field(default_factory=dict)
    tool_calls: list[ToolCount] = field(default_factory=list)
    tokens: TokenSums | None = None
    turns: TurnTimes | None = None
    cost: CostTotal = field(default_factory=lambda: total_cost(()))


@dataclass(frozen=True, slots=True)
class Analytics:
    upkeep: Upkeep
    overall: Figures
    models: dict[str | None, Figures]
    """By ``provider/model`` (None: messages before any answer, or answers that name no model)."""
    catalog_version: str


@dataclass(frozen=True, slots=True)
class SessionLine:
    summary: SessionSummary
    cost: CostTotal


@dataclass(frozen=True, slots=True)
class TenantAnalytics:
    analytics: Analytics
    sessions: list[SessionLine]
    has_more: bool


async def session_analytics(database: Database, tenant_id: str, session_id: str) -> Analytics:
    async with database.reading() as connection:
        if await SessionRepository(connection, tenant_id).get(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        analytics, _ = await _gather(AnalyticsRepository(connection, tenant_id), AnalyticsScope(session_id=session_id))
    return analytics


async def tenant_analytics(
    database: Database,
    tenant_id: str,
    scope: AnalyticsScope,
    *,
    limit: int,
    after: tuple[datetime, str] | None,
) -> TenantAnalytics:
    """The totals over the whole range, and a page of its sessions, most recently active first."""
    async with database.reading() as connection:
        repository = AnalyticsRepository(connection, tenant_id)
        analytics, responses = await _gather(repository, scope)
        summaries, has_more = await repository.session_summaries(scope, limit=limit, after=after)
    by_session: defaultdict[str, list[ResponseCost]] = defaultdict(list)
    for session_id, response in responses:
        by_session[session_id].append(response)
    lines = [SessionLine(summary, total_cost(by_session.get(summary.session_id, []))) for summary in summaries]
    return TenantAnalytics(analytics, lines, has_more)


async def _gather(
    repository: AnalyticsRepository, scope: AnalyticsScope
) -> tuple[Analytics, list[tuple[str, ResponseCost]]]:
    upkeep = await repository.upkeep(scope)
    overall = Figures()
    models: defaultdict[str | None, Figures] = defaultdict(Figures)
    for kinds in await repository.kind_counts(scope):
        _figures(kinds, overall, models).messages_by_kind[kinds.kind] = kinds.messages
    for tools in await repository.tool_counts(scope):
        _figures(tools, overall, models).tool_calls.append(tools)
    for tokens in await repository.token_sums(scope):
        _figures(tokens, overall, models).tokens = tokens
    for turns in await repository.turn_times(scope):
        _figures(turns, overall, models).turns = turns
    responses, catalog_version = _priced(await repository.usage_rows(scope))
    by_model: defaultdict[str | None, list[ResponseCost]] = defaultdict(list)
    for row, response in responses:
        by_model[row.model_key].append(response)
    overall.cost = total_cost([response for _, response in responses])
    for model, priced in by_model.items():
        models[model].cost = total_cost(priced)
    return Analytics(upkeep, overall, dict(models), catalog_version), [
        (row.session_id, response) for row, response in responses
    ]


def _figures(
    row: KindCount | ToolCount | TokenSums | TurnTimes, overall: Figures, models: defaultdict[str | None, Figures]
) -> Figures:
    return models[row.model] if row.per_model else overall


def _priced(rows: list[UsageRow]) -> tuple[list[tuple[UsageRow, ResponseCost]], str]:
    """Each answer that counts some tokens priced on its own, paired with its row."""
    records = []
    counted = []
    for row in rows:
        run_models = {row.run_id: row.run_model} if row.run_id and row.run_model else {}
        record = usage_record(row.message_id, row.run_id, row.created_at, row.metadata, run_models)
        if record is not None:
            records.append(record)
            counted.append(row)
    priced = session_cost(records, bundled_catalog())
    return list(zip(counted, priced.responses, strict=True)), priced.catalog_version
