"""A streamed answer lets go of everything it holds once the stream ends, freed by reference counting rather
than by the cycle collector (which the service runs rarely): it closes its body's generators however the
stream ends, a client leaving ends the stream without leaving its frames behind, and what those frames held
goes even when code under the stream keeps the exception that ended it."""

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import pytest
from anyio.abc import TaskGroup
from starlette.requests import ClientDisconnect
from starlette.responses import StreamingResponse
from starlette.types import Message

from app.api.streaming import ClosingStreamingResponse, collapsing_task_group

PIECES = 5


class Body:
    """A body of ``PIECES`` pieces that notes whether it was closed."""

    def __init__(self) -> None:
        self.closed = False

    def plain(self) -> Iterator[bytes]:
        try:
            for index in range(PIECES):
                yield f"piece {index};".encode()
        finally:
            self.closed = True

    async def asynchronous(self) -> AsyncIterator[bytes]:
        try:
            for index in range(PIECES):
                yield f"piece {index};".encode()
        finally:
            self.closed = True


class Page:
    """What a body holds while it streams: a page of messages, say."""


Ending = Callable[[ClosingStreamingResponse], Awaitable[None]]


def scope(spec_version: str) -> dict[str, object]:
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": spec_version}, "method": "GET", "path": "/"}


async def never_receives() -> Message:
    """A client that sends nothing more and never leaves."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def read_to_the_end(response: ClosingStreamingResponse) -> None:
    async def send(message: Message) -> None:
        pass

    await response(scope("2.3"), never_receives, send)


async def leaving_after_the_first_piece(response: ClosingStreamingResponse, *, while_it_is_sent: bool) -> None:
    """As uvicorn reports it: an ``http.disconnect`` received once the first piece is sent, while that send
    still waits (``while_it_is_sent``) or while the body makes the next piece."""
    left = asyncio.Event()

    async def receive() -> Message:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            left.set()
            if while_it_is_sent:
                await asyncio.Event().wait()

    await response(scope("2.3"), receive, send)


async def left_after_the_first_piece(response: ClosingStreamingResponse) -> None:
    await leaving_after_the_first_piece(response, while_it_is_sent=True)


async def left_while_the_next_piece_was_made(response: ClosingStreamingResponse) -> None:
    await leaving_after_the_first_piece(response, while_it_is_sent=False)


async def a_send_failed(response: ClosingStreamingResponse) -> None:
    """As a server of ASGI 2.4 reports a client that left."""

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            raise OSError("the client left")

    with pytest.raises(ClientDisconnect):
        await response(scope("2.4"), never_receives, send)


async def cancelled_from_outside(response: ClosingStreamingResponse) -> None:
    sending = asyncio.Event()

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            sending.set()
            await asyncio.Event().wait()

    streaming = asyncio.ensure_future(response(scope("2.3"), never_receives, send))
    await sending.wait()
    streaming.cancel()
    with pytest.raises(asyncio.CancelledError):
        await streaming


ENDINGS: dict[str, Ending] = {
    "read to the end": read_to_the_end,
    "left by its client": left_after_the_first_piece,
    "left while the next piece was made": left_while_the_next_piece_was_made,
    "cut by a failed send": a_send_failed,
    "cancelled from outside": cancelled_from_outside,
}


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
@pytest.mark.parametrize("kind", ["plain", "asynchronous"])
async def test_the_body_is_closed_however_the_stream_ends(ending: Ending, kind: str) -> None:
    body = Body()
    response = ClosingStreamingResponse(getattr(body, kind)(), media_type="text/plain")
    await asyncio.wait_for(ending(response), timeout=10)
    assert body.closed


class BodyFailed(Exception):
    pass


async def failing_body() -> AsyncIterator[bytes]:
    yield b"the first piece"
    raise BodyFailed


async def test_a_body_failing_mid_stream_raises_its_own_exception_not_a_group() -> None:
    """The handlers (a database error's 503, a client gone) are written for the exception itself."""

    async def send(message: Message) -> None:
        pass

    with pytest.raises(BodyFailed):
        await asyncio.wait_for(ClosingStreamingResponse(failing_body())(scope("2.3"), never_receives, send), 10)


async def failing_in_a_task(group: TaskGroup) -> None:
    async def fail() -> None:
        raise BodyFailed

    group.start_soon(fail)
    await asyncio.Event().wait()


async def failing_in_its_own_body(group: TaskGroup) -> None:
    raise BodyFailed


LONE_FAILURES: dict[str, Callable[[TaskGroup], Awaitable[None]]] = {
    "in a task": failing_in_a_task,
    "in the group's own body": failing_in_its_own_body,
}


@pytest.mark.parametrize("failing", LONE_FAILURES.values(), ids=LONE_FAILURES.keys())
async def test_a_lone_failure_comes_out_of_the_task_group_as_itself_in_no_reference_cycle(
    failing: Callable[[TaskGroup], Awaitable[None]],
) -> None:
    """In a cycle (its context the group that holds it, say), the failure would keep its traceback and every
    frame in it, with what they hold, until the cycle collector ran."""
    with no_cycle_collection():
        try:
            async with collapsing_task_group() as group:
                await failing(group)
        except BodyFailed as failure:
            groups_in_its_context: list[str] = []
            context = failure.__context__
            while context is not None:
                if isinstance(context, BaseExceptionGroup):
                    groups_in_its_context.append(repr(context))
                context = context.__context__
            kept = weakref.ref(failure)
        assert groups_in_its_context == []
        assert kept() is None, "the failure is held in a reference cycle"


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """What the block leaves behind is freed by reference counting or not at all (until the next collection,
    which a busy service may not run for a long time)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


STREAM_FRAMES = {StreamingResponse.stream_response.__code__, ClosingStreamingResponse.stream_response.__code__}


async def test_a_stream_its_client_left_leaves_none_of_its_frames_behind() -> None:
    with no_cycle_collection():
        await asyncio.wait_for(left_after_the_first_piece(ClosingStreamingResponse(Body().asynchronous())), 10)
        alive = [frame for frame in gc.get_objects() if isinstance(frame, FrameType) and frame.f_code in STREAM_FRAMES]
    assert alive == []


async def test_what_the_body_held_goes_even_when_code_under_the_stream_keeps_the_exception_that_ended_it() -> None:
    pages: list[weakref.ref[Page]] = []

    async def body_keeping_its_ending() -> AsyncIterator[bytes]:
        """Keeps the exception that ends it in a reference cycle, as SQLAlchemy's pool keeps the exception
        of a connection attempt cut short: the exception's traceback holds this frame, which holds it."""
        page = Page()
        pages.append(weakref.ref(page))
        kept: list[BaseException] = []
        yield b"the first piece"
        try:
            await asyncio.Event().wait()  # reading the next page
        except BaseException as ending:
            kept.append(ending)
            raise
        yield repr(page).encode()

    with no_cycle_collection():
        await asyncio.wait_for(
            left_while_the_next_piece_was_made(ClosingStreamingResponse(body_keeping_its_ending())), 10
        )
        assert pages[0]() is None
