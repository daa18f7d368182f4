"""Search: the tenant's messages (or one session's) that match some words, best first, a page at a time."""

from dataclasses import dataclass

from app.errors import NotFound
from app.store.database import Database
from app.store.search import SearchFilter, SearchHit, SearchKey, SearchRepository
from app.store.sessions import SessionRepository


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: list[SearchHit]
    has_more: bool

    def last_key(self) -> SearchKey | None:
        if not self.hits:
            return None
        last = self.hits[-1]
        return SearchKey(last.rank, last.session_id, last.seq)


async def search_messages(
    database: Database, tenant_id: str, given: SearchFilter, *, limit: int, after: SearchKey | None
) -> SearchPage:
    """Within ``given.session_id`` when it is set, which must be one of the tenant's sessions."""
    async with database.reading() as connection:
        if (
            given.session_id is not None
            and await SessionRepository(connection, tenant_id).get(given.session_id) is None
        ):
            raise NotFound(f"session '{given.session_id}' does not exist")
        hits, has_more = await SearchRepository(connection, tenant_id).search(given, limit=limit, after=after)
    return SearchPage(hits, has_more)
