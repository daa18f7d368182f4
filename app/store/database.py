"""The connection pools and the unit of work: one transaction per request, committed by the caller.

Writes, and the reads a write makes, run on the primary; read snapshots run on a streaming replica when
``DATABASE_READ_URL`` names any (``app.store.replicas`` picks one, honouring the request's consistency token),
and on the primary otherwise.
"""

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any

import asyncpg
import orjson
from sqlalchemy import event, exc, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from app import lossless_json
from app.settings import Settings
from app.store import consistency
from app.store.jsonb_numbers import jsonb_text
from app.store.replicas import ReadRouting, driver
from app.store.session_writers import SessionWriters

WITHOUT_KEPT_STATEMENTS: dict[str, Any] = {"statement_cache_size": 0, "prepared_statement_cache_size": 0}
"""Connection arguments under which no prepared statement outlives its use: asyncpg then prepares every
statement unnamed, and SQLAlchemy keeps none. A transaction-pooling PgBouncer before 1.21 hands the server
connection to another client after each transaction, where a named statement would be missing or collide
with another client's of the same name. The unnamed statement is parsed and run before the pooler can hand
the connection over (asyncpg ends the parse with Flush, not Sync), so it works inside a transaction and
outside one. It costs a parse per statement."""


def create_engine(url: str, settings: Settings) -> AsyncEngine:
    """An engine whose connections fail fast: bounded connect, statement and lock waits, and a pooled
    connection the server has closed (PostgreSQL restarted, the backend terminated) replaced at checkout, so
    that costs a new connection instead of an error (``_replace_closed``).

    The timeouts are start-up parameters of each connection, which cost nothing per request; a transaction
    pooler refuses those (PgBouncer: "unsupported startup parameter"), so behind one they are set on every
    BEGIN instead, in its round trip (``_timeouts_on_begin``)."""
    limits = (("statement_timeout", settings.statement_timeout_ms), ("lock_timeout", settings.lock_timeout_ms))
    timeouts = {name: value for name, value in limits if value}
    server_settings = {"application_name": "projector"}
    connect_args: dict[str, Any] = {"timeout": settings.connect_timeout_seconds, "server_settings": server_settings}
    if settings.transaction_pooling:
        connect_args.update(WITHOUT_KEPT_STATEMENTS)
        if timeouts:
            connect_args["connection_class"] = _timeouts_on_begin(timeouts)
    else:
        server_settings.update({name: str(value) for name, value in timeouts.items()})
    engine = create_async_engine(
        url,
        pool_size=settings.pool_size,
        max_overflow=settings.pool_max_overflow,
        pool_timeout=settings.pool_timeout_seconds,
        # Bound values are request data (message text, titles): keep them out of error messages and logs.
        hide_parameters=True,
        json_serializer=jsonb_text,
        json_deserializer=lossless_json.loads,
        connect_args=connect_args,
    )
    event.listen(engine.sync_engine, "connect", _decode_jsonb_with_orjson)
    event.listen(engine.sync_engine.pool, "checkout", _replace_closed)
    return engine


def _replace_closed(dbapi_connection: Any, _record: object, _proxy: object) -> None:
    """Hands the pool a closed connection back as a disconnect, which it replaces with a new one.

    asyncpg reads its socket whenever the event loop runs, so a server that ended the connection (a
    restart, ``pg_terminate_backend``, an idle timeout) has been seen to by the time it is checked out. This
    costs nothing, where the pool's pre-ping costs three round trips on every checkout (asyncpg's ping is
    BEGIN, a query and ROLLBACK, so it also holds through a transaction pooler)."""
    if dbapi_connection.driver_connection.is_closed():
        raise exc.DisconnectionError("the server closed this pooled connection")


def _timeouts_on_begin(timeouts: dict[str, int]) -> type[asyncpg.Connection]:
    """An asyncpg connection whose every BEGIN also sets ``timeouts`` for its transaction (``SET LOCAL``),
    in the same simple query: one round trip, as a bare BEGIN costs. Through a transaction pooler each
    transaction may run on another server connection, so a setting must live exactly as long as one. A
    statement outside a transaction (an autocommit read) runs without them: the role's or database's own
    settings apply there (the README's scale-out section)."""
    settings = "".join(f" SET LOCAL {name} = {value};" for name, value in timeouts.items())

    class TimeoutsOnBegin(asyncpg.Connection):
        async def execute(self, query: str, *args: object, timeout: float | None = None) -> str:  # noqa: ASYNC109
            # asyncpg begins every top-level transaction with one argument-less "BEGIN ...;" here;
            # the signature is asyncpg's own.
            if not args and query.startswith("BEGIN"):
                query += settings
            return await super().execute(query, *args, timeout=timeout)

    return TimeoutsOnBegin


