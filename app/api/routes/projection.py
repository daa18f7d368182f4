"""``GET /sessions/{id}/projection?view=...``: one view of a session, with an ETag that costs one row read."""

import hashlib
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Header, Query, Request, Response

from app.api.bodies import diagnostics_body, projected_bodies
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.markdown_export import markdown_response
from app.api.paging import Walk, page_limit, read_walk
from app.api.responses import json_answer
from app.api.schemas import PathId, ProjectionOut, ProjectionQuery
from app.projections.types import View
from app.services.heavy_work import content_weight
from app.services.messages import response_budget
from app.services.projections import NotModified, SessionView, ViewRequest, later_pages, view_session
from app.settings import Settings

router = APIRouter(tags=["projections"])


def parameters_digest(query: ProjectionQuery) -> str:
    parameters = orjson.dumps(query.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(parameters).hexdigest()[:16]


def cache_headers(etag: str) -> dict[str, str]:
    return {"ETag": etag, "Cache-Control": "private, no-cache", "Vary": "Authorization"}


@router.get(
    "/sessions/{session_id}/projection",
    response_model=ProjectionOut,
    responses={304: {"description": "The view has not changed since the given ETag."}},
)
async def get_projection(
    session_id: PathId,
    query: Annotated[ProjectionQuery, Query()],
    request: Request,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    query = query.model_copy(update={"redact": query.redact or principal.redacts_exports})
    walk = read_walk(session_id, query.after, query.before, query.order)
    asked = ViewRequest(
        session_id=session_id,
        view=query.view,
        ctx=query.to_context(),
        parameters_digest=parameters_digest(query),
        limit=page_size(query, settings),
        budget=response_budget(settings),
        timeout_seconds=settings.view_timeout_seconds,
        after_seq=walk.after_seq,
        before_seq=walk.before_seq,
        backwards=walk.backwards,
    )
    answer = await view_session(database, principal.tenant_id, asked, if_none_match=if_none_match)
    if isinstance(answer, NotModified):
        return Response(status_code=304, headers=cache_headers(answer.etag))
    if is_markdown(query):
        rest = later_pages(database, principal.tenant_id, asked, answer) if query.limit is None else None
        return markdown_response(answer, walk, request, cache_headers(answer.etag), rest, redact=query.redact)
    return view_response(query, answer, walk)


def is_markdown(query: ProjectionQuery) -> bool:
    return query.view is View.EXPORT and query.format == "markdown"


def page_size(query: ProjectionQuery, settings: Settings) -> int:
    """A streamed Markdown export reads the largest pages; any other view the page asked for."""
    return settings.max_page_size if is_markdown(query) and query.limit is None else page_limit(query.limit, settings)


def view_response(query: ProjectionQuery, answer: SessionView, walk: Walk) -> Response:
    """The view as JSON; a large one is written in pieces from a worker thread."""
    projected = answer.projection.messages
    rest: dict[str, Any] = {"diagnostics": diagnostics_body(answer.projection.diagnostics)}
    if answer.has_more is not None:
        rest |= {"nextCursor": walk.next_cursor(answer.seqs), "hasMore": answer.has_more}
    head = {"view": str(query.view), "sessionId": walk.session_id}
    weight = content_weight(message.content for message in projected)
    headers = cache_headers(answer.etag)
    return json_answer(head, "messages", projected_bodies(projected), rest, weight=weight, headers=headers)
