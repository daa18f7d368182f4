"""Turns messages to append into messages ready to store, enforcing what the wire types cannot say: size
limits, values PostgreSQL can store exactly, ids unique within the batch, and who may write reserved kinds.
A message whose text holds a NUL or an unpaired surrogate is stored as sent and marked (``unusual_text``)."""

import os
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.engine.kinds import Role
from app.engine.persisted import Content
from app.engine.promotion import infer_kind
from app.engine.search_text import message_facts
from app.engine.tokens import estimate_tokens
from app.errors import Forbidden, InvalidInput, TooLarge
from app.services.caller import Caller
from app.settings import Settings
from app.store.messages import NewMessage
from app.store.storable import Measured, measure, refuse_unaddressable


@dataclass(frozen=True, slots=True)
class MessageInput:
    """One message as a caller gave it, its parts already plain dicts; ids and times may be left to us."""

    role: Role
    content: Content
    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    created_at: datetime | None = None


def new_message_id() -> str:
    return new_message_ids(1)[0]


def new_message_ids(count: int) -> list[str]:
    """``count`` fresh ids, random as ``uuid.uuid4``'s, from one draw of ``os.urandom``.

    A batch draws its ids at once because ``os.urandom`` lets go of the interpreter lock and takes it straight
    back. Called once a message in a worker thread, those quick hand-overs kept the event-loop thread from the
    lock for the whole batch (each one seems to restart its wait for a forced switch, leaving it a race it
    mostly loses): ``/healthz`` waited 140-250 ms through a 1,000-message batch, 19-27 ms after."""
    drawn = os.urandom(16 * count)
    return [f"msg_{uuid.UUID(bytes=drawn[at : at + 16], version=4).hex}" for at in range(0, len(drawn), 16)]


def prepare_batch(inputs: list[MessageInput], caller: Caller, settings: Settings, now: datetime) -> list[NewMessage]:
    if len(inputs) > settings.max_batch_messages:
        raise TooLarge(
            f"messages: {len(inputs)} messages in one append; the limit is {settings.max_batch_messages}",
            field="messages",
        )
    batch: list[NewMessage] = []
    first_index_of: dict[str, int] = {}
    fresh_ids = iter(new_message_ids(sum(1 for message in inputs if not message.id)))
    for index, message in enumerate(inputs):
        where = f"messages[{index}]"
        content = message.content
        if not isinstance(content, str) and len(content) > settings.max_parts_per_message:
            raise TooLarge(
                f"{where}.content: {len(content)} parts; the limit is {settings.max_parts_per_message}",
                field=f"{where}.content",
            )
        measured_content = measure(content, f"{where}.content", settings.max_json_depth)
        measured_metadata = _check_metadata(message.metadata, where, settings)
        size = measured_content.size + measured_metadata.size
        if size > settings.max_message_bytes:
            raise TooLarge(f"{where}: {size} bytes; the limit is {settings.max_message_bytes}", field=where)
        kind, _ = infer_kind(message.role, content, message.metadata)
        if not caller.may_write_kind(kind):
            raise Forbidden(f"{where}.metadata.runtimeKind: only a runtime key may write {kind}", field=where)
        caller.require_may_set(message.metadata, f"{where}.metadata")
        refuse_unaddressable(message.id, f"{where}.id")
        refuse_unaddressable(message.run_id, f"{where}.runId")
        message_id = message.id or next(fresh_ids)
        candidate = NewMessage(
            id=message_id,
            role=message.role,
            kind=kind,
            content=content,
            metadata=message.metadata,
            run_id=message.run_id,
            created_at=message.created_at or now,
            token_estimate=estimate_tokens(content),
            facts=message_facts(kind, content, message.metadata),
            search_config=settings.search_config,
            unusual_text=measured_content.unusual_text or measured_metadata.unusual_text,
        )
        if message_id in first_index_of:
            if not candidate.same_fact_as(batch[first_index_of[message_id]]):
                raise InvalidInput(
                    f"{where}.id: '{message_id}' is also messages[{first_index_of[message_id]}] with other content",
                    field=f"{where}.id",
                )
        else:
            first_index_of[message_id] = index
        batch.append(candidate)
    return batch


def _check_metadata(metadata: dict[str, Any], where: str, settings: Settings) -> Measured:
    measured = measure(metadata, f"{where}.metadata", settings.max_json_depth)
    if measured.size > settings.max_metadata_bytes:
        raise TooLarge(
            f"{where}.metadata: {measured.size} bytes; the limit is {settings.max_metadata_bytes}",
            field=f"{where}.metadata",
        )
    return measured
