"""Freed memory goes back to the system once large requests stop.

glibc keeps what a process frees mapped, for its next allocations: after thirty event streams of 15 MB
messages left, a worker stayed at 1.6-2.0 GB with nothing alive in it. ``malloc_trim(0)`` gives back the free
pages of every heap, but takes about 40 ms (up to 150 ms) on such a heap, holding each heap's lock in turn. So
it runs in a worker thread, and only once no request that moved ``LARGE_REQUEST_BYTES`` or more in or out has
ended for a while: by then a burst's answers are all freed, and a process busy with large requests, which
reuses what it keeps, is not trimmed at all. Only on glibc; `docs/performance.md` has the figures.
"""

import asyncio
import ctypes
import functools
from collections.abc import Callable
from typing import Protocol

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LARGE_REQUEST_BYTES = 1024 * 1024
"""A request whose body or answer is this large leaves megabytes freed behind it; smaller ones are left to
the allocator."""

Trim = Callable[[int], object]


class Pending(Protocol):
    """A callback waiting for its time, as ``loop.call_later`` returns it."""

    def cancel(self) -> None: ...


Later = Callable[[float, Callable[[], None]], Pending]
"""Runs a callback after so many seconds: the event loop's ``call_later``, or a test's stand-in that lets the
quiet period pass when the test says so rather than when a loaded machine's clock does."""


def glibc_malloc_trim() -> Trim | None:
    """glibc's ``malloc_trim``, or None on another C library (musl, macOS), which has none. Looked up in the
    process itself: the interpreter binary's own markings may not name the C library it runs on."""
    try:
        process = ctypes.CDLL(None)
    except OSError:
        return None
    trim: Trim | None = getattr(process, "malloc_trim", None)
    return trim


class ReturnFreedMemory:
    """Trims the heap ``quiet_seconds`` after the last large request ended, unless another ended meanwhile."""

    def __init__(self, app: ASGIApp, *, quiet_seconds: float, trim: Trim, later: Later | None = None) -> None:
        self.app = app
        self.quiet_seconds = quiet_seconds
        self.trim = trim
        self.later = later
        self._pending: Pending | None = None
        self._running: asyncio.Future[object] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        moved = 0

        async def counting_receive() -> Message:
            nonlocal moved
            message = await receive()
            moved += len(message.get("body", b""))
            return message

        async def counting_send(message: Message) -> None:
            nonlocal moved
            moved += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counting_receive, counting_send)
        finally:
            if moved >= LARGE_REQUEST_BYTES:
                self._trim_when_quiet()

    def _trim_when_quiet(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        loop = asyncio.get_running_loop()
        later = self.later or loop.call_later
        self._pending = later(self.quiet_seconds, functools.partial(self._trim_in_a_thread, loop))

    def _trim_in_a_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        self._pending = None
        if self._running is None or self._running.done():
            self._running = loop.run_in_executor(None, self.trim, 0)
