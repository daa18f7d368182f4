"""Removing unpaired UTF-16 surrogates from every string of a JSON value.

Providers reject request bodies with lone surrogates (they are not valid UTF-8). A well-formed pair that
arrived as two code points is joined into the character it encodes; only the halves left alone are removed.
Never touches anything but strings.
"""

import re
from typing import Any

import orjson

_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_LONE = re.compile("[\ud800-\udfff]")


def _join_pair(match: re.Match[str]) -> str:
    pair = match.group()
    high, low = pair[0], pair[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def clean_text(text: str) -> str:
    # An ASCII string holds no surrogate, and checking that is a flag read: most of a payload's text (tool
    # output, code) skips the regex scan, which was a quarter of a 10,000-message /chat request.
    if text.isascii() or not _LONE.search(text):
        return text
    return _LONE.sub("", _PAIR.sub(_join_pair, text))


def without_unpaired_surrogates(value: Any) -> tuple[Any, bool]:
    """The value with every string cleaned, and whether anything changed (keys are cleaned too)."""
    if isinstance(value, dict | list):
        # orjson refuses any surrogate code point in a string or key, so a value it encodes has nothing to
        # clean: one pass in C instead of a Python walk over every string (an eighth of a 10,000-message
        # /chat request). Anything it refuses, for whatever reason, takes the walk below.
        try:
            orjson.dumps(value)
        except (orjson.JSONEncodeError, TypeError):
            pass
        else:
            return value, False
    return _walk(value)


def _walk(value: Any) -> tuple[Any, bool]:
    match value:
        case str():
            cleaned = clean_text(value)
            return cleaned, cleaned != value
        case dict():
            changed = False
            result: dict[Any, Any] = {}
            for key, item in value.items():
                new_key, key_changed = _walk(key)
                new_item, item_changed = _walk(item)
                result[new_key] = new_item
                changed = changed or key_changed or item_changed
            return (result, True) if changed else (value, False)
        case list() | tuple():
            items = [_walk(item) for item in value]
            if any(item_changed for _, item_changed in items):
                return [item for item, _ in items], True
            return value, False
        case _:
            return value, False
