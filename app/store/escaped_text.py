"""How text that PostgreSQL's ``jsonb`` and ``text`` cannot hold is kept in them, exactly.

``jsonb`` and ``text`` refuse NUL characters, and no UTF-8 column can hold an unpaired UTF-16 surrogate.
Message content lives in a ``json`` column, which keeps its JSON text as written (escapes and all), so it
needs nothing here. The columns that must stay ``jsonb`` (metadata: amendments merge it in SQL, pruning
marks ``compactedAt`` in SQL, queries read its keys) and the ``text`` columns of sessions and runs keep such
a string escaped instead: ``ESCAPE_MARK`` followed by the string as a JSON string body in ASCII
(``"a\\u0000b"`` without its quotes). A string that already starts with the mark is escaped too, so every
stored string reads back as exactly one original: no mark, as it is; a mark, the JSON it spells. Keys are
escaped like values.

A string needing this is rare, and the escape is decided per message at write time: the message is marked
(``unusual_text``) and only marked messages are walked on read. Sessions and runs are read one row at a
time, so their few values are checked on every read instead (one encode in C, a walk only on a hit).
"""

import json
import re
from typing import Any, NamedTuple, TypeVar

import orjson

ESCAPE_MARK = "\ufdd0"
"""A Unicode noncharacter: valid in UTF-8 and in ``jsonb``, and never meant to appear in interchanged text."""
_MARK_BYTES = ESCAPE_MARK.encode()
_Record = TypeVar("_Record", bound=NamedTuple)
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def needs_escape(text: str) -> bool:
    if text.startswith(ESCAPE_MARK):
        return True
    if text.isascii() and "\x00" not in text:
        return False
    return _UNSTORABLE.search(text) is not None


def escape_text(text: str) -> str:
    return ESCAPE_MARK + json.dumps(text)[1:-1] if needs_escape(text) else text


def unescape_text(text: str) -> str:
    return str(json.loads('"' + text[1:] + '"')) if text.startswith(ESCAPE_MARK) else text


def escape_strings(value: Any) -> Any:
    """``value`` with every string (and key) that ``jsonb`` cannot hold, or that starts with the mark,
    escaped."""
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, dict):
        return {escape_text(key): escape_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [escape_strings(item) for item in value]
    return value


def unescape_strings(value: Any) -> Any:
    if isinstance(value, str):
        return unescape_text(value)
    if isinstance(value, dict):
        return {unescape_text(key): unescape_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unescape_strings(item) for item in value]
    return value


def escape_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A row's values to write, each escaped (a session's or a run's: a handful of values)."""
    return {name: escape_strings(value) for name, value in fields.items()}


def unescape_record(record: _Record) -> _Record:
    """A session or run read back, with every escaped value restored; untouched when none is escaped."""
    changed = {name: unescape_strings(value) for name, value in record._asdict().items() if holds_escapes(value)}
    return record._replace(**changed) if changed else record


def holds_escapes(value: Any) -> bool:
    """Whether a value read back may hold an escaped string: one encode in C; most values have no mark."""
    if isinstance(value, str):
        return value.startswith(ESCAPE_MARK)
    return isinstance(value, dict | list) and _MARK_BYTES in orjson.dumps(value)
