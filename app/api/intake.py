"""Turns a validated append request into messages ready to store, enforcing what types cannot say:
size limits, text PostgreSQL can store, ids unique within the batch, and who may write reserved kinds."""

import uuid
from datetime import datetime
from typing import Any

from app.api.auth import Principal
from app.api.schemas import AppendMessagesRequest
from app.api.storable import storable_size
from app.engine.promotion import infer_kind
from app.engine.tokens import estimate_tokens
from app.errors import Forbidden, InvalidInput, TooLarge
from app.settings import Settings
from app.store.messages import NewMessage


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def prepare_batch(
    request: AppendMessagesRequest, principal: Principal, settings: Settings, now: datetime
) -> list[NewMessage]:
    if len(request.messages) > settings.max_batch_messages:
        raise TooLarge(
            f"messages: {len(request.messages)} messages in one append; the limit is {settings.max_batch_messages}",
            field="messages",
        )
    batch: list[NewMessage] = []
    first_index_of: dict[str, int] = {}
    for index, message in enumerate(request.messages):
        field = f"messages[{index}]"
        content: str | list[dict[str, Any]] = (
            message.content
            if isinstance(message.content, str)
            else [part.model_dump(mode="json", exclude_unset=True) for part in message.content]
        )
        if not isinstance(content, str) and len(content) > settings.max_parts_per_message:
            raise TooLarge(
                f"{field}.content: {len(content)} parts; the limit is {settings.max_parts_per_message}",
                field=f"{field}.content",
            )
        size = storable_size(content, f"{field}.content", settings.max_json_depth) + _check_metadata(
            message.metadata, field, settings
        )
        if size > settings.max_message_bytes:
            raise TooLarge(f"{field}: {size} bytes; the limit is {settings.max_message_bytes}", field=field)
        kind, _ = infer_kind(message.role, content, message.metadata)
        if not principal.may_write_kind(kind):
            raise Forbidden(f"{field}.metadata.runtimeKind: only a runtime key may write {kind}", field=field)
        storable_size(message.id or "", f"{field}.id", settings.max_json_depth)
        storable_size(message.run_id or "", f"{field}.runId", settings.max_json_depth)
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
        )
        if message_id in first_index_of:
            earlier = batch[first_index_of[message_id]]
            if not candidate.same_fact_as({"role": earlier.role, "content": earlier.content, "run_id": earlier.run_id}):
                raise InvalidInput(
                    f"{field}.id: '{message_id}' is also messages[{first_index_of[message_id]}] with other content",
                    field=f"{field}.id",
                )
        else:
            first_index_of[message_id] = index
        batch.append(candidate)
    return batch


def _check_metadata(metadata: dict[str, Any], field: str, settings: Settings) -> int:
    size = storable_size(metadata, f"{field}.metadata", settings.max_json_depth)
    if size > settings.max_metadata_bytes:
        raise TooLarge(
            f"{field}.metadata: {size} bytes; the limit is {settings.max_metadata_bytes}", field=f"{field}.metadata"
        )
    return size
