"""One view of a session, with a version tag (ETag) that costs one row read to check.

The model and compact views read only the live history (``MessageRepository.live_history``); the
transcript, debug and export views page like the message list, so no answer loads a long session whole. A
debug page also reads the live history, in the same snapshot: what the model sees of a page's messages
depends on the whole window (the applied compaction, a call on an earlier page), never on the page alone.
"""

import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from app.context.catalog import bundled_catalog, with_readable_media
from app.engine.message import EngineMessage
from app.engine.promotion import promote_all
from app.errors import NotFound
from app.projections.live_history import FIRST_SEQ
from app.projections.projector import project
from app.projections.types import PROJECTOR_VERSION, Projection, ProjectionContext, View
from app.services.heavy_work import content_weight, run_weighed, run_within
from app.store.database import Database
from app.store.messages import MessageRepository, PageBudget, to_persisted
from app.store.records import SessionRecord
from app.store.runs import RunRepository
from app.store.sessions import SessionRepository

WINDOWED_VIEWS = frozenset({View.MODEL, View.COMPACT})
PRODUCER_VIEWS = frozenset({View.MODEL, View.COMPACT, View.DEBUG})
"""Views whose rules ask which model wrote a message, and so need each run's model."""


@dataclass(frozen=True, slots=True)
class ViewRequest:
    session_id: str
    view: View
    ctx: ProjectionContext
    parameters_digest: str
    """Changes with any parameter of the request: part of the ETag."""
    limit: int
    budget: PageBudget
    """What one page may hold besides its count (the paged views)."""
    timeout_seconds: float
    """How long building the view may take."""
    after_seq: int | None = None
    before_seq: int | None = None
    backwards: bool = False


@dataclass(frozen=True, slots=True)
class NotModified:
    etag: str


@dataclass(frozen=True, slots=True)
class SessionView:
    etag: str
    session: SessionRecord
    projection: Projection
    seqs: list[int]
    """The seqs of the messages read, for the paged views' next cursor."""
    has_more: bool | None
    """For the paged views, whether more lie beyond the page; None for the windowed views."""


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def view_etag(tenant_id: str, session_id: str, session: SessionRecord, parameters_digest: str) -> str:
    """Changes exactly when the view could: a new message (last seq), an amendment (revision), other
    parameters, a new projector version, another model catalog (it says which media a model reads), or a
    session deleted and created again under the same id (its creation time). The session goes in as a digest
    of its tenant and id: ids are per tenant, so two tenants' sessions of one id, created in the same
    microsecond and written alike, would otherwise share a tag, and one tenant's tag would revalidate the
    other's view; and an id is any printable text, while a header carries Latin-1 only and an ETag no ``"``."""
    created = (session.created_at - EPOCH) // MICROSECOND
    version = f"{session_digest(tenant_id, session_id)}:{created}:{session.last_seq}:{session.revision}"
    catalog = hashlib.sha256(bundled_catalog().version.encode()).hexdigest()[:8]
    return f'W/"p:{version}:{parameters_digest}:{PROJECTOR_VERSION}:{catalog}"'


def session_digest(tenant_id: str, session_id: str) -> str:
    digest = hashlib.sha256()
    for name in (tenant_id, session_id):
        # Length-prefixed, so no two (tenant, id) pairs run together into the same bytes.
        encoded = name.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()[:16]


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """``If-None-Match`` semantics: any listed tag, weak or strong, or ``*``."""
    if not if_none_match:
        return False
    weak = etag.removeprefix("W/")
    return any(tag.strip() == "*" or tag.strip().removeprefix("W/") == weak for tag in if_none_match.split(","))


