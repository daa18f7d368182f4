"""``parse_import``: the one way to call an importer, by the format's name.

The import endpoint and the command line both call it with the bytes of one file and store what it
returns; it never reads files or the database itself.
"""

from collections.abc import Callable, Mapping

from app.errors import InvalidInput
from app.importers import ai_sdk, anthropic_messages, archive, claude_code, openai_chat, opencode, pi
from app.importers.imported import ImportRefused, ImportResult
from app.importers.options import ImportOptions
from app.importers.unexpected import log, where_it_failed

Importer = Callable[[bytes, ImportOptions], ImportResult]

IMPORTERS: Mapping[str, Importer] = {
    claude_code.FORMAT: claude_code.parse,
    opencode.FORMAT: opencode.parse,
    pi.FORMAT: pi.parse,
    openai_chat.FORMAT: openai_chat.parse,
    anthropic_messages.FORMAT: anthropic_messages.parse,
    ai_sdk.FORMAT: ai_sdk.parse,
    archive.FORMAT: archive.parse,
}
FORMATS: tuple[str, ...] = tuple(IMPORTERS)


class UnknownFormat(InvalidInput):
    def __init__(self, name: str) -> None:
        super().__init__(f"format: {name!r} is not one of {', '.join(FORMATS)}", field="format")


def parse_import(format: str, data: bytes, *, strict: bool = False, session_id: str | None = None) -> ImportResult:
    """The sessions ``data`` holds, in the append shape, and the report of what was left out.

    Raises ``ImportRefused`` (422) when the bytes are not that format at all, or, with ``strict``, on the
    first line that is not JSON or not a known record; ``UnknownFormat`` for a name not in ``FORMATS``. A
    record the importer cannot read is an invalid line (``reading_line``); what fails outside any one record
    refuses the file rather than answer a 500, with the traceback logged.
    """
    importer = IMPORTERS.get(format)
    if importer is None:
        raise UnknownFormat(format)
    try:
        return importer(data, ImportOptions(strict=strict, session_id=session_id))
    except RecursionError:
        # Python's JSON reader and writer, and the importers' walks, follow nesting by recursion: a file
        # nested about a thousand levels deep is no session any runtime wrote.
        raise ImportRefused(None, "not JSON a reader can follow (nested too deep)") from None
    except InvalidInput:
        raise
    except Exception as error:
        log.warning("%s import: the file has a shape the importer does not read: %s", format, where_it_failed(error))
        reason = f"not a {format} file the importer can read ({type(error).__name__})"
        raise ImportRefused(None, reason) from None
