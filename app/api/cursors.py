"""Opaque cursors: base64url JSON that names the session it belongs to, so a cursor from another session
(or a forged one) is a clear 400 instead of a silently wrong page. The format can change behind ``v``."""

import base64
import binascii
from datetime import datetime
from typing import Any

import orjson

from app.errors import InvalidCursor
from app.store.storable import INT64

CURSOR_VERSION = 1


def _encode(payload: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"v": CURSOR_VERSION, **payload})).rstrip(b"=").decode()


def _decode(cursor: str, parameter: str) -> dict[str, Any]:
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError) as error:
        raise InvalidCursor(f"{parameter}: not a cursor this service issued", field=parameter) from error
    if not isinstance(payload, dict) or payload.get("v") != CURSOR_VERSION:
        raise InvalidCursor(f"{parameter}: not a cursor this service issued", field=parameter)
    return payload


def message_cursor(session_id: str, seq: int) -> str:
    return _encode({"s": session_id, "q": seq})


def read_message_cursor(cursor: str, session_id: str, parameter: str) -> int:
    payload = _decode(cursor, parameter)
    seq = payload.get("q")
    if payload.get("s") != session_id:
        raise InvalidCursor(f"{parameter}: this cursor belongs to another session", field=parameter)
    # A forged cursor may hold any JSON: only a seq PostgreSQL can compare is one this service issued.
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or seq not in INT64:
        raise InvalidCursor(f"{parameter}: not a cursor this service issued", field=parameter)
    return seq


def session_cursor(created_at: datetime, session_id: str, newest_first: bool) -> str:
    return _encode({"t": created_at.isoformat(), "i": session_id, "d": "desc" if newest_first else "asc"})


def read_session_cursor(cursor: str, newest_first: bool) -> tuple[datetime, str]:
    payload = _decode(cursor, "cursor")
    try:
        created_at = datetime.fromisoformat(payload["t"])
        session_id = payload["i"]
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidCursor("cursor: not a cursor this service issued", field="cursor") from error
    if not isinstance(session_id, str) or created_at.tzinfo is None:
        raise InvalidCursor("cursor: not a cursor this service issued", field="cursor")
    if payload.get("d") != ("desc" if newest_first else "asc"):
        raise InvalidCursor("cursor: it was issued for the other order", field="cursor")
    return created_at, session_id


def run_cursor(session_id: str, created_at: datetime, run_id: str) -> str:
    return _encode({"s": session_id, "t": created_at.isoformat(), "i": run_id})


def read_run_cursor(cursor: str, session_id: str, parameter: str) -> tuple[datetime, str]:
    payload = _decode(cursor, parameter)
    if payload.get("s") != session_id:
        raise InvalidCursor(f"{parameter}: this cursor belongs to another session", field=parameter)
    try:
        created_at = datetime.fromisoformat(payload["t"])
        run_id = payload["i"]
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidCursor(f"{parameter}: not a cursor this service issued", field=parameter) from error
    if not isinstance(run_id, str) or created_at.tzinfo is None:
        raise InvalidCursor(f"{parameter}: not a cursor this service issued", field=parameter)
    return created_at, run_id


def search_cursor(rank: float, session_id: str, seq: int, query_digest: str) -> str:
    """Where a page of search hits ended, for the same query (``query_digest``) only."""
    return _encode({"r": rank, "s": session_id, "q": seq, "h": query_digest})


def read_search_cursor(cursor: str, query_digest: str) -> tuple[float, str, int]:
    payload = _decode(cursor, "cursor")
    rank, session_id, seq = payload.get("r"), payload.get("s"), payload.get("q")
    if not (isinstance(rank, int | float) and isinstance(session_id, str) and isinstance(seq, int)):
        raise InvalidCursor("cursor: not a cursor this service issued", field="cursor")
    if payload.get("h") != query_digest:
        raise InvalidCursor("cursor: it was issued for another query or other filters", field="cursor")
    return float(rank), session_id, seq


def activity_cursor(last_active: datetime, session_id: str, range_digest: str) -> str:
    """Where a page of sessions ordered by last activity ended, for the same time range only."""
    return _encode({"t": last_active.isoformat(), "i": session_id, "h": range_digest})


def read_activity_cursor(cursor: str, range_digest: str) -> tuple[datetime, str]:
    payload = _decode(cursor, "cursor")
    try:
        last_active = datetime.fromisoformat(payload["t"])
        session_id = payload["i"]
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidCursor("cursor: not a cursor this service issued", field="cursor") from error
    if not isinstance(session_id, str) or last_active.tzinfo is None:
        raise InvalidCursor("cursor: not a cursor this service issued", field="cursor")
    if payload.get("h") != range_digest:
        raise InvalidCursor("cursor: it was issued for another time range", field="cursor")
    return last_active, session_id
