"""``IdempotencyRepository``: claims on ``Idempotency-Key`` values and the responses kept for them, per tenant.

A key moves through two states in one row: *in flight* (``status_code`` NULL, ``expires_at`` is the lease end)
and *done* (the first response's status, headers and exact body bytes, ``expires_at`` is the replay horizon).
An expired row of either state is treated as absent and may be claimed afresh, so a process that died mid-
request does not hold a key forever. Times come from the database clock, so replicas agree on expiry.

This module never decides HTTP semantics (that is ``app.api.idempotency``) and never stores a request body:
only its fingerprint.
"""

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import Interval, delete, func, literal, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store.tables import idempotency_keys


@dataclass(frozen=True, slots=True)
class KeptResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass(frozen=True, slots=True)
class Claimed:
    """This attempt holds the key and should run the request; ``claim`` proves it when keeping the result."""

    claim: str


@dataclass(frozen=True, slots=True)
class Replay:
    response: KeptResponse
    role: str | None
    """The role of the key whose request ran; None for rows kept before roles were recorded."""


@dataclass(frozen=True, slots=True)
class InFlight:
    pass


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The key was first used for another request (method, path or body differ)."""


ClaimOutcome = Claimed | Replay | InFlight | Mismatch


def _seconds(value: int) -> object:
    return literal(timedelta(seconds=value), Interval())


class IdempotencyRepository:
    def __init__(self, connection: AsyncConnection, tenant_id: str) -> None:
        self._db = connection
        self._tenant = tenant_id

    async def claim(self, key: str, fingerprint: str, lease_seconds: int, role: str) -> ClaimOutcome:
        """Takes the key for a new request (made by a key of ``role``), or says what the earlier request with
        this key left."""
        token = uuid.uuid4().hex
        table = idempotency_keys
        new_claim = pg_insert(table).values(
            tenant_id=self._tenant,
            key=key,
            fingerprint=fingerprint,
            claim=token,
            role=role,
            expires_at=func.now() + _seconds(lease_seconds),
        )
        # An expired row (done or abandoned in flight) counts as absent: take it over in the same statement.
        statement = new_claim.on_conflict_do_update(
            index_elements=[table.c.tenant_id, table.c.key],
            set_={
                "fingerprint": new_claim.excluded.fingerprint,
                "claim": new_claim.excluded.claim,
                "role": new_claim.excluded.role,
                "status_code": None,
                "response_headers": None,
                "response_body": None,
                "created_at": func.now(),
                "expires_at": new_claim.excluded.expires_at,
            },
            where=table.c.expires_at <= func.now(),
        ).returning(table.c.claim)
        if (await self._db.execute(statement)).scalar_one_or_none() == token:
            return Claimed(token)
        row = (
            (
                await self._db.execute(
                    select(
                        table.c.fingerprint,
                        table.c.role,
                        table.c.status_code,
                        table.c.response_headers,
                        table.c.response_body,
                    )
                    .where(table.c.tenant_id == self._tenant, table.c.key == key)
                    .with_for_update()
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            # Purged between the two statements: it had expired, so the caller may simply try again.
            return InFlight()
        if row["fingerprint"] != fingerprint:
            return Mismatch()
        if row["status_code"] is None:
            return InFlight()
        headers = [(name, value) for name, value in row["response_headers"]]
        kept = KeptResponse(status=row["status_code"], headers=headers, body=bytes(row["response_body"]))
        return Replay(kept, role=row["role"])

    async def live_keys(self, at_most: int) -> int:
        """How many unexpired keys the tenant holds, counted up to ``at_most`` (the count stops there)."""
        table = idempotency_keys
        live = (
            select(table.c.key).where(table.c.tenant_id == self._tenant, table.c.expires_at > func.now()).limit(at_most)
        )
        return int((await self._db.execute(select(func.count()).select_from(live.subquery()))).scalar_one())

    async def keep(self, key: str, claim: str, response: KeptResponse, ttl_seconds: int) -> bool:
        """Stores the first response for replay; False when this attempt no longer holds the key."""
        statement = (
            update(idempotency_keys)
            .where(
                idempotency_keys.c.tenant_id == self._tenant,
                idempotency_keys.c.key == key,
                idempotency_keys.c.claim == claim,
            )
            .values(
                status_code=response.status,
                response_headers=[list(pair) for pair in response.headers],
                response_body=response.body,
                expires_at=func.now() + _seconds(ttl_seconds),
            )
        )
        return (await self._db.execute(statement)).rowcount == 1

    async def extend(self, key: str, claim: str, lease_seconds: int) -> None:
        """Renews an in-flight claim's lease while its request is still running."""
        await self._db.execute(
            update(idempotency_keys)
            .where(
                idempotency_keys.c.tenant_id == self._tenant,
                idempotency_keys.c.key == key,
                idempotency_keys.c.claim == claim,
                idempotency_keys.c.status_code.is_(None),
            )
            .values(expires_at=func.now() + _seconds(lease_seconds))
        )

    async def release(self, key: str, claim: str) -> None:
        """Gives the key back (the request was refused before it took effect), so a retry runs afresh."""
        await self._db.execute(
            delete(idempotency_keys).where(
                idempotency_keys.c.tenant_id == self._tenant,
                idempotency_keys.c.key == key,
                idempotency_keys.c.claim == claim,
            )
        )


async def purge_expired_keys(connection: AsyncConnection, limit: int = 1_000) -> int:
    """Deletes up to ``limit`` expired rows of every tenant (maintenance, not a request's query). Rows another
    replica is purging at the same moment are skipped rather than waited for."""
    table = idempotency_keys
    expired = (
        select(table.c.tenant_id, table.c.key)
        .where(table.c.expires_at <= func.now())
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    statement = delete(table).where(tuple_(table.c.tenant_id, table.c.key).in_(expired))
    result = await connection.execute(statement)
    return result.rowcount
