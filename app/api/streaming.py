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
"""

import traceback
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Mapping
from contextlib import asynccontextmanager

from anyio import CancelScope, create_task_group
from anyio.abc import TaskGroup
from starlette.background import BackgroundTask
from starlette.responses import ContentStream, StreamingResponse
from starlette.types import Receive, Scope, Send

SEND_FAILS_ONCE_THE_CLIENT_LEFT = (2, 4)
"""From this ASGI spec version on, a send to a client that left raises ``OSError``, which ends the stream by
itself; before it (uvicorn speaks 2.3) the client's leaving is only an ``http.disconnect`` received, so the
stream runs beside a task listening for it."""


class ClosingStreamingResponse(StreamingResponse):
    def __init__(
        self,
        content: ContentStream,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        super().__init__(content, status_code, headers, media_type, background)
        self.source = content

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if scope["type"] == "http" and _spec_version(scope) < SEND_FAILS_ONCE_THE_CLIENT_LEFT:
                await self.stream_until_the_client_leaves(receive, send)
                if self.background is not None:
                    await self.background()
            else:
                await super().__call__(scope, receive, send)
        finally:
            with CancelScope(shield=True):
                await self.close_body()

    async def stream_response(self, send: Send) -> None:
        """Starlette's stream, whose frames let go of what they hold (the piece being sent, the body's
        generators) when an exception ends it: code under the stream may keep that exception in a reference
        cycle (SQLAlchemy's pool keeps a connection attempt's, when a client leaving cuts it short)."""
        try:
            await super().stream_response(send)
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
        threads for it, that one too (idle by now: a cancelled wait for a worker thread waits for it to end)."""
        if isinstance(self.body_iterator, AsyncGenerator):
            await self.body_iterator.aclose()
        if isinstance(self.source, Generator):
            self.source.close()


@asynccontextmanager
async def collapsing_task_group() -> AsyncIterator[TaskGroup]:
    """anyio's task group, but a lone failure comes out as itself rather than in an exception group, as it does
    from Starlette's ``StreamingResponse``: a client's ``ClientDisconnect`` or a database error reaches the
    handler written for it. Several failures stay a group."""
    try:
        async with create_task_group() as group:
            yield group
    except BaseExceptionGroup as failures:
        if len(failures.exceptions) != 1:
            raise
        failure = failures.exceptions[0]
        context = None if failure.__suppress_context__ else failure.__context__
        raise failure from failure.__cause__ or context


def _spec_version(scope: Scope) -> tuple[int, ...]:
    return tuple(map(int, scope.get("asgi", {}).get("spec_version", "2.0").split(".")))
