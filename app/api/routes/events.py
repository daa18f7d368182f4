"""``GET /sessions/{id}/events``: a session followed live, as Server-Sent Events.

``event: message`` carries each appended message (``id:`` its seq, data the body the message listing gives);
``amended`` a message whose metadata changed (the message as it now is); ``compaction`` and ``prune`` what
they did; ``resync`` that changes may have been missed (the stream fell behind, or the service's notice
connection was re-established), so metadata shown should be read again; ``deleted`` that the session is gone,
which ends the stream. Only message events carry an id, so ``Last-Event-ID`` (which browsers resend when they
reconnect) is always the last seq received.
"""

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Header, Query, Request
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app import lossless_json
from app.api.bodies import message_body
from app.api.cursors import read_message_cursor
from app.api.dependencies import DatabaseDep, PrincipalDep, SettingsDep
from app.api.schemas import PathId
from app.api.streaming import ClosingStreamingResponse
from app.errors import BadRequest
from app.services.events import (
    Idle,
    LiveEvent,
    MessageAmended,
    MessageAppended,
    Resynced,
    SessionChanged,
    StreamOptions,
    follow_session,
)
from app.services.messages import response_budget
from app.store.events import NoticeKind
from app.store.storable import INT64

log = logging.getLogger("projector.events")
router = APIRouter(tags=["events"])

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""No caching, and no buffering by a proxy in front (nginx honours the second)."""
RETRY_MILLISECONDS = 2000
STREAM_SCHEMA = {"type": "string"}
STREAM_DESCRIPTION = (
    "text/event-stream. `event: message` (id: the seq; data: the message as the listing gives it), "
    "`event: amended` (data: the message with its new metadata), `event: compaction` (data: sessionId, "
    "boundaryId, summaryId, boundarySeq, summarySeq), `event: prune` (data: sessionId, count, compactedAt), "
    "`event: resync` (data: sessionId, reason: changes may have been missed; read again what you show), "
    "`event: deleted` (data: sessionId; the session is gone and the stream ends), "
    "and a `: heartbeat` comment when idle."
)


@router.get(
    "/sessions/{session_id}/events",
    response_class=ClosingStreamingResponse,
    responses={
        200: {"description": STREAM_DESCRIPTION, "content": {"text/event-stream": {"schema": {"type": "string"}}}}
    },
)
async def follow(
    session_id: PathId,
    request: Request,
    database: DatabaseDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    after: Annotated[
        str | None, Query(description="Start after this seq, or after a message listing cursor; default: now.")
    ] = None,
    last_event_id: Annotated[str | None, Header(description="The last seq received; wins over `after`.")] = None,
) -> ClosingStreamingResponse:
    """The session's changes as they commit, from any process; reconnect with ``Last-Event-ID`` to resume."""
    options = StreamOptions(settings.default_page_size, response_budget(settings), settings.events_heartbeat_seconds)
    hub = request.app.state.events
    after_seq = resume_seq(session_id, last_event_id, after)
    events = await follow_session(database, hub, principal.tenant_id, session_id, after_seq=after_seq, options=options)
    return ClosingStreamingResponse(
        server_sent(events, session_id),
        media_type="text/event-stream",
        headers=STREAM_HEADERS,
        # However the answer ends: read, left mid-send (which leaves the body suspended), or refused unread.
        also_closes=events.aclose,
    )


def resume_seq(session_id: str, last_event_id: str | None, after: str | None) -> int | None:
    if last_event_id is not None:
        seq = _seq(last_event_id)
        if seq is None:
            raise BadRequest("Last-Event-ID: the seq of the last message event received", field="Last-Event-ID")
        return seq
    if after is None:
        return None
    if after.isascii() and after.isdigit():
        seq = _seq(after)
        if seq is None:
            raise BadRequest("after: a seq, or a cursor from the message listing", field="after")
        return seq
    return read_message_cursor(after, session_id, "after")


def _seq(text: str) -> int | None:
    """A seq as decimal digits, or None: a seq is a ``bigint`` (and past 4,300 digits Python refuses to read
    the number at all)."""
    if not text.isascii() or not text.isdigit():
        return None
    try:
        seq = int(text)
    except ValueError:
        return None
    return seq if seq in INT64 else None


async def server_sent(events: AsyncIterator[LiveEvent], session_id: str) -> AsyncIterator[bytes]:
    """The frames; a database failure mid-stream ends the stream (the client resumes where it stopped),
    since the status line is long gone and a problem+json answer is no longer possible."""
    yield f"retry: {RETRY_MILLISECONDS}\n\n".encode()
    try:
        async for event in events:
            yield frame(event, session_id)
    except (DBAPIError, PoolTimeout, asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
        log.warning("an event stream ended on a database error", extra={"error": type(error).__name__})


def frame(event: LiveEvent, session_id: str) -> bytes:
    match event:
        case MessageAppended(message):
            return _event("message", message_body(message), event_id=message.seq)
        case MessageAmended(message):
            return _event("amended", message_body(message))
        case SessionChanged(NoticeKind.COMPACTION, first_seq, last_seq, details):
            body = {"sessionId": session_id, **details, "boundarySeq": first_seq, "summarySeq": last_seq}
            return _event("compaction", body)
        case SessionChanged(kind, _, _, details):
            return _event(str(kind), {"sessionId": session_id, **details})
        case Resynced(reason):
            return _event("resync", {"sessionId": session_id, "reason": reason})
        case Idle():
            return b": heartbeat\n\n"


def _event(name: str, data: dict[str, Any], *, event_id: int | None = None) -> bytes:
    head = f"event: {name}\n" + (f"id: {event_id}\n" if event_id is not None else "")
    # lossless_json: a message holding an unpaired surrogate, which orjson refuses, is written escaped.
    return head.encode() + b"data: " + lossless_json.dumps(data) + b"\n\n"
