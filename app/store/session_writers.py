"""How many of this process's requests may hold a pooled connection while they wait for one session's lock.

Writes to one session take its row lock one at a time, and a writer waits for it holding a connection from
the pool. Without a bound, a burst of writers to one busy session (an import holding the lock for seconds,
eighty runtimes appending to it) took every pooled connection, and an append to another session waited for
a connection and failed. Past the bound, a session's writers wait here holding nothing, as long as they would
wait for the lock itself, so writes to other sessions always find a connection.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from app.errors import ServiceUnavailable

WRITERS_PER_SESSION = 2
"""One holds the lock, one waits for it with its connection ready: the lock passes on with no checkout between."""


@dataclass(slots=True)
class _Queue:
    turns: asyncio.Semaphore
    waiting: int = 0


class SessionWriters:
    def __init__(self, per_session: int = WRITERS_PER_SESSION, wait_seconds: float | None = None) -> None:
        """``wait_seconds``: how long a writer waits for its turn (the lock timeout; ``None``: no limit)."""
        self._per_session = per_session
        self._wait_seconds = wait_seconds
        self._queues: dict[tuple[str, str], _Queue] = {}

    @asynccontextmanager
    async def turn(self, tenant_id: str, session_id: str) -> AsyncIterator[None]:
        """Holds one of the session's places for the block; a 503 when none comes free in time, as a lock
        wait that times out is."""
        key = (tenant_id, session_id)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = _Queue(asyncio.Semaphore(self._per_session))
        queue.waiting += 1
        try:
            try:
                async with asyncio.timeout(self._wait_seconds):
                    await queue.turns.acquire()
            except TimeoutError:
                raise ServiceUnavailable(
                    f"session '{session_id}' is busy: too many writes are waiting for it; retry shortly."
                ) from None
            try:
                yield
            finally:
                queue.turns.release()
        finally:
            queue.waiting -= 1
            if not queue.waiting:
                del self._queues[key]
