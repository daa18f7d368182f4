"""The size limits every write is held to, appends and amendments alike: what a message, a session or a run
holds after the write (an amendment's merged result, not just its changes) stays within the settings, so no
series of small writes grows a row past what one write may store. A refusal is a 413 naming the field."""

from typing import Any

from app.errors import TooLarge
from app.settings import Settings
from app.store.storable import measure

METADATA_FIELDS = frozenset({"metadata"})


def refuse_larger(size: int, limit: int, field: str, what: str = "") -> None:
    if size > limit:
        raise TooLarge(f"{field}: {what or ''}{size} bytes; the limit is {limit}", field=field)


def check_row_fields(fields: dict[str, Any], settings: Settings) -> int:
    """A session's or a run's fields (keyed by their wire names): ``metadata`` within the metadata limit,
    every other field within the message limit, and all of them together within the message limit too.
    Returns their total size."""
    total = 0
    for name, value in fields.items():
        size = measure(value, name, settings.max_json_depth).size
        limit = settings.max_metadata_bytes if name in METADATA_FIELDS else settings.max_message_bytes
        refuse_larger(size, limit, name)
        total += size
    refuse_larger(total, settings.max_message_bytes, "body", "the fields hold ")
    return total


def check_merged_metadata(merged: dict[str, Any], field: str, settings: Settings, *, other_bytes: int = 0) -> None:
    """An amendment's merged metadata within the metadata limit, and with ``other_bytes`` (a message's
    content) within the message limit."""
    size = measure(merged, field, settings.max_json_depth).size
    refuse_larger(size, settings.max_metadata_bytes, field, "the merged metadata would be ")
    refuse_larger(size + other_bytes, settings.max_message_bytes, field, "the message would be ")
