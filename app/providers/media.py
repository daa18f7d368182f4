"""Reading image and file data in the forms stored parts allow: base64, a data URL or an http(s) URL.

Adapters ask here what a part holds so that each can emit its provider's form (a data URL for OpenAI,
raw base64 plus a media type for Anthropic and Gemini). Never fetches a URL and never decodes whole files.
"""

import re
from dataclasses import dataclass
from typing import Any

_DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(;[^,;]*)*?);base64,(?P<data>.*)$", re.S)

_MAGIC: tuple[tuple[str, str], ...] = (
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
    ("Qk0", "image/bmp"),
    ("Qk1", "image/bmp"),
    ("Qk2", "image/bmp"),
    ("Qk3", "image/bmp"),
    ("JVBERi0", "application/pdf"),
)
"""Base64 prefixes of common file signatures (``BM``, a bitmap's, is four: its third byte shows in the third
character)."""
GENERIC_TYPE = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class Media:
    media_type: str
    base64: str | None = None
    url: str | None = None
    filename: str | None = None

    @property
    def data_url(self) -> str:
        if self.url is not None:
            return self.url
        return f"data:{self.media_type};base64,{self.base64}"

    @property
    def decoded_size(self) -> int:
        """Bytes the base64 data decodes to (0 for a URL), without decoding it."""
        if self.base64 is None:
            return 0
        return len(self.base64) * 3 // 4 - self.base64.count("=", -2)

    def describe(self) -> str:
        name = self.filename or self.url or "attachment"
        return f"{name} ({self.media_type})"


def unreadable(media: Media) -> str:
    """What a model is told instead of media its provider cannot take: explicit, never a silent drop."""
    return f"ERROR: Cannot read {media.describe()} (this model does not support this input). Inform the user."


def read_media(data: str, media_type: str | None, filename: str | None = None, *, image: bool = False) -> Media:
    """What ``data`` holds. Its media type is the file signature's where the bytes have a known one, else the
    part's, the data URL's, the URL's extension, and for an ``image`` part ``image/png`` (an image part is an
    image even unlabelled)."""
    stripped = data.strip()
    fallback = "image/png" if image else GENERIC_TYPE
    if match := _DATA_URL.match(stripped):
        base64 = match.group("data")
        return Media(typed(base64, media_type or match.group("type")) or fallback, base64=base64, filename=filename)
    if stripped.startswith(("http://", "https://")):
        return Media(media_type or _from_extension(stripped, fallback), url=stripped, filename=filename)
    return Media(typed(stripped, media_type) or fallback, base64=stripped, filename=filename)


def typed(base64: str, label: object) -> str | None:
    """The media type of base64 data stored with ``label``: the file signature's where the label is missing
    (or not text), generic or another image type (Anthropic refuses an image whose bytes do not match its
    ``media_type``, and a runtime that saves a screenshot as ``.jpg`` labels PNG bytes ``image/jpeg``); else
    the label (a text file may begin with the letters of a signature)."""
    if not isinstance(label, str):
        return signature_type(base64)
    if label == GENERIC_TYPE or label.startswith("image/"):
        return signature_type(base64) or label
    return label


def part_media(part: dict[str, Any]) -> Media:
    """The medium of an image or a file part (AI SDK shape), for every adapter that sends one."""
    match part["type"]:
        case "image":
            return read_media(part["image"], part.get("mediaType"), image=True)
        case "file":
            return read_media(part["data"], part["mediaType"], part.get("filename"))
        case other:
            raise ValueError(f"a {other!r} part holds no medium")


def signature_type(base64: str) -> str | None:
    """The media type the bytes' file signature names, if it is one of ``_MAGIC``."""
    for prefix, media_type in _MAGIC:
        if base64.startswith(prefix):
            return media_type
    return None


_EXTENSIONS = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "pdf": "application/pdf",
}


def _from_extension(url: str, fallback: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0]
    extension = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return _EXTENSIONS.get(extension, fallback)
