"""``Idempotency-Key`` on every POST, with Stripe's semantics, as a pure ASGI middleware so that it covers
routes it has never seen.

The first response to a (tenant, key) is kept (24 h by default) and replayed byte for byte, with
``Idempotent-Replayed: true``, to every retry carrying the same key and the same request (fingerprint of
method, path with query, and body). The same key with another request is 422; a retry while the first is
still running is 409. Responses that mean "refused, nothing happened" (most 4xx) or "try again" (502-504, and
any answer with ``Retry-After``, such as a 409 because another compaction of the session was running) are
not kept, so a corrected or later retry runs afresh: every route writes in one transaction, so such a
response has written nothing. Successes, other 409 conflicts and the 500s the error handlers render are kept,
as Stripe keeps them; a request that crashed past every handler is released.

Only requests that write can be retried into a double write, so only they are kept: a route marked
``WRITES_NOTHING`` (``POST /chat`` builds a payload and stores nothing) passes through untouched, and the
key is neither claimed nor kept. A kept response replays only to a key of the same role or a stronger one
(a reader cannot read a runtime's answer through its key: 403). What is kept is bounded: a response larger
than ``max_response_bytes`` is not kept whole; its retries get a 409 saying the request ran and with what
status (the request is still never run twice); a tenant holding ``max_keys_per_tenant`` live keys gets 429
for a new key until some expire. A body cut short by a client that went away is not run.

The key is claimed in its own committed transaction before the route runs (that is what lets a concurrent
duplicate see it in flight), and its lease is renewed while the request runs. A process that dies, or loses
the database, before keeping its response leaves the key in flight until the lease ends (30 s by default);
a retry after that runs again, which appends make harmless (message ids dedupe them).

This middleware must never keep or log a request body, and never a response of a request it did not claim.
"""

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from typing import Any, ClassVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.auth import PRINCIPAL_SCOPE_KEY, ROLE_RANK, AccessRole, Principal
from app.api.problems import http_problem, problem
from app.api.responses import ProblemResponse
from app.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidInput,
    ProjectorError,
    ServiceUnavailable,
    TooManyRequests,
)
from app.store.database import Database
from app.store.idempotency import (
    Claimed,
    ClaimOutcome,
    IdempotencyRepository,
    InFlight,
    KeptResponse,
    Mismatch,
    Replay,
    purge_expired_keys,
)

log = logging.getLogger("projector.idempotency")

HEADER = b"idempotency-key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
METHODS = frozenset({"POST"})
KEPT_ERROR_STATUSES = frozenset({409, 500})
"""Besides successes: outcomes of running the request, which a retry with the same key should see again."""
PURGE_INTERVAL_SECONDS = 60.0

WRITES_NOTHING: dict[str, object] = {"x-writes-nothing": True}
"""``openapi_extra`` of a POST route that stores nothing: its requests are not kept under their key, and the
API document does not offer ``Idempotency-Key`` on it."""


class InvalidIdempotencyKey(BadRequest):
    slug, title = "idempotency-key-invalid", "Invalid Idempotency-Key"


class IdempotencyKeyReused(InvalidInput):
    slug, title = "idempotency-key-reused", "Idempotency-Key reused for another request"


class IdempotencyKeyInFlight(Conflict):
    slug, title = "idempotency-key-in-flight", "A request with this Idempotency-Key is still running"


class IdempotentResponseNotKept(Conflict):
    slug, title = "idempotent-response-not-kept", "The request with this Idempotency-Key ran; its response was not kept"


class IdempotencyKeysExhausted(TooManyRequests):
    slug, title = "idempotency-keys-exhausted", "Too many live Idempotency-Keys"


class ClientDisconnected(Exception):
    """The client went away before its whole body arrived."""


def declare_idempotency_key(openapi: dict[str, Any]) -> None:
    """Adds the optional ``Idempotency-Key`` header to every POST operation of an OpenAPI document, so clients
    (and schema-driven tools) learn that retries can be made safe."""
    header = {
        "name": "Idempotency-Key",
        "in": "header",
        "required": False,
        "description": "Makes a retry safe: the first response is replayed for 24 h (per tenant and key).",
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH},
    }
    for operations in openapi.get("paths", {}).values():
        post = operations.get("post")
        if post is None or post.get("x-writes-nothing"):
            continue
        if not any(p.get("name") == header["name"] for p in post.get("parameters", [])):
            post.setdefault("parameters", []).append(dict(header))


def is_kept(response: KeptResponse) -> bool:
    """Not an answer that says to come back later (``Retry-After``): a 409 because another request was running
    at the same time records nothing the request did, and kept, it would refuse every retry of the key for
    as long as the key lives."""
    says_wait = any(name.lower() == "retry-after" for name, _ in response.headers)
    return (response.status < 400 or response.status in KEPT_ERROR_STATUSES) and not says_wait


