"""When a record says something happened: ISO 8601 strings (Claude Code, pi, metadata such as ``compactedAt``)
or epoch milliseconds (opencode).

A missing or unreadable time is ``None`` (an import then uses the time of the append; a rule that compares
times leaves the record out), never an error: the time is a fact about the message, not what identifies it.
"""

from datetime import UTC, datetime
from typing import Any


def from_iso(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def from_epoch_ms(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def iso_from_epoch_ms(value: Any) -> str | None:
    moment = from_epoch_ms(value)
    return moment.isoformat() if moment is not None else None