def _decode_jsonb_with_orjson(dbapi_connection: Any, _record: object) -> None:
    """Replaces the dialect's jsonb codec with orjson called by asyncpg itself, in the text format: the
    text arrives as one ``str`` and ``orjson.loads`` takes it with no Python call in between (the binary
    format needs a wrapper to strip its version byte: about 10% slower on a 10,000-message window, measured
    with both codecs on one database). SQLAlchemy hands over jsonb parameters already serialized
    (``json_serializer``), so ``str`` passes them on as they are. Runs after the dialect's own set-up, since
    it was registered later."""
    dbapi_connection.run_async(
        lambda connection: connection.set_type_codec(
            "jsonb", schema="pg_catalog", encoder=str, decoder=orjson.loads, format="text"
        )
    )
    # Message content is ``json``, whose text may spell an unpaired surrogate, which orjson refuses: the
    # rare value it refuses is read again by the standard library (``lossless_json``).
    dbapi_connection.run_async(
        lambda connection: connection.set_type_codec(
            "json", schema="pg_catalog", encoder=str, decoder=lossless_json.loads, format="text"
        )
    )


log = logging.getLogger("projector.database")

SessionKey = tuple[str, str]
"""A tenant id and a session id."""

_TAKE_SNAPSHOT = text("SELECT 1")
"""Any statement begins the transaction and fixes its snapshot; this one reads nothing."""


_COMMIT_POSITION_SQL = "SELECT pg_current_wal_insert_lsn()::text"
"""Asked right after a commit: at or past the end of its commit record, whatever ``synchronous_commit`` says."""


LOST_CANCEL_REQUEST = "unexpected connection_lost() call"
"""What asyncpg's connection set-up puts on a future nobody awaits any more (see ``quiet_lost_cancel_requests``)."""


