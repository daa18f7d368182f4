"""A record of a shape no importer rule foresaw is reported as an invalid line, never a 500.

The importers read untyped JSON with ``as_object``/``as_list`` and type checks, but a source can always
write a shape nobody has seen yet. Reading each record inside ``reading_line`` turns whatever such a record
raises into an invalid line naming it (``strict`` then refuses the import by that line, as for any other),
and logs the traceback as a warning: the file is still imported, and the shape the importer missed is
there to be read in the log rather than hidden.
"""

import logging
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
        log.warning("%s import: line %d has a shape the importer does not read", report.format, line, exc_info=True)
        report.invalid.append(Skipped(line, f"a record of a shape the importer does not read ({type(error).__name__})"))
