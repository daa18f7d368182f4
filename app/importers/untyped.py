"""Reading JSON whose shape a source does not promise: a field that should be an object may be missing,
``null`` or something else in a real file, and an importer reads it as empty instead of failing."""

from typing import Any


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