def quiet_lost_cancel_requests(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Makes ``loop`` log asyncpg's lost cancel request at DEBUG; returns what puts the previous handler back.

    A query whose request is cancelled (its client left) makes asyncpg send PostgreSQL a cancel request on a
    short-lived connection of its own, from a background task. SQLAlchemy then terminates the pooled
    connection, since its rollback is cancelled too, and terminating cancels that background task. When the
    task is cancelled just after its socket connected and before the connection was handed to its protocol,
    the transport is closed and the protocol's SSL-negotiation future, which nobody awaits any more, is given
    ``ConnectionError("unexpected connection_lost() call")``. The loop then logs "Future exception was never
    retrieved" at ERROR, which reads as a database outage although only a cancel request for a query already
    given up on (on a connection already closed) was lost. That future is private to asyncpg, so the loop is
    the one place to catch it. Every other exception the loop is handed goes on unchanged to the handler
    that was there, or to the loop's default one."""
    previous = loop.get_exception_handler()

    def handle(handling_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exception = context.get("exception")
        if (
            context.get("message") == "Future exception was never retrieved"
            and type(exception) is ConnectionError
            and exception.args == (LOST_CANCEL_REQUEST,)
        ):
            log.debug("a cancel request for an abandoned query was lost with its connection")
        elif previous is not None:
            previous(handling_loop, context)
        else:
            handling_loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    return lambda: loop.set_exception_handler(previous)


class Database:
    def __init__(
        self,
        engine: AsyncEngine,
        replicas: Sequence[AsyncEngine] = (),
        *,
        replica_wait_seconds: float = 0.5,
        timeouts_on_begin: bool = False,
        lock_wait_seconds: float | None = None,
    ) -> None:
        self.engine = engine
        self.replicas = list(replicas)
        self._reads = ReadRouting(engine, self.replicas, replica_wait_seconds)
        self._timeouts_on_begin = timeouts_on_begin
        self._session_writers = SessionWriters(wait_seconds=lock_wait_seconds)

    @classmethod
    def open(cls, url: str, settings: Settings) -> "Database":
        """The primary at ``url`` and the replicas the settings name, each with a pool of its own."""
        replicas = [create_engine(replica, settings) for replica in settings.database_read_url]
        return cls(
            create_engine(url, settings),
            replicas,
            replica_wait_seconds=settings.replica_wait_ms / 1000,
            timeouts_on_begin=settings.transaction_pooling,
            lock_wait_seconds=settings.lock_timeout_ms / 1000 if settings.lock_timeout_ms else None,
        )

    @asynccontextmanager
    async def transaction(self, *, locking: SessionKey | None = None) -> AsyncIterator[AsyncConnection]:
        """Commits when the block ends normally and rolls back on any exception. With replicas, a commit
        inside a request records its WAL position on the request's consistency token, for the response.
        ``locking``: the session whose row lock the block takes; the block waits its turn among this process's
        writers of it before taking a connection (``app.store.session_writers``)."""
        async with self._turn(locking), self.engine.connect() as connection:
            async with connection.begin():
                yield connection
            await self._record_commit(connection)

    @asynccontextmanager
    async def reading(self, *, on_primary: bool = False) -> AsyncIterator[AsyncConnection]:
        """A read-only snapshot: every read in the block, Core or raw driver, in whatever order, sees the same
        committed state. The snapshot is taken here, by the first statement, before the block runs: a
        REPEATABLE READ transaction fixes its snapshot at its first statement, and a raw driver read issued
        before any Core statement would otherwise run outside the transaction, in autocommit.

        It runs on a replica when there are any (one past the request's consistency token, if it sent one),
        unless ``on_primary``: a use case that writes reads on the primary what it is about to write on."""
        async with self._connect_for_reading(on_primary) as connection:
            # As execution options, the level goes into the BEGIN itself (one round trip, not BEGIN then
            # SET TRANSACTION); the pool resets both when the connection goes back.
            await connection.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            await connection.execute(_TAKE_SNAPSHOT)
            yield connection
            await connection.rollback()

    @asynccontextmanager
    async def single_read(self) -> AsyncIterator[AsyncConnection]:
        """A connection in autocommit for one read that shares no snapshot with another (an ETag check):
        no BEGIN, SET or ROLLBACK round trips around it."""
        async with self._connect_for_reading(on_primary=False) as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            yield connection

    @asynccontextmanager
    async def single_write(self, *, locking: SessionKey | None = None) -> AsyncIterator[AsyncConnection]:
        """A primary connection in autocommit for one statement that is a whole unit of work by itself (an
        append's single statement): no BEGIN or COMMIT round trips around it. With replicas, its WAL position
        goes on the request's consistency token, as a transaction's does.

        Behind a transaction pooler the statement and lock timeouts come with each BEGIN
        (``_timeouts_on_begin``), so there the statement runs in a transaction of its own (BEGIN, the
        statement, COMMIT): an append waiting on a session's lock stays bounded. ``locking``: as a
        transaction's."""
        if self._timeouts_on_begin:
            async with self.transaction(locking=locking) as connection:
                yield connection
            return
        async with self._turn(locking), self.engine.connect() as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            yield connection
            await self._record_commit(connection)

    def _turn(self, locking: SessionKey | None) -> AbstractAsyncContextManager[None]:
        return nullcontext() if locking is None else self._session_writers.turn(*locking)

    async def _record_commit(self, connection: AsyncConnection) -> None:
        """With replicas, puts the WAL position of the commit just made on the request's consistency token.
        The commit stands whatever happens here, so a failure never fails the request (a client told a write
        failed retries it, and a write without an id is then made twice): the position is server-wide, so a
        connection that broke after its commit (the server shutting down) is replaced by a fresh one; with
        the primary unreachable the answer carries no new token, said in the log."""
        request = consistency.current()
        if not self.replicas or request is None:
            return
        # Whatever broke (a driver in a state it cannot leave raises its own internal error), the commit stands.
        try:
            position = await (await driver(connection)).fetchval(_COMMIT_POSITION_SQL)
        except Exception:
            try:
                async with self.engine.connect() as fresh:
                    position = await (await driver(fresh)).fetchval(_COMMIT_POSITION_SQL)
            except Exception:
                log.warning("a commit's WAL position could not be read: no new consistency token", exc_info=True)
                return
        request.wrote(consistency.parse_position(position))

    def _connect_for_reading(self, on_primary: bool) -> AbstractAsyncContextManager[AsyncConnection]:
        if on_primary:
            return self.engine.connect()
        request = consistency.current()
        return self._reads.connect(request.wanted if request is not None else None)

    async def ping(self) -> None:
        async with self.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        for engine in (self.engine, *self.replicas):
            await engine.dispose()