def fingerprint(method: str, path: str, query: bytes, body: bytes) -> str:
    digest = hashlib.sha256()
    for piece in (method.encode(), path.encode(), query, body):
        # Length-prefixed, so no two different requests can concatenate to the same bytes.
        digest.update(len(piece).to_bytes(8, "big"))
        digest.update(piece)
    return digest.hexdigest()


def paths_writing_nothing(openapi: dict[str, Any]) -> list[re.Pattern[str]]:
    """The POST paths the API document marks ``WRITES_NOTHING``, as the router matches them."""
    return [
        compile_path(path)[0]
        for path, operations in openapi.get("paths", {}).items()
        if operations.get("post", {}).get("x-writes-nothing")
    ]


class Idempotency:
    UNAVAILABLE: ClassVar[tuple[type[BaseException], ...]] = (DBAPIError, PoolTimeout, OSError)

    def __init__(
        self,
        app: ASGIApp,
        *,
        ttl_seconds: int,
        lease_seconds: int,
        max_response_bytes: int,
        max_keys_per_tenant: int,
    ) -> None:
        self.app = app
        self.ttl_seconds = ttl_seconds
        self.lease_seconds = lease_seconds
        self.max_response_bytes = max_response_bytes
        self.max_keys_per_tenant = max_keys_per_tenant
        self._next_purge = 0.0
        self._writing_nothing: list[re.Pattern[str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in METHODS:
            await self.app(scope, receive, send)
            return
        raw_key = _header(scope, HEADER)
        principal: Principal | None = scope.get(PRINCIPAL_SCOPE_KEY)
        # No principal: an open path, which needs no key of either kind.
        if raw_key is None or principal is None or self._writes_nothing(scope):
            await self.app(scope, receive, send)
            return
        key = raw_key.strip()
        if not key or len(key) > MAX_KEY_LENGTH:
            await self._answer(
                InvalidIdempotencyKey(
                    f"Idempotency-Key: give 1 to {MAX_KEY_LENGTH} characters", field="Idempotency-Key"
                ),
                scope,
                receive,
                send,
            )
            return
        try:
            body = await _read_body(receive)
        except HTTPException as refused:
            # The body limit's refusal, answered as without a key: 413 too large, or 408 for a body that
            # stopped arriving, which the client may send again.
            await _uncached(http_problem(refused, Request(scope)))(scope, receive, send)
            return
        except ClientDisconnected:
            # Nothing to answer and nothing to run: a retry sends the whole body again.
            log.info("client disconnected before its body was complete")
            return
        print_ = fingerprint(scope["method"], scope["path"], scope.get("query_string", b""), body)
        database: Database = scope["app"].state.database
        try:
            async with database.transaction() as connection:
                repository = IdempotencyRepository(connection, principal.tenant_id)
                outcome: ClaimOutcome | None = await repository.claim(key, print_, self.lease_seconds, principal.role)
                if (
                    isinstance(outcome, Claimed)
                    and await repository.live_keys(self.max_keys_per_tenant + 1) > self.max_keys_per_tenant
                ):
                    await repository.release(key, outcome.claim)
                    outcome = None
        except self.UNAVAILABLE:
            log.warning("idempotency store unavailable")
            await self._answer(ServiceUnavailable("The database is unavailable; retry shortly."), scope, receive, send)
            return
        match outcome:
            case None:
                await self._answer(
                    IdempotencyKeysExhausted(
                        f"Idempotency-Key: this tenant holds {self.max_keys_per_tenant} live keys; "
                        f"they expire {self.ttl_seconds} s after their request",
                        field="Idempotency-Key",
                    ),
                    scope,
                    receive,
                    send,
                    retry_after=True,
                )
            case Replay(role=role) if not principal.may_act_as(_kept_role(role)):
                await self._answer(
                    Forbidden(
                        f"Idempotency-Key: the request with this key was made by a {_kept_role(role)} key; "
                        f"a {principal.role} key cannot replay its response",
                        field="Idempotency-Key",
                    ),
                    scope,
                    receive,
                    send,
                )
            case Replay(response=kept):
                await _send_kept(kept, send)
            case Mismatch():
                await self._answer(
                    IdempotencyKeyReused(
                        "Idempotency-Key: this key was first used with another method, path or body",
                        field="Idempotency-Key",
                    ),
                    scope,
                    receive,
                    send,
                )
            case InFlight():
                await self._answer(
                    IdempotencyKeyInFlight(
                        "Idempotency-Key: the first request with this key has not finished; retry shortly",
                        field="Idempotency-Key",
                    ),
                    scope,
                    receive,
                    send,
                    retry_after=True,
                )
            case Claimed(claim=claim):
                await self._run_claimed(scope, body, receive, send, database, principal.tenant_id, key, claim)

    async def _run_claimed(
        self,
        scope: Scope,
        body: bytes,
        receive: Receive,
        send: Send,
        database: Database,
        tenant_id: str,
        key: str,
        claim: str,
    ) -> None:
        body_sent = False

        async def replay_receive() -> Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            assert start is not None
            response = KeptResponse(
                status=start["status"],
                headers=[(name.decode("latin-1"), value.decode("latin-1")) for name, value in start["headers"]],
                body=b"".join(chunks),
            )
            await self._stop(renewal)
            await self._settle(database, tenant_id, key, claim, self._bounded(response, scope))
            await send(start)
            await send({"type": "http.response.body", "body": response.body, "more_body": False})

        renewal = asyncio.create_task(self._renew(database, tenant_id, key, claim))
        try:
            await self.app(scope, replay_receive, capture)
        except Exception:
            # The error handler outside us answers 500; a request that crashed is not a result to replay.
            await self._stop(renewal)
            await self._forget(database, tenant_id, key, claim)
            raise
        finally:
            await self._stop(renewal)
        await self._maybe_purge(database)

    def _writes_nothing(self, scope: Scope) -> bool:
        if self._writing_nothing is None:
            # Read from the API document once: the routes declare it, and the document is built from them.
            self._writing_nothing = paths_writing_nothing(scope["app"].openapi())
        return any(pattern.match(scope["path"]) for pattern in self._writing_nothing)

    def _bounded(self, response: KeptResponse, scope: Scope) -> KeptResponse:
        """The response itself, or, past the size limit, the 409 its retries get instead."""
        if len(response.body) <= self.max_response_bytes:
            return response
        instead = _rendered(
            IdempotentResponseNotKept(
                f"Idempotency-Key: the request with this key ran and answered {response.status}; its response "
                f"({len(response.body)} bytes) was larger than the {self.max_response_bytes} bytes kept, so it is "
                "not replayed. Read the resource instead.",
                field="Idempotency-Key",
                originalStatus=response.status,
            ),
            scope,
        )
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in instead.raw_headers]
        return KeptResponse(status=instead.status_code, headers=headers, body=bytes(instead.body))

    async def _renew(self, database: Database, tenant_id: str, key: str, claim: str) -> None:
        """Keeps the claim alive for as long as the request runs, so a slow request is never run twice."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                async with database.transaction() as connection:
                    await IdempotencyRepository(connection, tenant_id).extend(key, claim, self.lease_seconds)
            except self.UNAVAILABLE:
                log.warning("could not renew an idempotency lease")

    @staticmethod
    async def _stop(renewal: asyncio.Task[None]) -> None:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewal

    async def _settle(self, database: Database, tenant_id: str, key: str, claim: str, response: KeptResponse) -> None:
        try:
            async with database.transaction() as connection:
                repository = IdempotencyRepository(connection, tenant_id)
                if is_kept(response):
                    await repository.keep(key, claim, response, self.ttl_seconds)
                else:
                    await repository.release(key, claim)
        except self.UNAVAILABLE:
            # The route's own outcome stands and is sent; the key stays in flight until its lease ends.
            log.warning("could not keep an idempotent response", extra={"status": response.status})

    async def _forget(self, database: Database, tenant_id: str, key: str, claim: str) -> None:
        try:
            async with database.transaction() as connection:
                await IdempotencyRepository(connection, tenant_id).release(key, claim)
        except self.UNAVAILABLE:
            log.warning("could not release an idempotency key")

    async def _maybe_purge(self, database: Database) -> None:
        now = time.monotonic()
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_INTERVAL_SECONDS
        try:
            async with database.transaction() as connection:
                purged = await purge_expired_keys(connection)
        except self.UNAVAILABLE:
            return
        if purged:
            log.info("purged expired idempotency keys", extra={"count": purged})

    async def _answer(
        self, error: ProjectorError, scope: Scope, receive: Receive, send: Send, *, retry_after: bool = False
    ) -> None:
        response = _rendered(error, scope)
        if retry_after:
            response.headers["Retry-After"] = "1"
        await response(scope, receive, send)


def _rendered(error: ProjectorError, scope: Scope) -> ProblemResponse:
    return _uncached(problem(error, Request(scope)))


def _uncached(response: ProblemResponse) -> ProblemResponse:
    response.headers["Cache-Control"] = "no-store"
    return response


def _kept_role(role: str | None) -> AccessRole:
    """Rows kept before roles were recorded replay only to a runtime key."""
    return role if role in ROLE_RANK else "runtime"


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _send_kept(kept: KeptResponse, send: Send) -> None:
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in kept.headers]
    headers.append((REPLAYED_HEADER.lower().encode(), b"true"))
    await send({"type": "http.response.start", "status": kept.status, "headers": headers})
    await send({"type": "http.response.body", "body": kept.body, "more_body": False})


def _header(scope: Scope, name: bytes) -> str | None:
    for header, value in scope.get("headers", []):
        if header == name:
            return bytes(value).decode("latin-1")
    return None
