"""A tool result's ``output`` read once for every adapter: is it an error, and which texts and media.

Adapters whose providers take only text or only some media decide what to do with the media; this module
only reads. It never drops anything: every item of the output comes back as text or as media.
"""

import json
from dataclasses import dataclass
from typing import Any

from app.providers.conversation import DENIED, NO_OUTPUT, unsettled
from app.providers.media import Media, read_media


@dataclass(frozen=True, slots=True)
class ToolOutput:
    is_error: bool
    items: tuple[str | Media, ...]
    """Texts and media in their order; never empty."""

    @property
    def text(self) -> str:
        """All texts joined; media named in place, for providers that take text only."""
        rendered = [item if isinstance(item, str) else f"[attached: {item.describe()}]" for item in self.items]
        return "\n".join(rendered)

    @property
    def texts_only(self) -> str:
        return "\n".join(item for item in self.items if isinstance(item, str)) or NO_OUTPUT

    @property
    def media(self) -> tuple[Media, ...]:
        return tuple(item for item in self.items if isinstance(item, Media))


def read_output(output: dict[str, Any]) -> ToolOutput:
    match output.get("type"):
        case "text":
            return ToolOutput(False, (str(output.get("value")),))
        case "error-text":
            return ToolOutput(True, (str(output.get("value")),))
        case "json":
            return ToolOutput(False, (_json(output.get("value")),))
        case "error-json":
            return ToolOutput(True, (_json(output.get("value")),))
        case "execution-denied":
            reason = output.get("reason")
            return ToolOutput(True, (f"{DENIED} Reason: {reason}" if reason else DENIED,))
        case "content":
            items = tuple(_content_item(item) for item in output.get("value") or [])
            return ToolOutput(False, items or (NO_OUTPUT,))
        case other:
            unsettled("every adapter", f"a {other!r} tool output")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _content_item(item: dict[str, Any]) -> str | Media:
    """AI SDK content items: v5's ``text``/``media`` and v6's data and URL forms."""
    match item.get("type"):
        case "text":
            return str(item.get("text", ""))
        case "media" | "image-data" | "file-data":
            media = read_media(str(item.get("data", "")), item.get("mediaType"), item.get("filename"))
            return media
        case "image-url" | "file-url":
            return read_media(str(item.get("url", "")), item.get("mediaType"), image=item["type"] == "image-url")
        case other:
            return f"(tool output item of type {other!r} not shown)"
