"""A streamed answer that lets go of its body as soon as the stream ends, however it ends: read to the end,
or left part-way by a client that hung up.

Starlette's ``StreamingResponse`` stops a stream whose client left by cancelling the task group it runs in.
When a task of an anyio task group ends cancelled, the group's done-callback keeps the ``CancelledError`` in
a local of its own frame, which the exception's traceback holds: a reference cycle, and that traceback holds
every frame the stream was suspended in, with the response, its body's generators and what they hold (a
page of messages, 30 MB say) and the piece being sent. Only the cycle collector frees it, and the service
makes that run rarely (``app.main.tune_garbage_collection``), so clients hanging up on large answers grew the
process without limit.

``ClosingStreamingResponse`` stops such a stream by cancelling a scope of the stream's own, which the
stream's task leaves as finished: no exception outlives it, and reference counting frees the answer as the
stream ends. An exception that does end a stream has its frames cleared, since code under the stream may keep
it in a cycle of its own. And the body's generators are closed once the stream ends, however it ends, so that
what they hold goes even while something keeps the response (a request cancelled from outside, a failed send
whose exception travels on).

A client that reads nothing would hold its stream's page for as long as it stays connected. So a slice of the
answer (``SEND_SLICE_BYTES``) the client has not taken within the client timeout ends the stream and drops the
connection (``app.serving``), as a stalled upload is cut. The deadline is on a slice, not on a whole piece of the
body (a megabyte, or a single message of up to 16 MB): a server's send returns only once the client has read
nearly all of what it was given, so a deadline on a piece would cut off an honest client reading slower than a
piece per timeout. An event stream's heartbeats are small enough to wait in the socket's buffers. And each
caller may hold only so many streamed answers open at once (``StreamLimits``): the one past the limit is
answered 429 before a byte of it is sent, and a stream's place is given back as it ends, however it ends.
"""

import logging
import traceback
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import asynccontextmanager

import orjson
from anyio import CancelScope, create_task_group, fail_after
from anyio.abc import TaskGroup
from starlette.background import BackgroundTask
from starlette.responses import ContentStream, Response, StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from app.errors import TooManyOpenStreams
from app.serving import ABORT_CONNECTION
from app.settings import Settings

log = logging.getLogger("projector.streaming")

SEND_FAILS_ONCE_THE_CLIENT_LEFT = (2, 4)
"""From this ASGI spec version on, a send to a client that left raises ``OSError``, which ends the stream by
itself; before it (uvicorn speaks 2.3) the client's leaving is only an ``http.disconnect`` received, so the
stream runs beside a task listening for it."""


SEND_SLICE_BYTES = 256 * 1024
"""The most of a body given to one send under the client timeout: a server's send waits until the client has
read nearly all of it, so a client must read at least this much per timeout (about 9 KB/s at 30 s) to be kept,
whatever the size of the pieces the body is made in."""


STREAM_RETRY_SECONDS = 5
"""Retry-After of a stream refused at the caller's limit: a place comes free only when one of the caller's
streams ends, so an immediate retry would only be refused again."""


class StreamLimits:
    """How many streamed answers each caller holds open, at most ``per_caller`` (one event loop: no lock).
    ``caller_of`` names the caller of a request (``app.api.callers``)."""

    def __init__(self, per_caller: int, caller_of: Callable[[Scope], str]) -> None:
        self.per_caller = per_caller
        self.caller_of = caller_of
        self._open: dict[str, int] = {}

    def open_streams(self, caller: str) -> int:
        return self._open.get(caller, 0)

    def take(self, caller: str) -> bool:
        """Takes a place for one more stream of ``caller``, unless it holds as many as it may."""
        held = self._open.get(caller, 0)
        if held >= self.per_caller:
            return False
        self._open[caller] = held + 1
        return True

    def give_back(self, caller: str) -> None:
        held = self._open.pop(caller) - 1
        if held:
            self._open[caller] = held


