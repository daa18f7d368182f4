"""``GET /sessions/{id}/projection?view=...``: one view of a session, with an ETag that costs one row read.

The model and compact views read only the compaction window (``MessageRepository.model_window``); the
transcript, debug and export views page like the message list, so no response loads a long session whole.
"""

import hashlib
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Header, Query, Response

from app.api.bodies import diagnostics_body, projected_bodies
from app.api.cycle_collector import cycle_collection_paused
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.paging import Walk, page_limit, read_walk
from app.api.responses import OrjsonResponse
from app.api.schemas import PathId, ProjectionOut, ProjectionQuery
from app.engine.message import EngineMessage
from app.engine.promotion import promote_all
from app.errors import NotFound
from app.projections.markdown import render_markdown
from app.projections.projector import project
from app.projections.types import PROJECTOR_VERSION, View
from app.projections.window import FIRST_SEQ
from app.store.messages import MessageRepository, to_persisted
from app.store.sessions import SessionRepository

router = APIRouter(tags=["projections"])

WINDOWED_VIEWS = frozenset({View.MODEL, View.COMPACT})


def projection_etag(session_id: PathId, session: dict[str, Any], query: ProjectionQuery) -> str:
    """Changes exactly when the view could: a new message (last seq), an amendment (revision), other
    parameters, or a new projector version."""
    parameters = orjson.dumps(query.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    digest = hashlib.sha256(parameters).hexdigest()[:16]
    return f'W/"p:{session_id}:{session["last_seq"]}:{session["revision"]}:{digest}:{PROJECTOR_VERSION}"'


def cache_headers(etag: str) -> dict[str, str]:
    return {"ETag": etag, "Cache-Control": "private, no-cache", "Vary": "Authorization"}


def matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    weak = etag.removeprefix("W/")
    return any(tag.strip() == "*" or tag.strip().removeprefix("W/") == weak for tag in if_none_match.split(","))


async def window_for(
    repository: MessageRepository, session_id: PathId, query: ProjectionQuery, walk: Walk, page_size: int
) -> tuple[list[EngineMessage], bool | None]:
    """The messages a view needs, promoted, and for paged views whether more lie beyond the page."""
    if query.view in WINDOWED_VIEWS:
        if query.apply_compact_boundary:
            return await repository.model_window(session_id), None
        return await repository.from_seq(session_id, FIRST_SEQ), None
    rows, has_more = await repository.page(
        session_id, limit=page_size, after_seq=walk.after_seq, before_seq=walk.before_seq, backwards=walk.backwards
    )
    return promote_all([to_persisted(row) for row in rows]), has_more


@router.get(
    "/sessions/{session_id}/projection",
    response_model=ProjectionOut,
    responses={304: {"description": "The view has not changed since the given ETag."}},
)
async def get_projection(
    session_id: PathId,
    query: Annotated[ProjectionQuery, Query()],
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    query = query.model_copy(update={"redact": query.redact or principal.redacts_exports})
    walk = read_walk(session_id, query.after, query.before, query.order)
    page_size = page_limit(query.limit, settings)
    if if_none_match:
        # Revalidation first, on one autocommit read: an unchanged view costs a session-row lookup.
        async with database.single_read() as connection:
            current = await SessionRepository(connection, principal.tenant_id).get(session_id)
        if current is not None:
            known = projection_etag(session_id, current, query)
            if matches(if_none_match, known):
                return Response(status_code=304, headers=cache_headers(known))
    # One snapshot for the ETag and the rows: the body always is the version the ETag names, and a full
    # answer costs one pooled connection, not two.
    async with database.reading() as connection:
        session = await SessionRepository(connection, principal.tenant_id).get(session_id)
        if session is None:
            raise NotFound(f"session '{session_id}' does not exist")
        etag = projection_etag(session_id, session, query)
        headers = cache_headers(etag)
        if matches(if_none_match, etag):
            return Response(status_code=304, headers=headers)
        repository = MessageRepository(connection, principal.tenant_id)
        messages, has_more = await window_for(repository, session_id, query, walk, page_size)
    # From here on nothing awaits: the build runs with the cycle collector paused (see its module), in a
    # function of its own so that everything it made but the response is freed before the collector resumes.
    with cycle_collection_paused():
        return projection_response(query, session_id, session, messages, has_more, walk, headers)


def projection_response(
    query: ProjectionQuery,
    session_id: str,
    session: dict[str, Any],
    messages: list[EngineMessage],
    has_more: bool | None,
    walk: Walk,
    headers: dict[str, str],
) -> Response:
    projection = project(query.view, messages, query.to_context())
    if query.view is View.EXPORT and query.format == "markdown":
        markdown = render_markdown(projection, title=session["title"])
        return Response(markdown, media_type="text/markdown; charset=utf-8", headers=headers)
    body: dict[str, Any] = {
        "view": str(query.view),
        "sessionId": session_id,
        "messages": projected_bodies(projection.messages),
        "diagnostics": diagnostics_body(projection.diagnostics),
    }
    if has_more is not None:
        body["nextCursor"] = walk.next_cursor([message.seq for message in messages])
        body["hasMore"] = has_more
    return OrjsonResponse(body, headers=headers)
