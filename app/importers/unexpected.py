"""A record of a shape no importer rule foresaw is reported as an invalid line, never a 500.

The importers read untyped JSON with ``as_object``/``as_list`` and type checks, but a source can always
write a shape nobody has seen yet. Reading each record inside ``reading_line`` turns whatever such a record
raises into an invalid line naming it (``strict`` then refuses the import by that line, as for any other),
and logs where it failed as a warning: the file is still imported, and the place the importer missed a
shape is there to be read in the log rather than hidden. The log names the exception's type and the code's
frames, never the exception's text, which may quote the record (a validation error's ``input_value``): the
content of a session does not belong in the service's logs.
"""

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from app.importers.imported import ImportRefused, ImportReport, Skipped

log = logging.getLogger("projector.importers")


@contextmanager
def reading_line(report: ImportReport, line: int) -> Iterator[None]:
    try:
        yield
    except ImportRefused:
        raise
    except Exception as error:
        log.warning(
            "%s import: line %d has a shape the importer does not read: %s",
            report.format,
            line,
            where_it_failed(error),
        )
        report.invalid.append(Skipped(line, f"a record of a shape the importer does not read ({type(error).__name__})"))


def where_it_failed(error: BaseException) -> str:
    """The exception's type and the frames it went through, without its message."""
    frames = "".join(traceback.format_tb(error.__traceback__)).rstrip()
    return f"{type(error).__name__}\n{frames}"
