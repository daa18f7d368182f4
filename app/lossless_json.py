"""JSON for any string a client can send: orjson first, the standard library for what orjson refuses.

JSON can spell an unpaired UTF-16 surrogate (``"\\ud800"``), and Python's reader turns it into a string that
holds one; orjson refuses such a string both ways (it only speaks valid UTF-8). Such text is rare (a
JavaScript runtime cutting output in the middle of an emoji), so every value takes orjson's path, and only
the one orjson refuses pays for the standard library's: its writer spells each lone surrogate as the same
``\\uXXXX`` escape it arrived as, and its reader reads it back. A NUL needs no detour: orjson writes and
reads ``\\u0000`` itself.

What the fallback writes is the same JSON orjson would write, down to the separators, except that it is
ASCII (``ensure_ascii``: the only way the standard library spells a lone surrogate as an escape) and that
a value orjson knows natively but JSON does not (a ``datetime``, a dataclass) goes through ``_default``.
"""

import dataclasses
import datetime
import enum
import json
import re
from collections.abc import Mapping
from typing import Any

import orjson

_SURROGATE = re.compile("[\ud800-\udfff]")
"""In a Python string every surrogate code point stands alone: a pair read from JSON is one character."""


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return dumps_slowly(value)


def dumps_slowly(value: Any) -> bytes:
    """The standard library's JSON of ``value``, for a value holding an unpaired surrogate; raises
    ``ValueError`` or ``TypeError`` for what no JSON can hold."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=_default).encode()


def loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def same_json(left: Any, right: Any) -> bool:
    """Whether two decoded JSON values are the same JSON: Python's ``==`` holds ``true``, ``1`` and ``1.0``
    equal, and ``0.0`` and ``-0.0``, which JSON spells apart. Objects compare by their members, whatever
    their order."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_json(value, right[key]) for key, value in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same_json, left, right))
    if isinstance(left, float):
        return repr(left) == repr(right)
    return bool(left == right)


def holds_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _default(value: Any) -> Any:
    """What orjson writes natively and the standard library does not."""
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    if isinstance(value, frozenset | set):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def same_fields(record: object, fields: Mapping[str, Any]) -> bool:
    """Whether ``record`` holds each of ``fields`` (named as its attributes), compared as JSON."""
    return all(same_json(getattr(record, name), value) for name, value in fields.items())
