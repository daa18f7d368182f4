"""What PostgreSQL can store exactly and every response can carry: JSON integers must fit in 64 bits, and a
value must not nest deeper than the depth limit. Input breaking these is refused here, naming the field,
instead of failing the whole write with a database error (a 500), being silently altered, or being stored
and then failing every response that holds it.

Any string is storable: a NUL character and an unpaired UTF-16 surrogate are kept exactly (message content
in a ``json`` column, other values escaped: ``app.store.escaped_text``). ``measure`` says whether a value
holds one (or a string the escaping marks), so the message carrying it is marked at write time and only
marked messages take the slow paths when read, encoded or sent to a provider.

Every write passes here: message content and metadata, amendments, sessions and runs. The depth limit keeps
room for the levels a response wraps around a stored value (a message in a page, a tool schema in a provider
payload), below the 254 levels the encoder writes; ``Settings.max_json_depth`` is capped to keep that true.
"""

import re
from dataclasses import dataclass
from typing import Any

import orjson

from app import lossless_json
from app.errors import InvalidInput
from app.store.escaped_text import ESCAPE_MARK

INT64 = range(-(2**63), 2**63)

_STRING = re.compile(rb'"[^"]*"')
_BRACKETS_ONLY = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_UNUSUAL_BYTES = (b"\\u0000", ESCAPE_MARK.encode())
"""What orjson writes for a NUL, and the escape mark: a value whose JSON holds neither holds no unusual
string (a literal backslash-u-0000 in text also matches, and only costs its message the slow path)."""


@dataclass(frozen=True, slots=True)
class Measured:
    size: int
    """Bytes of the value's JSON."""
    unusual_text: bool
    """Holds a NUL, an unpaired surrogate or a string starting with the escape mark."""


def measure(value: Any, field: str, max_depth: int) -> Measured:
    """The value's encoded size and whether it holds unusual text; raises ``InvalidInput`` naming the first
    unstorable field. With an empty ``field``, ``value`` maps field names to values, and each is held to the
    limits on its own."""
    try:
        encoded = orjson.dumps(value)
        unusual = any(marker in encoded for marker in _UNUSUAL_BYTES)
    except orjson.JSONEncodeError:
        found = _first_unstorable(value, field)
        if found is not None:
            path, reason = found
            raise InvalidInput(f"{path}: {reason}", field=path) from None
        try:
            encoded, unusual = lossless_json.dumps_slowly(value), True
        except (TypeError, ValueError, RecursionError):
            raise InvalidInput(f"{field or 'body'}: holds a value that cannot be stored", field=field) from None
    if nesting_exceeds(encoded, max_depth if field else max_depth + 1):
        path = field or next(
            key for key, item in value.items() if nesting_exceeds(lossless_json.dumps(item), max_depth)
        )
        raise InvalidInput(f"{path}: nests deeper than {max_depth} levels of objects and arrays", field=path)
    return Measured(len(encoded), unusual)


def storable_size(value: Any, field: str, max_depth: int) -> int:
    """``measure(...).size``."""
    return measure(value, field, max_depth).size


def refuse_unaddressable(value: str | None, field: str) -> None:
    """Ids travel in URL paths, which spell text as UTF-8: an unpaired surrogate cannot be addressed."""
    if value is not None and not value.isascii() and lossless_json.holds_surrogate(value):
        raise InvalidInput(f"{field}: holds an unpaired UTF-16 surrogate, which a URL cannot address", field=field)


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
    if isinstance(value, int) and not isinstance(value, bool) and value not in INT64:
        return path, "integer outside the 64-bit range"
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            found = _first_unstorable(item, child)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_unstorable(item, f"{path}[{index}]")
            if found:
                return found
    return None
