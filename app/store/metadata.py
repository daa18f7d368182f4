"""The one way metadata is amended: a shallow merge in SQL, where a key given as null is removed."""

from typing import Any

from sqlalchemy import ColumnElement, Text, bindparam
from sqlalchemy.dialects.postgresql import ARRAY, JSONB


def merged_metadata(column: ColumnElement[Any], changes: dict[str, Any]) -> ColumnElement[Any]:
    kept = {key: value for key, value in changes.items() if value is not None}
    removed = [key for key, value in changes.items() if value is None]
    merged = column.op("||", return_type=JSONB)(bindparam("kept_metadata", kept, type_=JSONB))
    if removed:
        merged = merged.op("-", return_type=JSONB)(bindparam("removed_metadata", removed, type_=ARRAY(Text)))
    return merged


def merged_in_python(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """What ``merged_metadata`` will store, worked out before the write, so its size can be checked."""
    merged = {**current, **{key: value for key, value in changes.items() if value is not None}}
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
    return merged
