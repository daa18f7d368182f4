"""Turns a validated append request into messages ready to store, enforcing what types cannot say:
size limits, text PostgreSQL can store, ids unique within the batch, and who may write reserved kinds."""

import uuid
from datetime import datetime
from typing import Any

import orjson

from app.api.auth import Principal
from app.api.schemas import AppendMessagesRequest
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
        size = _storable_size(content, f"{field}.content") + _check_metadata(message.metadata, field, settings)
        if size > settings.max_message_bytes:
            raise TooLarge(f"{field}: {size} bytes; the limit is {settings.max_message_bytes}", field=field)
        kind, _ = infer_kind(message.role, content, message.metadata)
        if not principal.may_write_kind(kind):
            raise Forbidden(f"{field}.metadata.runtimeKind: only a runtime key may write {kind}", field=field)
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
    size = _storable_size(metadata, f"{field}.metadata")
    if size > settings.max_metadata_bytes:
        raise TooLarge(
            f"{field}.metadata: {size} bytes; the limit is {settings.max_metadata_bytes}", field=f"{field}.metadata"
        )
    return size


def _storable_size(value: Any, field: str) -> int:
    """PostgreSQL's jsonb refuses NUL characters and unpaired UTF-16 surrogates; say so here, naming the
    field, instead of failing the whole write with a database error."""
    try:
        encoded = orjson.dumps(value)
    except TypeError as error:
        raise InvalidInput(
            f"{_locate_bad_text(value, field)}: text holds an unpaired UTF-16 surrogate",
            field=_locate_bad_text(value, field),
        ) from error
    if b"\\u0000" in encoded:
        located = _locate_bad_text(value, field)
        raise InvalidInput(f"{located}: text holds a NUL character (\\u0000), which cannot be stored", field=located)
    return len(encoded)


def _locate_bad_text(value: Any, path: str) -> str:
    """The path of the first string holding NUL or a lone surrogate; only walked on the error path."""
    if isinstance(value, str):
        return path if "\x00" in value or any(0xD800 <= ord(ch) <= 0xDFFF for ch in value) else ""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _locate_bad_text(key, path):
            return f"{path}.{key}"
        found = _locate_bad_text(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}")
        if found:
            return found
    return ""
