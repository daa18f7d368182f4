"""``AnalyticsRepository``: what a session, or a tenant over a time range, did, counted in SQL.

Every figure is an aggregate over the messages table (grouping sets give the totals and the per-model rows in
one statement); no query returns a row per message except the usage rows that pricing needs, one per
answer that records usage. Tool calls and failed results are read from the columns filled at write time,
never from the content.

An assistant message's model is ``provider/model`` from its metadata (or the model alone), else its run's
model. A message that is not an assistant's is counted under the model that answered last before it in
its session (a tool result under the model that called the tool), and a turn (a user message and what
follows up to the next) under the model that answered it first.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import asyncpg
from sqlalchemy.ext.asyncio import AsyncConnection

from app.engine.kinds import Kind
from app.store.escaped_text import unescape_strings
from app.store.replicas import driver


@dataclass(frozen=True, slots=True)
class AnalyticsScope:
    """One session, or every session of the tenant with the messages written in [created_from, created_to)."""

    session_id: str | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None


class KindCount(NamedTuple):
    per_model: bool
    model: str | None
    kind: str
    messages: int


class ToolCount(NamedTuple):
    per_model: bool
    model: str | None
    tool: str
    calls: int
    errors: int


class TokenSums(NamedTuple):
    per_model: bool
    model: str | None
    responses: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


class TurnTimes(NamedTuple):
    per_model: bool
    model: str | None
    turns: int
    answered: int
    mean_seconds: float | None
    p50_seconds: float | None
    p95_seconds: float | None
    max_seconds: float | None


class Upkeep(NamedTuple):
    sessions: int
    messages: int
    compactions: int
    pruned_results: int
    prune_passes: int


class UsageRow(NamedTuple):
    session_id: str
    message_id: str
    run_id: str | None
    created_at: datetime
    model_key: str | None
    metadata: dict[str, Any]
    """Only what pricing reads: usage, provider, model, synthetic."""
    run_model: object
    """The run's model reference as stored (``provider/modelId``, a bare id or opencode's object)."""


class SessionSummary(NamedTuple):
    session_id: str
    title: str | None
    last_message_at: datetime
    messages: int
    turns: int
    tool_calls: int
    tool_errors: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


MAX_TOKEN_SUM = 2**53 - 1
"""Where a sum of usage counts stops growing: the largest integer a JSON reader in JavaScript holds exactly.
Usage is what a runtime wrote (``1e30`` is valid JSON), so a sum must neither overflow ``bigint`` nor, added
to the others into a total, leave the range a JSON encoder writes."""


def _token(key: str) -> str:
    """A stored usage count as a number: what is not a non-negative number counts nothing."""
    value = f"m.metadata->'usage'->'{key}'"
    return f"CASE WHEN jsonb_typeof({value}) = 'number' THEN GREATEST(({value})::numeric, 0) ELSE 0 END"


def _token_sum(key: str, only: str = "") -> str:
    """The sum of a usage count, saturating at ``MAX_TOKEN_SUM``."""
    return f"LEAST(COALESCE(sum({key}){only}, 0), {MAX_TOKEN_SUM})::bigint"


_USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
_BILLED = "m.role = 'assistant' AND m.metadata ? 'usage' AND m.metadata->'synthetic' IS DISTINCT FROM 'true'::jsonb"
_TOKEN_COLUMNS = ", ".join(f"{_token(key)} AS {key}" for key in _USAGE_KEYS)
_SUMS = ", ".join(_token_sum(key) for key in _USAGE_KEYS)


def _reference(value: str) -> str:
    """A stored model reference (jsonb) as ``provider/modelId`` text: a string as it is, opencode's object
    ``{providerID, modelID}`` joined with a slash, anything else NULL."""
    return (
        f"CASE jsonb_typeof({value}) WHEN 'string' THEN NULLIF({value} #>> '{{}}', '') "
        f"WHEN 'object' THEN NULLIF(COALESCE(NULLIF({value}->>'providerID', '') || '/', '') "
        f"|| COALESCE({value}->>'modelID', ''), '') END"
    )


_OWN_REFERENCE = _reference("m.metadata->'model'")
_RUN_REFERENCE = _reference("r.model")
_OWN_MODEL = (
    "CASE WHEN m.role = 'assistant' THEN COALESCE("
    "CASE WHEN jsonb_typeof(m.metadata->'model') = 'string' AND m.metadata->>'model' <> '' THEN "
    "COALESCE(NULLIF(m.metadata->>'provider', '') || '/', '') || (m.metadata->>'model') ELSE "
    f"{_OWN_REFERENCE} END, {_RUN_REFERENCE}) END"
)


class AnalyticsRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    def _scoped(self, scope: AnalyticsScope, parameters: list[Any]) -> str:
        """The scope's messages with their own model, the model acting for them and their usage counts."""
        conditions = ["m.tenant_id = $1"]

        def bind(value: Any) -> str:
            parameters.append(value)
            return f"${len(parameters)}"

        if scope.session_id is not None:
            conditions.append(f"m.session_id = {bind(scope.session_id)}")
        if scope.created_from is not None:
            conditions.append(f"m.created_at >= {bind(scope.created_from)}")
        if scope.created_to is not None:
            conditions.append(f"m.created_at < {bind(scope.created_to)}")
        return (
            "WITH own AS ("  # noqa: S608
            f"SELECT m.session_id, m.seq, m.id, m.run_id, m.role, m.kind, m.created_at, m.metadata, "
            f"m.tool_calls, m.tool_errors, r.model AS run_model, {_OWN_MODEL} AS model, "
            f"({_BILLED}) AS billed, {_TOKEN_COLUMNS} "
            "FROM messages m LEFT JOIN runs r "
            "ON r.tenant_id = m.tenant_id AND r.session_id = m.session_id AND r.id = m.run_id "
            f"WHERE {' AND '.join(conditions)}), "
            "numbered AS (SELECT own.*, count(model) OVER (PARTITION BY session_id ORDER BY seq) AS answer_group, "
            f"count(*) FILTER (WHERE kind = '{Kind.USER_INPUT}') OVER (PARTITION BY session_id ORDER BY seq) "
            "AS turn FROM own), "
            "scoped AS (SELECT numbered.*, first_value(model) OVER "
            "(PARTITION BY session_id, answer_group ORDER BY seq) AS acting_model FROM numbered) "
        )

    async def _fetch(self, sql: str, parameters: list[Any]) -> list[asyncpg.Record]:
        return await (await driver(self._db)).fetch(sql, *parameters)

    async def kind_counts(self, scope: AnalyticsScope) -> list[KindCount]:
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters) + (  # noqa: S608
            "SELECT GROUPING(acting_model) = 0, acting_model, kind, count(*) FROM scoped "
            "GROUP BY GROUPING SETS ((kind), (acting_model, kind)) ORDER BY 3"
        )
        return [KindCount._make(row) for row in await self._fetch(sql, parameters)]

    async def tool_counts(self, scope: AnalyticsScope) -> list[ToolCount]:
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters) + (  # noqa: S608
            "SELECT GROUPING(acting_model) = 0, acting_model, tool, sum(calls)::bigint, sum(errors)::bigint FROM ("
            "SELECT acting_model, unnest(tool_calls) AS tool, 1 AS calls, 0 AS errors FROM scoped UNION ALL "
            "SELECT acting_model, unnest(tool_errors), 0, 1 FROM scoped) tools "
            "GROUP BY GROUPING SETS ((tool), (acting_model, tool)) ORDER BY 4 DESC, 3"
        )
        return [ToolCount._make(row) for row in await self._fetch(sql, parameters)]

    async def token_sums(self, scope: AnalyticsScope) -> list[TokenSums]:
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters) + (  # noqa: S608
            f"SELECT GROUPING(model) = 0, model, count(*), {_SUMS} FROM scoped WHERE billed "  # noqa: S608
            "GROUP BY GROUPING SETS ((), (model))"
        )
        return [TokenSums._make(row) for row in await self._fetch(sql, parameters)]

    async def turn_times(self, scope: AnalyticsScope) -> list[TurnTimes]:
        """Per turn, the seconds from the user's message to the first assistant message after it."""
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters) + (  # noqa: S608
            ", turns AS (SELECT session_id, turn, "  # noqa: S608
            f"min(created_at) FILTER (WHERE kind = '{Kind.USER_INPUT}') AS asked, "
            "min(created_at) FILTER (WHERE role = 'assistant') AS answered, "
            "(array_agg(model ORDER BY seq) FILTER (WHERE role = 'assistant'))[1] AS model "
            "FROM scoped WHERE turn > 0 GROUP BY session_id, turn), "
            # A time stored as -infinity or infinity (the driver's spelling of Python's first and last instants,
            # refused on write since) is no wait to measure, nor is an answer the client dated before its
            # question (times are the writer's, and an imported or clock-skewed one may run backwards).
            "waits AS (SELECT model, answered, CASE WHEN isfinite(asked) AND isfinite(answered) "
            "AND answered >= asked "
            "THEN extract(epoch FROM answered - asked)::float8 END AS seconds FROM turns) "
            "SELECT GROUPING(model) = 0, model, count(*), count(answered), avg(seconds), "
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds), "
            "percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds), max(seconds) "
            "FROM waits GROUP BY GROUPING SETS ((), (model))"
        )
        return [TurnTimes._make(row) for row in await self._fetch(sql, parameters)]

    async def upkeep(self, scope: AnalyticsScope) -> Upkeep:
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters) + (  # noqa: S608
            "SELECT count(DISTINCT session_id), count(*), "  # noqa: S608
            f"count(*) FILTER (WHERE kind = '{Kind.COMPACT_BOUNDARY}'), "
            f"count(*) FILTER (WHERE kind = '{Kind.TOOL_RESULT}' AND metadata ? 'compactedAt'), "
            f"count(DISTINCT metadata->>'compactedAt') FILTER (WHERE kind = '{Kind.TOOL_RESULT}') FROM scoped"
        )
        rows = await self._fetch(sql, parameters)
        return Upkeep._make(rows[0])

    async def usage_rows(self, scope: AnalyticsScope) -> list[UsageRow]:
        """One row per answer that records usage (what pricing needs, nothing more), oldest first."""
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters) + (  # noqa: S608
            "SELECT session_id, id, run_id, created_at, model, jsonb_build_object('usage', metadata->'usage', "
            "'provider', metadata->'provider', 'model', metadata->'model', 'synthetic', metadata->'synthetic'), "
            "run_model FROM scoped WHERE billed ORDER BY created_at, session_id, seq"
        )
        return [UsageRow._make(row) for row in await self._fetch(sql, parameters)]

    async def session_summaries(
        self, scope: AnalyticsScope, *, limit: int, after: tuple[datetime, str] | None
    ) -> tuple[list[SessionSummary], bool]:
        """The sessions active in the scope, most recently active first, a page at a time."""
        parameters: list[Any] = [self._tenant]
        sql = self._scoped(scope, parameters)
        having = ""
        if after is not None:
            parameters.extend(after)
            having = (
                f"HAVING (max(scoped.created_at), scoped.session_id) < (${len(parameters) - 1}, ${len(parameters)}) "
            )
        parameters.append(limit + 1)
        sql += (
            "SELECT scoped.session_id, s.title, max(scoped.created_at), count(*), "  # noqa: S608
            f"count(*) FILTER (WHERE kind = '{Kind.USER_INPUT}'), "
            "COALESCE(sum(cardinality(tool_calls)), 0)::bigint, COALESCE(sum(cardinality(tool_errors)), 0)::bigint, "
            + ", ".join(_token_sum(key, " FILTER (WHERE billed)") for key in _USAGE_KEYS)
            + " FROM scoped JOIN sessions s ON s.tenant_id = $1 AND s.id = scoped.session_id "
            f"GROUP BY scoped.session_id, s.title {having}"
            f"ORDER BY max(scoped.created_at) DESC, scoped.session_id DESC LIMIT ${len(parameters)}"
        )
        # A title holding a NUL or an unpaired surrogate is stored escaped; every read of a session unescapes it.
        rows = [
            SessionSummary._make((row[0], unescape_strings(row[1]), *row[2:]))
            for row in await self._fetch(sql, parameters)
        ]
        return rows[:limit], len(rows) > limit
