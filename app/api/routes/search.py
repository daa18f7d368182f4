"""``GET /search`` and ``GET /sessions/{id}/search``: full-text search over message text, tool inputs and
outputs, ranked, with highlighted snippets, a page at a time."""

import hashlib
import html
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Response
from pydantic import Field, ValidationInfo, field_validator

from app.api.cursors import read_search_cursor, search_cursor
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.paging import page_limit
from app.api.responses import OrjsonResponse
from app.api.schemas import PathId, QueryTime
from app.api.wire import WireModel
from app.engine.kinds import Kind, Role
from app.services.search import SearchPage, search_messages
from app.settings import Settings
from app.store.database import Database
from app.store.search import HIGHLIGHT_START, HIGHLIGHT_STOP, SearchFilter, SearchHit, SearchKey

router = APIRouter(tags=["search"])


NO_NUL = r"^[^\x00]*$"
"""Search text goes to PostgreSQL as a query parameter, and PostgreSQL text cannot hold a NUL."""


class SearchQuery(WireModel):
    q: str = Field(
        min_length=1,
        max_length=1000,
        pattern=NO_NUL,
        description='Words to find, in web-search syntax: all words by default, "a quoted phrase", or, -word.',
    )
    role: Role | None = None
    kind: str | None = Field(default=None, description="A message kind: user_input, tool_call, tool_result...")
    tool: str | None = Field(
        default=None, max_length=256, pattern=NO_NUL, description="Only messages calling or answering this tool."
    )
    from_: QueryTime | None = Field(default=None, alias="from", description="Written at or after this time.")
    to: QueryTime | None = Field(default=None, description="Written before this time.")
    limit: int | None = Field(default=None, ge=1)
    cursor: str | None = Field(default=None, description="The nextCursor of the previous page.")

    @field_validator("q")
    @classmethod
    def _has_words(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("give at least one word")
        return value

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str | None) -> str | None:
        if value is not None and value not in Kind.__members__.values():
            raise ValueError(f"one of {', '.join(sorted(Kind))}")
        return value

    @field_validator("to")
    @classmethod
    def _after_from(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        given_from = info.data.get("from_")
        if value is not None and given_from is not None and value <= given_from:
            raise ValueError("must be later than from")
        return value

    def to_filter(self, settings: Settings, session_id: str | None) -> SearchFilter:
        return SearchFilter(
            query=self.q,
            config=settings.search_config,
            session_id=session_id,
            role=self.role,
            kind=self.kind,
            tool=self.tool,
            created_from=self.from_,
            created_to=self.to,
        )

    def digest(self, session_id: str | None) -> str:
        """Names the query and its filters, so a cursor is only taken back for the search it came from."""
        asked = self.model_dump(mode="json", exclude={"limit", "cursor"})
        return hashlib.sha256(orjson.dumps([session_id, asked], option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


class SearchHitOut(WireModel):
    session_id: str
    session_title: str | None
    message_id: str
    seq: int
    role: Role
    kind: str
    created_at: datetime
    rank: float
    snippet: str = Field(description="HTML: the text around the hits, escaped, each hit in <mark>.")


class SearchPageOut(WireModel):
    hits: list[SearchHitOut]
    next_cursor: str | None
    has_more: bool


@router.get("/search", response_model=SearchPageOut)
async def search(
    query: Annotated[SearchQuery, Query()], database: DatabaseDep, principal: PrincipalDep, settings: SettingsDep
) -> Response:
    """Every session of the caller's tenant."""
    return await _answer(query, None, database, principal.tenant_id, settings)


@router.get("/sessions/{session_id}/search", response_model=SearchPageOut)
async def search_session(
    session_id: PathId,
    query: Annotated[SearchQuery, Query()],
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> Response:
    return await _answer(query, session_id, database, principal.tenant_id, settings)


async def _answer(
    query: SearchQuery, session_id: str | None, database: Database, tenant_id: str, settings: Settings
) -> Response:
    digest = query.digest(session_id)
    after = SearchKey(*read_search_cursor(query.cursor, digest)) if query.cursor else None
    page = await search_messages(
        database, tenant_id, query.to_filter(settings, session_id), limit=page_limit(query.limit, settings), after=after
    )
    return OrjsonResponse(search_body(page, query.cursor, digest))


def search_body(page: SearchPage, given_cursor: str | None, digest: str) -> dict[str, Any]:
    last = page.last_key()
    return {
        "hits": [hit_body(hit) for hit in page.hits],
        "nextCursor": search_cursor(last.rank, last.session_id, last.seq, digest) if last else given_cursor,
        "hasMore": page.has_more,
    }


def hit_body(hit: SearchHit) -> dict[str, Any]:
    return {
        "sessionId": hit.session_id,
        "sessionTitle": hit.session_title,
        "messageId": hit.message_id,
        "seq": hit.seq,
        "role": hit.role,
        "kind": hit.kind,
        "createdAt": hit.created_at,
        "rank": hit.rank,
        "snippet": snippet_html(hit.snippet),
    }


def snippet_html(snippet: str) -> str:
    """The stored text escaped, then the highlight marks made ``<mark>`` elements."""
    escaped = html.escape(snippet, quote=False)
    return escaped.replace(HIGHLIGHT_START, "<mark>").replace(HIGHLIGHT_STOP, "</mark>")
