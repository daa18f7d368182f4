"""Notices of what changed in a session, sent with PostgreSQL ``NOTIFY`` and heard on one ``LISTEN``
connection per process, so every worker process learns of every change wherever it was written.

A notice is sent inside the transaction that makes the change and PostgreSQL delivers it only when that
transaction commits (and never when it rolls back), in commit order. It is small (tenant, session, what
happened, the seq range): a listener that hears of new messages reads the rows itself, by seq, so a notice
never carries a message and a burst of appends costs the channel a few bytes each.

The listening connection is the process's own, opened apart from the pool: a pooled connection changes
hands, and behind PgBouncer in transaction mode a ``LISTEN`` would stay on a server connection that other
clients then use. When it drops (PostgreSQL restarted, the network cut, the backend terminated) the
listener opens a new one, and says so: notices sent while nobody listened are gone, so whoever relies on
them must read again from the database.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import asyncpg
import orjson
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

log = logging.getLogger("projector.events")

CHANNEL = "projector_session_events"
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


class NoticeKind(StrEnum):
    MESSAGE = "message"
    """Messages ``first_seq`` to ``last_seq`` were appended."""
    AMENDED = "amended"
    """The metadata of message ``first_seq`` (``details.messageId``) changed."""
    COMPACTION = "compaction"
    """A compaction was recorded: its boundary and summary are messages ``first_seq`` and ``last_seq``."""
    PRUNE = "prune"
    """Old tool results were marked ``compactedAt`` (``details``: how many, and the stamp)."""
    DELETED = "deleted"
    """The session was deleted, with its messages."""


@dataclass(frozen=True, slots=True)
class Notice:
    tenant_id: str
    session_id: str
    kind: NoticeKind
    first_seq: int
    last_seq: int
    details: dict[str, Any] = field(default_factory=dict)

    def payload(self) -> str:
        body = {"t": self.tenant_id, "s": self.session_id, "k": self.kind, "f": self.first_seq, "l": self.last_seq}
        if self.details:
            body["d"] = self.details
        return orjson.dumps(body).decode()

    @classmethod
    def from_payload(cls, payload: str) -> "Notice":
        body = orjson.loads(payload)
        return cls(body["t"], body["s"], NoticeKind(body["k"]), int(body["f"]), int(body["l"]), body.get("d", {}))


def messages_notice_sql(tenant: str, session: str, first_seq: str, last_seq: str) -> str:
    """A SQL expression sending the ``message`` notice of seqs ``first_seq`` to ``last_seq`` (SQL expressions
    too), for a statement that appends and announces in one: the payload ``Notice.from_payload`` reads."""
    body = f"'t', {tenant}::text, 's', {session}::text, 'k', '{NoticeKind.MESSAGE}', 'f', {first_seq}, 'l', {last_seq}"
    return f"pg_notify('{CHANNEL}', json_build_object({body})::text)"


async def notify(connection: AsyncConnection, notice: Notice) -> None:
    """Sends ``notice`` when the transaction ``connection`` is in commits."""
    await connection.execute(_NOTIFY, {"channel": CHANNEL, "payload": notice.payload()})


def listen_dsn(url: str) -> str:
    """asyncpg wants a plain DSN; the settings may hold a SQLAlchemy URL (``postgresql+asyncpg://``)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class NoticeListener:
    """Keeps one ``LISTEN`` connection open for as long as it runs and hands every notice to ``deliver``.

    ``on_listening`` is called each time a connection starts listening, the first included: only from then on
    are notices heard, so that is when whoever depends on them reads what may have been missed. A connection
    that stops answering (a half-open TCP connection sends no error) is found by a query every
    ``check_seconds`` and replaced.
    """

    def __init__(
        self,
        dsn: str,
        deliver: Callable[[Notice], None],
        on_listening: Callable[[], None],
        *,
        connect_timeout: float,
        check_seconds: float = 10.0,
        retry_seconds: float = 1.0,
    ) -> None:
        self._dsn = dsn
        self._deliver = deliver
        self._on_listening = on_listening
        self._connect_timeout = connect_timeout
        self._check_seconds = check_seconds
        self._retry_seconds = retry_seconds
        self._task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        self.backend_pid: int | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="projector-listen")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                await self._listen_until_lost()
            except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                log.warning("the LISTEN connection was lost; reconnecting", extra={"error": type(error).__name__})
            except Exception:
                # Whatever it was, a process that stops listening would serve streams that never move again.
                log.exception("the LISTEN connection failed; reconnecting")
            await asyncio.sleep(self._retry_seconds)

    async def _listen_until_lost(self) -> None:
        connection = await asyncpg.connect(
            self._dsn,
            timeout=self._connect_timeout,
            server_settings={"application_name": "projector-listen"},
        )
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _connection: lost.set())
        try:
            await connection.add_listener(CHANNEL, self._heard)
            self.backend_pid = connection.get_server_pid()
            self.listening.set()
            self._on_listening()
            while not lost.is_set():
                try:
                    await asyncio.wait_for(lost.wait(), self._check_seconds)
                except TimeoutError:
                    await connection.fetchval("SELECT 1", timeout=self._connect_timeout)
            raise ConnectionResetError("the LISTEN connection was closed")
        finally:
            self.listening.clear()
            self.backend_pid = None
            connection.terminate()

    def _heard(self, _connection: object, _pid: int, _channel: str, payload: object) -> None:
        try:
            notice = Notice.from_payload(str(payload))
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a notice this version cannot read")
            return
        self._deliver(notice)
