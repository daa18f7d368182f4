"""Page sizes and message and run cursors: one rule for every listing and paged view.

``after`` walks towards newer messages and ``before`` towards older ones; without a cursor the walk starts
at the oldest message, or at the newest with ``order=desc``. ``nextCursor`` continues the same walk (pass it
back in the same parameter); on an empty page it is the cursor given, so a tailing reader can keep polling.
"""

from dataclasses import dataclass
from datetime import datetime

from app.api.cursors import message_cursor, read_message_cursor, read_run_cursor, run_cursor
from app.errors import BadRequest, InvalidInput
from app.settings import Settings


def page_limit(limit: int | None, settings: Settings) -> int:
    if limit is None:
        return settings.default_page_size
    if limit > settings.max_page_size:
        raise InvalidInput(f"limit: at most {settings.max_page_size}", field="limit")
    return limit


@dataclass(frozen=True, slots=True)
class Walk:
    session_id: str
    after_seq: int | None
    before_seq: int | None
    newest_first: bool
    given_cursor: str | None

    @property
    def backwards(self) -> bool:
        return self.before_seq is not None or (self.after_seq is None and self.newest_first)

    def next_cursor(self, seqs: list[int]) -> str | None:
        if not seqs:
            return self.given_cursor
        return message_cursor(self.session_id, min(seqs) if self.backwards else max(seqs))


def read_walk(session_id: str, after: str | None, before: str | None, order: str) -> Walk:
    if after and before:
        raise BadRequest("after, before: give one cursor, not both", field="after")
    return Walk(
        session_id=session_id,
        after_seq=read_message_cursor(after, session_id, "after") if after else None,
        before_seq=read_message_cursor(before, session_id, "before") if before else None,
        newest_first=order == "desc",
        given_cursor=after or before,
    )


@dataclass(frozen=True, slots=True)
class RunWalk:
    """The message walk's rule for a session's runs, keyed by (created_at, id) instead of seq."""

    session_id: str
    after: tuple[datetime, str] | None
    before: tuple[datetime, str] | None
    newest_first: bool
    given_cursor: str | None

    @property
    def backwards(self) -> bool:
        return self.before is not None or (self.after is None and self.newest_first)

    def next_cursor(self, keys: list[tuple[datetime, str]]) -> str | None:
        if not keys:
            return self.given_cursor
        created_at, run_id = min(keys) if self.backwards else max(keys)
        return run_cursor(self.session_id, created_at, run_id)


def read_run_walk(session_id: str, after: str | None, before: str | None, order: str) -> RunWalk:
    if after and before:
        raise BadRequest("after, before: give one cursor, not both", field="after")
    return RunWalk(
        session_id=session_id,
        after=read_run_cursor(after, session_id, "after") if after else None,
        before=read_run_cursor(before, session_id, "before") if before else None,
        newest_first=order == "desc",
        given_cursor=after or before,
    )
