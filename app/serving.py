"""The HTTP server's side of a client that stalls: uvicorn waits for a request's head (its request line and
headers) for as long as the client takes, so a connection that sends nothing, or half a head, stays open for
good and enough of them spend the process's file descriptors. ``head_deadline_protocol`` gives uvicorn's
HTTP protocol a deadline for each head: from the connection's opening, and from each answer on a kept-alive
connection, the whole head must arrive within it, or the connection is closed. A stalled body is the
application's to answer (``app.api.middleware.BodyLimit``, 408).

A client that stops reading an answer is the application's to notice (``app.api.streaming``), but only the
server can drop its connection: closing it would wait for the client to read what is buffered, which it never
does, holding the socket and megabytes of the kernel's buffers. The protocol hands each request a way to abort
its connection (``ABORT_CONNECTION`` in the scope), which the stream calls when it gives up on its client."""

import asyncio
import socket
import struct
from typing import Any

from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

ABORT_CONNECTION = "projector.abort_connection"
"""A scope key: called with no arguments, drops the request's connection at once (buffered data unsent)."""


def head_deadline_protocol(seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, closing a connection whose request head takes longer than ``seconds``."""

    class HeadDeadline(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.head_deadline: asyncio.TimerHandle | None = None
            served = self.app

            async def app(scope: Scope, receive: Receive, send: Send) -> None:
                scope[ABORT_CONNECTION] = self._abort
                await served(scope, receive, send)

            self.app = app

        def _abort(self) -> None:
            if self.cycle is not None:
                self.cycle.disconnected = True  # uvicorn then takes the unfinished answer for the client's leaving
            connection = self.transport.get_extra_info("socket")
            if connection is not None:
                # A reset, not a close: a closed socket with unsent data stays in the kernel (FIN-WAIT-1, its
                # buffers full) for as long as the client keeps not reading.
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            # A pipelined request already sent its head: the deadline is for the next one only.
            waiting = not self.pipeline
            super().on_response_complete()
            if waiting and not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self.head_deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
                self.head_deadline = None

        def _expire(self) -> None:
            self.head_deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeadDeadline
