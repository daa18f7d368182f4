"""Turns messages to append into messages ready to store, enforcing what the wire types cannot say: size
limits, text PostgreSQL can store, ids unique within the batch, and who may write reserved kinds."""

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
from app.store.storable import storable_size


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
    return f"msg_{uuid.uuid4().hex}"


def prepare_batch(inputs: list[MessageInput], caller: Caller, settings: Settings, now: datetime) -> list[NewMessage]:
    if len(inputs) > settings.max_batch_messages:
        raise TooLarge(
            f"messages: {len(inputs)} messages in one append; the limit is {settings.max_batch_messages}",
            field="messages",
        )
    batch: list[NewMessage] = []
    first_index_of: dict[str, int] = {}
    for index, message in enumerate(inputs):
        where = f"messages[{index}]"
        content = message.content
        if not isinstance(content, str) and len(content) > settings.max_parts_per_message:
            raise TooLarge(
                f"{where}.content: {len(content)} parts; the limit is {settings.max_parts_per_message}",
                field=f"{where}.content",
            )
        size = storable_size(content, f"{where}.content", settings.max_json_depth) + _check_metadata(
            message.metadata, where, settings
        )
        if size > settings.max_message_bytes:
            raise TooLarge(f"{where}: {size} bytes; the limit is {settings.max_message_bytes}", field=where)
        kind, _ = infer_kind(message.role, content, message.metadata)
        if not caller.may_write_kind(kind):
            raise Forbidden(f"{where}.metadata.runtimeKind: only a runtime key may write {kind}", field=where)
        storable_size(message.id or "", f"{where}.id", settings.max_json_depth)
        storable_size(message.run_id or "", f"{where}.runId", settings.max_json_depth)
        message_id = message.id or new_message_id()
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


def _check_metadata(metadata: dict[str, Any], where: str, settings: Settings) -> int:
    size = storable_size(metadata, f"{where}.metadata", settings.max_json_depth)
    if size > settings.max_metadata_bytes:
        raise TooLarge(
            f"{where}.metadata: {size} bytes; the limit is {settings.max_metadata_bytes}", field=f"{where}.metadata"
        )
    return size
