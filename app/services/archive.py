"""A session as an archive: the session, then its runs, then its messages oldest first, read a page at a time
so that no read holds the whole session, and cut at the session's ``last_seq`` when it was read, so that
messages appended while the archive streams are left for the next one. ``app.importers.archive`` reads it
back."""

from collections.abc import AsyncIterator
from dataclasses import dataclass

from app.services import messages, runs, sessions
from app.settings import Settings
from app.store.database import Database
from app.store.records import MessageRecord, RunRecord, SessionRecord


@dataclass(frozen=True, slots=True)
class Archive:
    session: SessionRecord
    pages: AsyncIterator[list[RunRecord] | list[MessageRecord]]
    """The runs' pages, then the messages'."""


async def open_archive(database: Database, settings: Settings, tenant_id: str, session_id: str) -> Archive:
    """Reads the session now (``NotFound`` before anything is sent), the rest as the pages are taken."""
    session = await sessions.get_session(database, tenant_id, session_id)
    return Archive(session, _pages(database, settings, tenant_id, session))


async def _pages(
    database: Database, settings: Settings, tenant_id: str, session: SessionRecord
) -> AsyncIterator[list[RunRecord] | list[MessageRecord]]:
    budget, limit = messages.response_budget(settings), settings.max_page_size
    after = None
    while True:
        run_page = await runs.page_runs(
            database, tenant_id, session.id, limit=limit, after=after, before=None, newest_first=False, budget=budget
        )
        yield run_page.runs
        if not run_page.has_more or not run_page.runs:
            break
        after = (run_page.runs[-1].created_at, run_page.runs[-1].id)
    after_seq = 0
    while after_seq < session.last_seq:
        page = await messages.page_messages(
            database,
            tenant_id,
            session.id,
            limit=limit,
            after_seq=after_seq,
            before_seq=session.last_seq + 1,
            backwards=False,
            newest_first=False,
            budget=budget,
        )
        if not page.messages:
            break
        yield page.messages
        after_seq = page.messages[-1].seq