async def view_session(
    database: Database, tenant_id: str, asked: ViewRequest, *, if_none_match: str | None
) -> NotModified | SessionView:
    if if_none_match:
        # Revalidation first, on one autocommit read: an unchanged view costs a session-row lookup.
        async with database.single_read() as connection:
            current = await SessionRepository(connection, tenant_id).get(asked.session_id)
        if current is not None:
            known = view_etag(tenant_id, asked.session_id, current, asked.parameters_digest)
            if etag_matches(if_none_match, known):
                return NotModified(known)
    # One snapshot for the ETag and the rows: the body always is the version the ETag names, and a full
    # answer costs one pooled connection, not two.
    async with database.reading() as connection:
        session = await SessionRepository(connection, tenant_id).get(asked.session_id)
        if session is None:
            raise NotFound(f"session '{asked.session_id}' does not exist")
        etag = view_etag(tenant_id, asked.session_id, session, asked.parameters_digest)
        if etag_matches(if_none_match, etag):
            return NotModified(etag)
        repository = MessageRepository(connection, tenant_id)
        messages, has_more = await _messages_for(repository, asked)
        window = await _model_input(repository, asked) if asked.view is View.DEBUG else None
        ctx = asked.ctx
        if asked.view in PRODUCER_VIEWS:
            ctx = with_readable_media(
                bundled_catalog(),
                replace(ctx, run_models=await RunRepository(connection, tenant_id).models(asked.session_id)),
            )
    # Building a view (redacting an export above all) is linear but can be seconds on a large page: it runs
    # in a worker thread within the view's time budget.
    weight = content_weight(message.content for message in [*messages, *(window or ())])
    projection = await run_within(asked.timeout_seconds, weight, project, asked.view, messages, ctx, window=window)
    return SessionView(etag, session, projection, [message.seq for message in messages], has_more)


async def _messages_for(repository: MessageRepository, asked: ViewRequest) -> tuple[list[EngineMessage], bool | None]:
    """The messages a view needs, promoted, and for paged views whether more lie beyond the page."""
    if asked.view in WINDOWED_VIEWS:
        return await _model_input(repository, asked), None
    rows, has_more = await repository.page(
        asked.session_id,
        limit=asked.limit,
        after_seq=asked.after_seq,
        before_seq=asked.before_seq,
        backwards=asked.backwards,
        budget=asked.budget,
    )
    return promote_all([to_persisted(row) for row in rows]), has_more


async def _model_input(repository: MessageRepository, asked: ViewRequest) -> list[EngineMessage]:
    """What the model view is given: the live history, or the whole session without the compaction."""
    if asked.ctx.apply_compact_boundary:
        return await repository.live_history(asked.session_id)
    return await repository.from_seq(asked.session_id, FIRST_SEQ)


async def later_pages(
    database: Database, tenant_id: str, asked: ViewRequest, first: SessionView
) -> AsyncIterator[Projection]:
    """The rest of the walk ``first`` began, page by page, up to the message that was the session's last when
    ``first`` was read: a document written page by page is the conversation its ETag names. Each page is its
    own short snapshot, so no connection is held while a slow client reads. Seqs have no gaps, so the end is
    known: a page that a replica does not hold yet (it answers nothing before the end) is read on the primary.
    A page is read only while the session is the one ``first`` read: once it is deleted (and perhaps created
    again under its id) ``NotFound`` cuts the document off unfinished, rather than ending it early as if whole
    or going on with another session's messages."""
    seqs, end = first.seqs, first.session.last_seq
    if not first.has_more:
        return
    created_at = first.session.created_at
    while seqs and (min(seqs) > FIRST_SEQ if asked.backwards else max(seqs) < end):
        after, before = (None, min(seqs)) if asked.backwards else (max(seqs), end + 1)
        messages = await _page(database, tenant_id, asked, after, before, created_at, on_primary=False)
        messages = messages or await _page(database, tenant_id, asked, after, before, created_at, on_primary=True)
        seqs = [message.seq for message in messages]
        weight = content_weight(message.content for message in messages)
        yield await run_weighed(weight, project, asked.view, messages, asked.ctx)


async def _page(
    database: Database,
    tenant_id: str,
    asked: ViewRequest,
    after: int | None,
    before: int | None,
    created_at: datetime,
    *,
    on_primary: bool,
) -> list[EngineMessage]:
    """The page, read in one snapshot with the session's creation time, which must be ``created_at``. Only
    the primary says the session is gone: a replica further behind than the one the first page came from (they
    are taken in turn) may not hold the session yet, and answers nothing, so the page is read on the primary."""
    async with database.reading(on_primary=on_primary) as connection:
        if await SessionRepository(connection, tenant_id).created_at(asked.session_id) != created_at:
            if not on_primary:
                return []
            raise NotFound(f"session '{asked.session_id}' was deleted while it was read")
        rows, _ = await MessageRepository(connection, tenant_id).page(
            asked.session_id,
            limit=asked.limit,
            after_seq=after,
            before_seq=before,
            backwards=asked.backwards,
            budget=asked.budget,
        )
    return promote_all([to_persisted(row) for row in rows])
