"""The ``Projector-Consistency`` header: read-your-writes when reads are served by replicas.

A response to a request that committed a write carries the commit's WAL position; a request that sends one
back is read from a replica that has replayed past it, or from the primary (``app.store.consistency`` and
``app.store.replicas``). A malformed token is a 400 naming the header. Pure ASGI, like the other middleware.
"""

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem
from app.errors import BadRequest
from app.store import consistency

HEADER = "Projector-Consistency"
_HEADER_KEY = HEADER.lower().encode()


class Consistency:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((bytes(value) for key, value in scope.get("headers", []) if key == _HEADER_KEY), None)
        wanted: int | None = None
        if given is not None:
            try:
                wanted = consistency.parse_position(given.decode("latin-1"))
            except ValueError:
                refusal = BadRequest(
                    f"{HEADER}: not a consistency token (a WAL position as a write answered it)", field=HEADER
                )
                await problem(refusal, Request(scope))(scope, receive, send)
                return

        with consistency.tracking(wanted) as request:

            async def send_with_position(message: Message) -> None:
                if message["type"] == "http.response.start" and request.written is not None:
                    token = consistency.format_position(request.written).encode()
                    message["headers"] = [*message.get("headers", []), (_HEADER_KEY, token)]
                await send(message)

            await self.app(scope, receive, send_with_position)