class ClosingStreamingResponse(StreamingResponse):
    def __init__(
        self,
        content: ContentStream,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: BackgroundTask | None = None,
        *,
        also_closes: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """``also_closes``: what the body reads from and does not close itself (an iterator it loops over),
        closed with the body however the stream ends, even if it never started."""
        super().__init__(content, status_code, headers, media_type, background)
        self.source = content
        self.also_closes = also_closes
        self.send_seconds: float | None = None
        """How long one slice of a piece may wait for the client to take it (the client timeout setting);
        ``None``: ever."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = getattr(scope.get("app"), "state", None)
        limits: StreamLimits | None = getattr(state, "stream_limits", None)
        settings = getattr(state, "settings", None)
        self.send_seconds = settings.client_timeout_seconds if isinstance(settings, Settings) else None
        caller = limits.caller_of(scope) if limits is not None else ""
        taken = limits is not None and limits.take(caller)
        try:
            if limits is not None and not taken:
                await _refusal(limits, scope)(scope, receive, send)
            else:
                await self.stream(scope, receive, send)
        except ClientStoppedReading as stopped:
            log.info("a client took nothing for %s s: its stream was ended", stopped.seconds)
            abort = scope.get(ABORT_CONNECTION)
            if callable(abort):
                abort()
            # Otherwise returning with the answer unfinished makes the server close the connection, once the
            # client has read what is buffered for it.
        finally:
            try:
                with CancelScope(shield=True):
                    await self.close_body()
            finally:
                # After the body is closed, so a place comes free only once what the stream held is let go.
                if limits is not None and taken:
                    limits.give_back(caller)

    async def stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _spec_version(scope) < SEND_FAILS_ONCE_THE_CLIENT_LEFT:
            await self.stream_until_the_client_leaves(receive, send)
            if self.background is not None:
                await self.background()
        else:
            await super().__call__(scope, receive, send)

    async def stream_response(self, send: Send) -> None:
        """Starlette's stream, whose frames let go of what they hold (the piece being sent, the body's
        generators) when an exception ends it: code under the stream may keep that exception in a reference
        cycle (SQLAlchemy's pool keeps a connection attempt's, when a client leaving cuts it short)."""
        try:
            await super().stream_response(_sent_within(send, self.send_seconds))
        except BaseException as ending:
            traceback.clear_frames(ending.__traceback__)
            raise

    async def stream_until_the_client_leaves(self, receive: Receive, send: Send) -> None:
        """Starlette's stream, but a client leaving cancels the stream's own scope rather than its task's."""
        async with collapsing_task_group() as group:
            streaming = CancelScope()

            async def stream() -> None:
                with streaming:
                    await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(stream)
            await self.listen_for_disconnect(receive)
            streaming.cancel()

    async def close_body(self) -> None:
        """Closes the body's generators: the one the stream reads and, when Starlette runs a plain one in worker
        threads for it, that one too (idle by now: a cancelled wait for a worker thread waits for it to end);
        then what the body reads from."""
        try:
            if isinstance(self.body_iterator, AsyncGenerator):
                await self.body_iterator.aclose()
            if isinstance(self.source, Generator):
                self.source.close()
        finally:
            if self.also_closes is not None:
                await self.also_closes()


class ClientStoppedReading(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"the client took nothing for {seconds} s")
        self.seconds = seconds


def _sent_within(send: Send, seconds: float | None) -> Send:
    """``send``, but a slice the client has not taken within ``seconds`` ends the stream: a client that reads
    nothing would otherwise hold the stream's page for as long as it stays connected. A piece is sent a slice
    at a time (``_sliced``), so the deadline measures the client's progress and a slow reader keeps up."""
    if seconds is None:
        return send

    async def send_within(message: Message) -> None:
        for part in _sliced(message):
            try:
                with fail_after(seconds):
                    await send(part)
            except TimeoutError:
                raise ClientStoppedReading(seconds) from None

    return send_within


def _sliced(message: Message) -> Iterator[Message]:
    """``message``, its body cut into ``SEND_SLICE_BYTES`` at most: the same bytes in the same order, every
    slice but the last saying more follows and the last saying what the message said."""
    body = message.get("body", b"")
    if message["type"] != "http.response.body" or len(body) <= SEND_SLICE_BYTES:
        yield message
        return
    more_body = message.get("more_body", False)
    for start in range(0, len(body), SEND_SLICE_BYTES):
        end = start + SEND_SLICE_BYTES
        yield {**message, "body": body[start:end], "more_body": more_body or end < len(body)}


def _refusal(limits: StreamLimits, scope: Scope) -> Response:
    """429 problem+json naming the limit, before anything of the stream is sent."""
    refused = TooManyOpenStreams(
        f"This caller already holds {limits.per_caller} streamed answers open (event streams, and message pages, "
        "views and exports large enough to be streamed), the most PROJECTOR_STREAMS_PER_CALLER allows; read one "
        "to its end or close it, then retry.",
        limit="PROJECTOR_STREAMS_PER_CALLER",
        maximum=limits.per_caller,
    )
    body = {
        "type": refused.type,
        "title": refused.title,
        "status": refused.status,
        "detail": refused.detail,
        "instance": scope["path"],
        **refused.extensions,
    }
    return Response(
        orjson.dumps(body),
        status_code=refused.status,
        headers={"Retry-After": str(STREAM_RETRY_SECONDS)},
        media_type="application/problem+json",
    )


@asynccontextmanager
async def collapsing_task_group() -> AsyncIterator[TaskGroup]:
    """anyio's task group, but a lone failure comes out as itself rather than in an exception group, as it does
    from Starlette's ``StreamingResponse``: a client's ``ClientDisconnect`` or a database error reaches the
    handler written for it. Several failures stay a group.

    Unlike Starlette's, it raises the failure outside the ``except`` block and drops its own hold on it: raised
    inside, the failure's ``__context__`` would be the group, which holds the failure, and a failure left in a
    local of this frame, which its traceback holds, would be another reference cycle; either leaves the failure,
    its traceback and every frame in it for the cycle collector. Its cause is what Starlette's gives it: its own
    cause, else the context it had."""
    failure: BaseException | None = None
    try:
        async with create_task_group() as group:
            yield group
    except BaseExceptionGroup as failures:
        if len(failures.exceptions) != 1:
            raise
        failure = failures.exceptions[0]
    if failure is None:
        return
    cause = failure.__cause__ or (None if failure.__suppress_context__ else failure.__context__)
    try:
        raise failure from cause
    finally:
        failure = cause = None


def _spec_version(scope: Scope) -> tuple[int, ...]:
    return tuple(map(int, scope.get("asgi", {}).get("spec_version", "2.0").split(".")))
