"""``PromptPrefixRepository``: what the previous ``/chat`` payload of a session began with, per request parameters.

One small row per (tenant, session, parameters hash), overwritten by every ``/chat``: the stable prefix's
size and digest, and what the history was (revision, applied compaction, pruned results), so the next
request can say whether its payload still starts the same and, when not, why.

A runtime whose system prompt, tools or mutations change every turn (a clock, a directory listing) asks
with new parameters each time, so a session keeps only its ``KEPT_PER_SESSION`` most recently written rows:
otherwise it would gain a row a turn for as long as it lives.
"""

from typing import NamedTuple

from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.dialects.postgresql import Insert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store.records import select_list
from app.store.replicas import driver
from app.store.tables import prompt_prefixes, sessions


class PromptPrefixRecord(NamedTuple):
    units: int
    digest: str
    length: int
    total_length: int
    revision: int
    """The session's changes other than appends when the payload was built (``HistoryState.rewrites``)."""
    boundary_id: str | None
    pruned: int
    written_units: int | None = None
    written_digest: str | None = None
    written_length: int | None = None


KEPT_PER_SESSION = 32
"""Remembered prefixes a session keeps, newest first: far more ways than a runtime asks for one session."""

_GET_SQL = (
    f"SELECT {select_list(PromptPrefixRecord._fields)} FROM prompt_prefixes"  # noqa: S608
    " WHERE tenant_id = $1 AND session_id = $2 AND params_hash = $3"
)


_TRIM_SQL = (
    "DELETE FROM prompt_prefixes WHERE tenant_id = $1 AND session_id = $2 AND params_hash IN ("
    " SELECT params_hash FROM prompt_prefixes WHERE tenant_id = $1 AND session_id = $2 AND params_hash IN ("
    "  SELECT params_hash FROM prompt_prefixes WHERE tenant_id = $1 AND session_id = $2"
    "  ORDER BY updated_at DESC, params_hash DESC OFFSET $3)"
    " FOR UPDATE SKIP LOCKED)"
)
"""Deletes the session's rows past the newest ``$3``. It never waits for a row lock (a row another request is
writing is left for a later trim), so it can never take part in a deadlock with the upserts."""


def _put_statement() -> Insert:
    """Built once: the row's values as parameters, selected only while the session exists, from a one-row
    source that turns ``synchronous_commit`` off for the statement's own transaction, so the statement needs
    no transaction block around it.

    The session row is locked ``FOR KEY SHARE`` (the lock the foreign key's own check takes), so a deletion
    that commits meanwhile is waited for and then leaves nothing to select: the statement keeps nothing, where
    a check of its snapshot would have passed and the foreign key then refused the row."""
    table = prompt_prefixes
    names = ("tenant_id", "session_id", "params_hash", *PromptPrefixRecord._fields)
    quiet = select(func.set_config("synchronous_commit", "off", True).label("quiet")).subquery("quiet")
    the_session = and_(sessions.c.tenant_id == bindparam("tenant_id"), sessions.c.id == bindparam("session_id"))
    row = (
        select(*(bindparam(name, type_=table.c[name].type) for name in names))
        .select_from(quiet.join(sessions, the_session))
        .with_for_update(read=True, key_share=True, of=sessions)
    )
    statement = pg_insert(table).from_select(list(names), row)
    return statement.on_conflict_do_update(
        index_elements=[table.c.tenant_id, table.c.session_id, table.c.params_hash],
        set_={**{name: statement.excluded[name] for name in PromptPrefixRecord._fields}, "updated_at": func.now()},
    )


_PUT = _put_statement()


class PromptPrefixRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    async def get(self, session_id: str, params_hash: str) -> PromptPrefixRecord | None:
        """A hand-written hot read (every ``/chat`` makes it), in the snapshot ``Database.reading`` began."""
        row = await (await driver(self._db)).fetchrow(_GET_SQL, self._tenant, session_id, params_hash)
        return None if row is None else PromptPrefixRecord(*row)

    async def put(self, session_id: str, params_hash: str, record: PromptPrefixRecord) -> None:
        """Keeps ``record`` as the newest, in one statement that is a whole unit of work (run it in autocommit:
        ``Database.single_write``). Its commit does not wait for the disk: a row lost in a crash only costs
        the next request its ``prefixBreak`` report, and ``/chat`` should not pay a flush for bookkeeping."""
        values = {"tenant_id": self._tenant, "session_id": session_id, "params_hash": params_hash}
        await self._db.execute(_PUT, {**values, **record._asdict()})

    async def trim(self, session_id: str, keep: int = KEPT_PER_SESSION) -> None:
        """Deletes the session's rows but the ``keep`` most recently written: after a ``put`` that added a row
        (parameters never asked before), so a session asked in ever new ways keeps a bounded number."""
        await (await driver(self._db)).execute(_TRIM_SQL, self._tenant, session_id, keep)
