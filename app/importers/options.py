"""What the caller decides about one import: strictness, and the session id when the source names none."""

from dataclasses import dataclass

from app.importers.imported import ImportRefused, ImportReport


@dataclass(frozen=True, slots=True)
class ImportOptions:
    strict: bool = False
    """Refuse the whole import on the first line that is not JSON or not a known record, naming its line;
    by default such lines are skipped and reported."""
    session_id: str | None = None
    """The session to import into; by default the source's own id (or, for a bare request body, one derived
    from its first messages)."""

    def refuse_invalid(self, report: ImportReport) -> None:
        if self.strict and report.invalid:
            first = min(report.invalid, key=lambda skipped: skipped.line)
            raise ImportRefused(first.line, first.reason)
