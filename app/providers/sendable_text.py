"""Text a provider takes: unpaired UTF-16 surrogates become U+FFFD, and NUL characters go where the
provider refuses them.

Projector keeps every string exactly as it was sent, but a request body to a provider is UTF-8 JSON, which
cannot spell an unpaired surrogate (strict parsers answer "no low surrogate in string"), so each becomes
U+FFFD, the character that says "something undecodable was here". A pair that arrived as two code points
(two halves joined by the views) becomes the character it encodes. What a NUL does depends on the target
(``NUL_REFUSED``): JSON spells it as ``\\u0000`` and the Anthropic and Gemini APIs read that escape as a
character like any other, while the OpenAI Chat shape is also what locally served models (llama.cpp, vLLM,
Ollama) take, where a NUL ends a C string early and garbles the model's input; the AI SDK hands its messages
on to any of these. Never touches anything but strings (and keys).
"""

import re
from dataclasses import dataclass
from typing import Any

import orjson

from app.projections.types import Repair

REPLACEMENT = "\ufffd"
NUL_REFUSED: frozenset[str] = frozenset({"openai", "openai-responses", "ai-sdk"})
"""The targets whose payloads leave NUL characters out."""

_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(slots=True)
class Changes:
    """What cleaning changed, counted so a repair can say it."""

    surrogates: int = 0
    nuls: int = 0

    def repairs(self, where: str, message_ids: tuple[str, ...] = ()) -> list[Repair]:
        found: list[Repair] = []
        if self.surrogates:
            detail = f"replaced {self.surrogates} unpaired UTF-16 surrogate(s) with U+FFFD in {where}"
            found.append(Repair("unpaired-surrogates", detail, message_ids))
        if self.nuls:
            found.append(Repair("nul-characters", f"removed {self.nuls} NUL character(s) from {where}", message_ids))
        return found


def clean_text(text: str, *, remove_nul: bool, changes: Changes | None = None) -> str:
    # An ASCII string holds no surrogate, and checking that is a flag read: most of a payload's text (tool
    # output, code) skips the regex scan.
    if remove_nul and "\x00" in text:
        if changes is not None:
            changes.nuls += text.count("\x00")
        text = text.replace("\x00", "")
    if text.isascii() or not _SURROGATE.search(text):
        return text
    joined = _PAIR.sub(_join_pair, text)
    if changes is not None:
        changes.surrogates += len(_SURROGATE.findall(joined))
    return _SURROGATE.sub(REPLACEMENT, joined)


def cleaned(value: Any, *, remove_nul: bool, changes: Changes) -> Any:
    """The value with every string (and key) cleaned; counts what changed in ``changes``."""
    match value:
        case str():
            return clean_text(value, remove_nul=remove_nul, changes=changes)
        case dict():
            return {
                clean_text(key, remove_nul=remove_nul, changes=changes) if isinstance(key, str) else key: cleaned(
                    item, remove_nul=remove_nul, changes=changes
                )
                for key, item in value.items()
            }
        case list() | tuple():
            return [cleaned(item, remove_nul=remove_nul, changes=changes) for item in value]
        case _:
            return value


def holds_surrogate(value: Any) -> bool:
    """Whether any string (or key) of a JSON value holds a surrogate: orjson refuses exactly those, so a value
    it encodes has none (one pass in C instead of a walk)."""
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        changes = Changes()
        cleaned(value, remove_nul=False, changes=changes)
        return changes.surrogates > 0
    return False


def _join_pair(match: re.Match[str]) -> str:
    pair = match.group()
    high, low = pair[0], pair[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))
