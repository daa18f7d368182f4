"""Freed memory is given back to the system once large requests have stopped for a while: one trim after a
burst, none for small requests, none while large ones keep coming."""

import asyncio
import os
import threading
from collections.abc import Callable

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.memory_return import LARGE_REQUEST_BYTES, ReturnFreedMemory, glibc_malloc_trim
from app.main import create_app
from tests.conftest import settings_for_tests

QUIET = 0.1


class Trims:
    """A stand-in for ``malloc_trim`` that notes each call and the thread it ran in."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []
        self.called = threading.Event()

    def __call__(self, pad: int) -> int:
        self.calls.append((pad, threading.current_thread().name))
        self.called.set()
        return 1

    async def first(self) -> None:
        """Waits for the first trim, which runs in a worker thread however loaded the machine is."""
        assert await asyncio.to_thread(self.called.wait, 30), "no trim"


class Waiting:
    """A callback ``QuietPeriods`` holds until the test ends the quiet period."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class QuietPeriods:
    """The middleware's timer, whose quiet period ends when the test says so: a loaded machine's pause between
    two requests of a burst must not count as the burst having stopped."""

    def __init__(self) -> None:
        self.waiting: list[Waiting] = []

    def __call__(self, _seconds: float, callback: Callable[[], None]) -> Waiting:
        self.waiting.append(Waiting(callback))
        return self.waiting[-1]

    def live(self) -> list[Waiting]:
        return [waiting for waiting in self.waiting if not waiting.cancelled]

    def end(self) -> None:
        """The quiet period passes: what still waits runs, as the event loop would run it."""
        for waiting in self.live():
            waiting.cancelled = True
            waiting.callback()


def answering(answer_bytes: int, *, then_fail: bool = False) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * answer_bytes})
        if then_fail:
            raise RuntimeError("the answer failed after it was sent")

    return app


async def request(middleware: ReturnFreedMemory, body_bytes: int = 0) -> None:
    received = False

    async def receive() -> Message:
        nonlocal received
        if received:
            await asyncio.Event().wait()
        received = True
        return {"type": "http.request", "body": b"y" * body_bytes, "more_body": False}

    async def send(message: Message) -> None:
        pass

    await middleware({"type": "http", "method": "POST", "path": "/"}, receive, send)


async def test_freed_memory_is_given_back_in_a_worker_thread_once_large_requests_have_stopped() -> None:
    """On the event loop's own timer."""
    trims = Trims()
    middleware = ReturnFreedMemory(answering(LARGE_REQUEST_BYTES), quiet_seconds=QUIET, trim=trims)
    await request(middleware)
    assert trims.calls == []
    await trims.first()
    assert len(trims.calls) == 1
    pad, thread = trims.calls[0]
    assert pad == 0 and thread != threading.main_thread().name


async def test_a_burst_of_large_requests_is_trimmed_once_after_the_last() -> None:
    trims, quiet = Trims(), QuietPeriods()
    middleware = ReturnFreedMemory(answering(LARGE_REQUEST_BYTES), quiet_seconds=QUIET, trim=trims, later=quiet)
    for _ in range(5):
        await request(middleware)
    await asyncio.gather(*(request(middleware) for _ in range(5)))
    assert len(quiet.waiting) == 10 and len(quiet.live()) == 1
    assert trims.calls == []
    quiet.end()
    await trims.first()
    assert len(trims.calls) == 1


@pytest.mark.parametrize(
    ("body_bytes", "answer_bytes", "then_fail", "trimmed"),
    [
        (0, LARGE_REQUEST_BYTES - 1, False, 0),
        (LARGE_REQUEST_BYTES, 10, False, 1),
        (0, LARGE_REQUEST_BYTES, True, 1),
    ],
    ids=["small", "a large body", "a large answer that then failed"],
)
async def test_what_a_request_moved_in_and_out_decides(
    body_bytes: int, answer_bytes: int, then_fail: bool, trimmed: int
) -> None:
    trims, quiet = Trims(), QuietPeriods()
    middleware = ReturnFreedMemory(
        answering(answer_bytes, then_fail=then_fail), quiet_seconds=QUIET, trim=trims, later=quiet
    )
    if then_fail:
        with pytest.raises(RuntimeError):
            await request(middleware, body_bytes)
    else:
        await request(middleware, body_bytes)
    assert len(quiet.live()) == trimmed
    quiet.end()
    if trimmed:
        await trims.first()
    assert len(trims.calls) == trimmed


def test_the_service_trims_on_glibc_unless_told_not_to() -> None:
    def trims(**settings: object) -> bool:
        app = create_app(settings_for_tests(**settings))
        installed: list[object] = [middleware.cls for middleware in app.user_middleware]
        return ReturnFreedMemory in installed

    assert trims() == (glibc_malloc_trim() is not None)
    assert not trims(trim_memory_after_seconds=0)


def resident_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(glibc_malloc_trim() is None, reason="malloc_trim is glibc's")
def test_a_trim_gives_back_heap_memory_the_allocator_kept() -> None:
    """Blocks below glibc's mmap threshold come from the heap, and a heap whose top is still in use cannot
    shrink when the rest is freed: what this process keeps after a large answer."""
    trim = glibc_malloc_trim()
    assert trim is not None
    blocks = [bytearray(64 * 1024) for _ in range(3_000)]  # about 190 MB, written so it is resident
    top = bytearray(64 * 1024)
    del blocks
    kept = resident_bytes()
    trim(0)
    assert resident_bytes() < kept - 100 * 1024 * 1024
    del top
