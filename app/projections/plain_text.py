"""The plain text of stored content: what a summary, reminder or marker says, without its parts.

Used wherever a runtime record is re-framed as model text. Never invents text: non-text parts are skipped,
and their absence is the caller's to report.
"""

from app.engine.persisted import Content


def plain_text(content: Content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        part["text"] for part in content if part.get("type") == "text" and isinstance(part.get("text"), str)
    )


def is_blank(text: str) -> bool:
    # strip() copies the whole text (tool outputs run to kilobytes); isspace stops at the first character that
    # is not whitespace, and isspace and strip agree on what whitespace is.
    return not text or text.isspace()
