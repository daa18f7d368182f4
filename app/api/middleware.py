"""Pure ASGI middleware (no ``BaseHTTPMiddleware``: it buffers bodies and breaks streaming).

``RequestLogging`` gives every request an id (``X-Request-ID``, taken from the caller when it sends one),
logs one line per request and records metrics; a request whose client left before any answer started
(part-way through its upload, say) counts as 499, whatever was then answered to nobody. ``HeaderLimit``
answers 431 problem+json to a request whose headers are too many or too large in total, before anything else
reads them. ``BodyLimit`` answers 413 problem+json once a body grows past the limit, counting the bytes
actually received rather than trusting ``Content-Length``, 415 to a compressed body (``Content-Encoding``: none
is taken), and 408 once no part of an unfinished body has arrived for ``idle_seconds``: a client that sends its
headers and stalls would otherwise hold its connection open for good. ``HeadAsGet`` answers ``HEAD`` on every
``GET`` route.
"""

import logging
import re
import time
import uuid

from anyio import CancelScope, fail_after
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem
from app.errors import ProjectorError, RequestHeadersTooLarge, TooLarge, UnsupportedMediaType
from app.observability import CLIENT_CLOSED_REQUEST, LATENCY, REQUESTS, request_id

log = logging.getLogger("projector.access")
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
METHOD_LABELS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})
"""The methods counted under their own name. Any token is a method to HTTP/1.1 (uvicorn's h11 server passes
``BREW`` or a random string on), so each other one is counted as ``OTHER``: a label per method a client
makes up would grow the metrics without bound."""


def method_label(method: str) -> str:
    return method if method in METHOD_LABELS else "OTHER"


class RequestLogging:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id")
        current = given if given and _SAFE_REQUEST_ID.match(given) else uuid.uuid4().hex
        token = request_id.set(current)
        started = time.perf_counter()
        status: int | None = None
        left_unanswered = False

        async def receive_noting_departure() -> Message:
            nonlocal left_unanswered
            message = await receive()
            if message["type"] == "http.disconnect" and status is None:
                left_unanswered = True
            return message

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", current.encode())]
            await send(message)

        try:
            await self.app(scope, receive_noting_departure, send_with_id)
        finally:
            if left_unanswered:
                status = CLIENT_CLOSED_REQUEST
            elif status is None:
                status = 500  # nothing answered: the application failed past every handler
            elapsed = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", "unmatched")
            method = method_label(scope["method"])
            REQUESTS.labels(method, route, str(status)).inc()
            LATENCY.labels(method, route).observe(elapsed)
            log.info(
                "request",
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "ms": round(elapsed * 1000, 2),
                },
            )
            request_id.reset(token)


class HeaderLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int, max_count: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_count = max_count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            size = sum(len(name) + len(value) for name, value in headers)
            refusal = None
            if len(headers) > self.max_count:
                refusal = f"headers: {len(headers)} headers; the limit is {self.max_count}"
            elif size > self.max_bytes:
                refusal = f"headers: {size} bytes of headers; the limit is {self.max_bytes}"
            if refusal is not None:
                await problem(RequestHeadersTooLarge(refusal, field="headers"), Request(scope))(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int, idle_seconds: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.idle_seconds = idle_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        encoding = (_header(scope, b"content-encoding") or "").strip().lower() or "identity"
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            refusal: ProjectorError | None = TooLarge(
                f"body: the request body exceeds {self.max_bytes} bytes", field="body"
            )
        elif encoding != "identity":
            detail = f"Content-Encoding: a body is taken as it is sent, not {encoding}"
            refusal = UnsupportedMediaType(detail, field="Content-Encoding")
        else:
            refusal = None
        if refusal is not None:
            response = problem(refusal, Request(scope))
            if refusal.status == 415:
                response.headers["Accept-Encoding"] = "identity"
            await response(scope, receive, send)
            return
        received = 0
        complete = False

        async def counting_receive() -> Message:
            # Raised inside the route's body read, where the framework turns an HTTPException into
            # our problem+json 413 or 408 (any other exception there would become a 400). Once the body is
            # complete, a wait is for the client to leave (a streamed answer listens for it): no limit then.
            nonlocal received, complete
            if complete:
                return await receive()
            try:
                with fail_after(self.idle_seconds):
                    message = await receive()
            except TimeoutError:
                raise HTTPException(
                    408, f"body: no part of the request body arrived for {self.idle_seconds:g} s"
                ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if received > self.max_bytes:
                    raise HTTPException(413, f"body: the request body exceeds {self.max_bytes} bytes")
            return message

        await self.app(scope, counting_receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class HeadAsGet:
    """``HEAD`` on every ``GET`` route, which HTTP asks of every server (RFC 9110, 9.3.2): FastAPI's routes
    answer only the methods they declare, so ``curl -I`` or a load balancer's ``HEAD /healthz`` got 405. The
    route runs as a ``GET`` and its status and headers go out as they are (``Content-Length`` and ``ETag``
    included), without its body; a streamed answer is stopped once its head is sent, as an event stream never
    ends by itself. Innermost: the other middleware see the ``HEAD`` the server answers, and after the route
    the scope holds what the router put in the copy it was given (the route, for the metrics)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        as_get = {**scope, "method": "GET"}
        finished = False
        with CancelScope() as answered:

            async def send_head(message: Message) -> None:
                nonlocal finished
                if finished:
                    return
                if message["type"] == "http.response.body":
                    finished = True
                    answered.cancel()
                    return
                await send(message)

            try:
                await self.app(as_get, receive, send_head)
            finally:
                scope.update((key, value) for key, value in as_get.items() if key != "method")
        if finished:
            # Only once the route has ended: a client that asks again at once finds what the stream held (its
            # place among the caller's streams) given back.
            await send({"type": "http.response.body", "body": b"", "more_body": False})
