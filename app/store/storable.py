"""What PostgreSQL can store and every response can carry: ``jsonb`` and ``text`` refuse NUL characters,
unpaired UTF-16 surrogates cannot be encoded, JSON integers must fit in 64 bits, and a value must not nest
deeper than the depth limit. Input breaking these is refused here, naming the field, instead of failing the
whole write with a database error (a 500), being silently altered, or being stored and then failing every
response that holds it.

Every write passes here: message content and metadata, amendments, sessions and runs. The depth limit keeps
room for the levels a response wraps around a stored value (a message in a page, a tool schema in a provider
payload), below the 254 levels the encoder writes; ``Settings.max_json_depth`` is capped to keep that true.
"""

import re
from typing import Any

import orjson

from app.errors import InvalidInput

INT64 = range(-(2**63), 2**63)


_STRING = re.compile(rb'"[^"]*"')
_BRACKETS_ONLY = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")


def storable_size(value: Any, field: str, max_depth: int) -> int:
    """The encoded size of ``value``; raises ``InvalidInput`` naming the first unstorable field. With an empty
    ``field``, ``value`` maps field names to values, and each is held to the limits on its own."""
    try:
        encoded = orjson.dumps(value)
    except TypeError:
        encoded = b"\\u0000"  # let the walk below find and name the cause
    if b"\\u0000" in encoded:
        path, reason = _first_unstorable(value, field) or (field, "holds a value that cannot be stored")
        raise InvalidInput(f"{path}: {reason}", field=path)
    if nesting_exceeds(encoded, max_depth if field else max_depth + 1):
        path = field or next(key for key, item in value.items() if nesting_exceeds(orjson.dumps(item), max_depth))
        raise InvalidInput(f"{path}: nests deeper than {max_depth} levels of objects and arrays", field=path)
    return len(encoded)


def nesting_exceeds(encoded: bytes, limit: int) -> bool:
    """Whether a JSON document (as orjson writes it) nests objects and arrays more than ``limit`` deep.

    Linear and in C: escaped quotes and backslashes go, then strings (so brackets inside text do not count),
    then all but the brackets; each round then removes the innermost pairs, one level at a time, and at most
    ``limit`` rounds run."""
    unescaped = encoded.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = _STRING.sub(b"", unescaped).translate(_BRACKETS_ONLY, _NOT_BRACKETS)
    for _ in range(limit):
        if not structure:
            return False
        structure = structure.replace(b"[]", b"")
    return bool(structure)


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
