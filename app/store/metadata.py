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
