"""What PostgreSQL can store: ``jsonb`` and ``text`` refuse NUL characters, unpaired UTF-16 surrogates
cannot be encoded, and JSON integers must fit in 64 bits. Input breaking these is refused here, naming the
field, instead of failing the whole write with a database error (a 500) or being silently altered.
"""

from typing import Any

import orjson

from app.errors import InvalidInput

INT64 = range(-(2**63), 2**63)


def storable_size(value: Any, field: str) -> int:
    """The encoded size of ``value``; raises ``InvalidInput`` naming the first unstorable field."""
    try:
        encoded = orjson.dumps(value)
    except TypeError:
        encoded = b"\\u0000"  # let the walk below find and name the cause
    if b"\\u0000" in encoded:
        path, reason = _first_unstorable(value, field) or (field, "holds a value that cannot be stored")
        raise InvalidInput(f"{path}: {reason}", field=path)
    return len(encoded)


def _first_unstorable(value: Any, path: str) -> tuple[str, str] | None:
    """Walked only on the error path, so valid input pays for one encode and nothing more."""
    if isinstance(value, str):
        if "\x00" in value:
            return path, "text holds a NUL character (\\u0000), which cannot be stored"
        if any(0xD800 <= ord(character) <= 0xDFFF for character in value):
            return path, "text holds an unpaired UTF-16 surrogate"
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value not in INT64:
        return path, "integer outside the 64-bit range"
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            found = _first_unstorable(key, child) or _first_unstorable(item, child)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_unstorable(item, f"{path}[{index}]")
            if found:
                return found
    return None
