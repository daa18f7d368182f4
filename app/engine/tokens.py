"""Token estimates stored per message at write time, so reads never re-count history.

A character-based estimate (about four characters a token, as opencode and pi use) is deliberately cheap:
provider usage recorded on assistant messages corrects it wherever a real count exists.
"""

from typing import Any

import orjson

from app.engine.persisted import Content

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_200
"""A flat charge for an image or file part; real costs vary by provider and size."""


def estimate_tokens(content: Content) -> int:
    if isinstance(content, str):
        return _from_chars(len(content))
    return sum(_part_tokens(part) for part in content)


def _part_tokens(part: dict[str, Any]) -> int:
    match part.get("type"):
        case "text" | "reasoning":
            return _from_chars(len(part.get("text", "")))
        case "image" | "file":
            return IMAGE_TOKENS
        case "tool-call":
            return _from_chars(len(part.get("toolName", "")) + len(orjson.dumps(part.get("input"))))
        case "tool-result":
            return _from_chars(len(orjson.dumps(part.get("output"))))
        case _:
            return _from_chars(len(orjson.dumps(part)))


def _from_chars(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
