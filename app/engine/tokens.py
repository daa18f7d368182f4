"""Token estimates stored per message at write time, so reads never re-count history.

About four UTF-8 bytes a token: for ASCII that is opencode's and pi's four characters a token, and for CJK
text (three bytes a character) it gives about 0.75 tokens a character where four characters a token would
give 0.25, a fourfold undercount that would let a Chinese session overflow before compaction is proposed.
Media costs a flat amount, never its encoded size: a base64 screenshot in a tool result would otherwise
count as a hundred thousand tokens. Deliberately cheap; provider usage recorded on assistant messages
corrects it wherever a real count exists. Pure: no tokenizer downloads, no I/O.
"""

from typing import Any

from app import lossless_json
from app.engine.persisted import Content

BYTES_PER_TOKEN = 4
PADDING_BY_FAMILY: dict[str, float] = {"anthropic": 4 / 3}
"""How much more a provider family's tokenizer makes of the same bytes, applied where an estimate is counted
against that family's window: Claude counted 1.33-1.95x the four-bytes estimate on the real Claude Code and
pi sessions we measured (code and JSON tokenize densely), and Claude Code pads its own estimate by 4/3."""
IMAGE_TOKENS = 1_200
"""A flat charge for an image; real costs vary by provider and size (pi and opencode charge about this)."""
FILE_TOKENS = 2_000
"""A flat charge for a document such as a PDF (Claude Code and opencode charge this)."""

_TEXT_MEDIA_PREFIXES = ("text/", "application/json", "application/xml")
_MEDIA_ITEM_TYPES = frozenset({"media", "image-data", "image-url", "file-data", "file-url", "image", "file"})


def estimate_tokens(content: Content) -> int:
    if isinstance(content, str):
        return _text_tokens(content)
    return sum(_part_tokens(part) for part in content)


def _part_tokens(part: dict[str, Any]) -> int:
    match part.get("type"):
        case "text" | "reasoning":
            return _text_tokens(part.get("text", ""))
        case "image":
            return IMAGE_TOKENS
        case "file":
            return _file_tokens(part)
        case "tool-call":
            return _text_tokens(part.get("toolName", "")) + _json_tokens(part.get("input"))
        case "tool-result":
            return _output_tokens(part.get("output"))
        case _:
            return _json_tokens(part)


def _output_tokens(output: Any) -> int:
    if isinstance(output, dict) and output.get("type") == "content" and isinstance(output.get("value"), list):
        return sum(_content_item_tokens(item) for item in output["value"])
    if isinstance(output, dict) and isinstance(output.get("value"), str):
        return _text_tokens(output["value"])
    return _json_tokens(output)


def _content_item_tokens(item: Any) -> int:
    """One item of a ``content`` tool output: text by its length, media at the flat rate."""
    if not isinstance(item, dict):
        return _json_tokens(item)
    if item.get("type") == "text":
        return _text_tokens(item.get("text", ""))
    if item.get("type") in _MEDIA_ITEM_TYPES:
        return _file_tokens(item)
    return _json_tokens(item)


def _file_tokens(part: dict[str, Any]) -> int:
    media_type = str(part.get("mediaType", ""))
    if media_type.startswith("image/") or str(part.get("type", "")).startswith("image"):
        return IMAGE_TOKENS
    data = part.get("data")
    if isinstance(data, str) and media_type.startswith(_TEXT_MEDIA_PREFIXES) and not data.startswith("http"):
        # Base64 carries three bytes in four characters; a text file costs about what its text does.
        return _from_bytes(len(data) * 3 // 4)
    return FILE_TOKENS


def _text_tokens(text: str) -> int:
    if text.isascii():
        return _from_bytes(len(text))
    # surrogatepass: request text not yet cleaned (a /chat system prompt) may hold an unpaired surrogate,
    # and counting it must not fail.
    return _from_bytes(len(text.encode("utf-8", "surrogatepass")))


def _json_tokens(value: Any) -> int:
    return _from_bytes(len(lossless_json.dumps(value)))


def _from_bytes(count: int) -> int:
    return (count + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN
