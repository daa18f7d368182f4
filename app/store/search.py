"""``SearchRepository``: full-text search over a tenant's messages, ranked, with highlighted snippets.

Every message carries its searchable text (worked out from its parts at write time) and a ``tsvector`` of it
under a GIN index, so a search is an index lookup: the query's words find the matching rows in the index,
only those are ranked (``ts_rank_cd``, which rewards the words standing close together), and snippets are
cut (``ts_headline``, which re-reads the text) for the one page answered, never for every match.

Pages are walked by key: (rank descending, session id, seq), so the next page starts after the last hit
whatever was appended meanwhile. Every query is scoped by tenant.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy.ext.asyncio import AsyncConnection

from app.engine.search_text import MessageFacts, as_written, searchable
from app.store.escaped_text import unescape_strings
from app.store.replicas import driver

HIGHLIGHT_START = "\ue000"
HIGHLIGHT_STOP = "\ue001"
"""Private-use characters around each highlighted word: the wire layer turns them into ``<mark>`` after
escaping the text, so stored text can never pass for markup."""
_HEADLINE_OPTIONS = f"StartSel={HIGHLIGHT_START}, StopSel={HIGHLIGHT_STOP}, MaxWords=30, MinWords=12"
"""Up to 30 words around the best-matching stretch of the text (fragments would cut it shorter)."""

_QUERY = "websearch_to_tsquery($2::regconfig, $3)"
"""The caller's words in web-search syntax ("quoted phrase", or, -word), which never fails to parse."""


def search_columns(facts: MessageFacts, config: str) -> dict[str, Any]:
    """The search and analytics columns of a message about to be inserted."""
    return {
        "search_config": config,
        "search_text": facts.search_text,
        "tool_calls": list(facts.tool_calls),
        "tool_results": list(facts.tool_results),
        "tool_errors": list(facts.tool_errors),
    }


class SearchHit(NamedTuple):
    session_id: str
    session_title: str | None
    message_id: str
    seq: int
    role: str
    kind: str
    created_at: datetime
    rank: float
    snippet: str
    """The matching text around the hits, each hit between ``HIGHLIGHT_START`` and ``HIGHLIGHT_STOP``."""


@dataclass(frozen=True, slots=True)
class SearchFilter:
    query: str
    config: str
    session_id: str | None = None
    role: str | None = None
    kind: str | None = None
    tool: str | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None


@dataclass(frozen=True, slots=True)
class SearchKey:
    """Where a page of hits ends: the next page starts after it."""

    rank: float
    session_id: str
    seq: int


class SearchRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    async def search(self, given: SearchFilter, *, limit: int, after: SearchKey | None) -> tuple[list[SearchHit], bool]:
        """The ``limit`` best hits after ``after``, best first, and whether more follow."""
        parameters: list[Any] = [self._tenant, given.config, searchable(given.query)]

        def bind(value: Any) -> str:
            parameters.append(value)
            return f"${len(parameters)}"

        conditions = ["m.tenant_id = $1", f"m.search_vector @@ {_QUERY}"]
        if given.session_id is not None:
            conditions.append(f"m.session_id = {bind(given.session_id)}")
        if given.role is not None:
            conditions.append(f"m.role = {bind(given.role)}")
        if given.kind is not None:
            conditions.append(f"m.kind = {bind(given.kind)}")
        if given.tool is not None:
            tool = bind(given.tool)
            conditions.append(f"({tool} = ANY(m.tool_calls) OR {tool} = ANY(m.tool_results))")
        if given.created_from is not None:
            conditions.append(f"m.created_at >= {bind(given.created_from)}")
        if given.created_to is not None:
            conditions.append(f"m.created_at < {bind(given.created_to)}")
        keyset = "TRUE"
        if after is not None:
            rank, session, seq = bind(after.rank), bind(after.session_id), bind(after.seq)
            keyset = f"(rank < {rank} OR (rank = {rank} AND (session_id, seq) > ({session}, {seq})))"
        sql = (
            "SELECT hit.session_id, s.title, m.id, hit.seq, m.role, m.kind, m.created_at, hit.rank, "  # noqa: S608
            f"ts_headline($2::regconfig, m.search_text, {_QUERY}, {bind(_HEADLINE_OPTIONS)}) "
            "FROM (SELECT session_id, seq, rank FROM ("
            f"SELECT m.session_id, m.seq, ts_rank_cd(m.search_vector, {_QUERY}) AS rank FROM messages m "
            f"WHERE {' AND '.join(conditions)}) ranked "
            f"WHERE {keyset} ORDER BY rank DESC, session_id, seq LIMIT {bind(limit + 1)}) hit "
            "JOIN messages m ON m.tenant_id = $1 AND m.session_id = hit.session_id AND m.seq = hit.seq "
            "JOIN sessions s ON s.tenant_id = $1 AND s.id = hit.session_id "
            "ORDER BY hit.rank DESC, hit.session_id, hit.seq"
        )
        rows = await (await driver(self._db)).fetch(sql, *parameters)
        # A title holding a NUL or an unpaired surrogate is stored escaped; every read of a session unescapes it.
        hits = [SearchHit._make((row[0], unescape_strings(row[1]), *row[2:-1], as_written(row[-1]))) for row in rows]
        return hits[:limit], len(hits) > limit
