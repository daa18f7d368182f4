"""Media the target cannot read becomes explicit text, never a silent drop.

What the target reads comes from ``ProjectionContext.readable_media``: ``None`` passes every medium on (the
provider adapter then applies its own limits), a tuple lists the media types the target reads. Two wordings:
``explain`` tells the model it cannot see the attachment and should say so (model view); ``stub`` leaves a
short placeholder (compact view, where a summarizer only needs to know something was attached). Never
touches the bytes of a medium it keeps.
"""

from typing import Any, Literal

from app.engine.persisted import Content

MediaStyle = Literal["explain", "stub"]

USER_MEDIA_PARTS = frozenset({"image", "file"})
RESULT_MEDIA_ITEMS = frozenset(
    {"media", "image-data", "image-url", "image-file-id", "file-data", "file-url", "file-id"}
)


def media_type_of(part: dict[str, Any]) -> str:
    declared = part.get("mediaType")
    if isinstance(declared, str) and declared:
        return declared.lower()
    if part.get("type") in {"image", "image-data", "image-url", "image-file-id"}:
        return "image/*"
    return "application/octet-stream"


def reads(media_type: str, readable: tuple[str, ...] | None) -> bool:
    if readable is None:
        return True
    major = media_type.split("/", 1)[0]
    for pattern in readable:
        pattern = pattern.strip().lower()
        if pattern in {"*", "*/*"} or pattern == media_type:
            return True
        if pattern.endswith("/*") and pattern[:-2] == major:
            return True
        if media_type.endswith("/*") and pattern.split("/", 1)[0] == major:
            return True  # an image of unknown subtype is assumed to be one the target reads
    return False


def unreadable_text(part: dict[str, Any], style: MediaStyle) -> str:
    media_type = media_type_of(part)
    filename = part.get("filename") if isinstance(part.get("filename"), str) else None
    is_image = media_type.startswith("image/")
    match style:
        case "explain":
            name = filename or ("the attached image" if is_image else "the attached file")
            return f"ERROR: Cannot read {name} (this model does not support {media_type} input). Inform the user."
        case "stub":
            if is_image:
                return "[image]"
            return f"[Attached {media_type}: {filename}]" if filename else f"[Attached {media_type}]"


def readable_content(
    content: Content, readable: tuple[str, ...] | None, style: MediaStyle
) -> tuple[Content, list[str]]:
    """User-side content with every unreadable image or file part turned into a text part."""
    if isinstance(content, str) or readable is None:
        return content, []
    parts: list[dict[str, Any]] = []
    notes: list[str] = []
    for part in content:
        if part.get("type") in USER_MEDIA_PARTS and not reads(media_type_of(part), readable):
            parts.append({"type": "text", "text": unreadable_text(part, style)})
            notes.append(f"{media_type_of(part)} attachment replaced by text: the target cannot read it")
        else:
            parts.append(part)
    # Nothing replaced: the content goes on as the same list (the accounting reads it as not changed).
    return (parts if notes else content), notes


def readable_items(
    items: list[Any], readable: tuple[str, ...] | None, style: MediaStyle
) -> tuple[list[Any], list[str]]:
    """Items of a ``content`` tool output, with unreadable media turned into text items."""
    out: list[Any] = []
    notes: list[str] = []
    for item in items:
        if (
            isinstance(item, dict)
            and item.get("type") in RESULT_MEDIA_ITEMS
            and not reads(media_type_of(item), readable)
        ):
            out.append({"type": "text", "text": unreadable_text(item, style)})
            notes.append(f"{media_type_of(item)} in a tool result replaced by text: the target cannot read it")
        else:
            out.append(item)
    return out, notes
