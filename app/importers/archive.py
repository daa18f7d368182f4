"""A Projector archive (``GET /sessions/{id}/archive``) as the session it was: the lossless way to move a
session to another service or tenant.

One JSON object a line, each with a ``type``: the session first, then its runs, then its messages oldest first,
each as the API answers it, and last an ``end`` line counting the runs and messages: an archive cut short (a
connection that broke, a proxy that ended the body early) is refused whole rather than imported as a smaller
session. Ids, order, roles, content, metadata (and so kinds, compactions, pruned results), times of writing,
runs and the run each message names come back as they were. Seqs are given anew from 1 in the same order,
token estimates are counted again, and the session's creation time is when it is imported.
"""

from typing import Any

from app.engine.kinds import ROLES
from app.engine.timestamps import from_iso
from app.importers.imported import ImportedMessage, ImportedSession, ImportRefused, ImportResult, Skipped
from app.importers.options import ImportOptions
from app.importers.reading import read_json_lines, report_of
from app.importers.unexpected import reading_line

FORMAT = "projector"
MARK = "projector-archive"
"""The session line's ``format``: what tells an archive from any other JSON lines."""
VERSION = 1
RUN_FIELDS = (
    "id",
    "agent",
    "model",
    "system",
    "tools",
    "variant",
    "format",
    "metadata",
    "usage",
    "result",
    "createdAt",
)
"""What of an archived run is imported: its settings, how it ended, and when it was created (which orders the
session's runs)."""


def archive_end(runs: int, messages: int) -> dict[str, Any]:
    """The archive's last line."""
    return {"type": "end", "runs": runs, "messages": messages}


def parse(data: bytes, options: ImportOptions) -> ImportResult:
    reading = read_json_lines(data)
    report = report_of(FORMAT, reading)
    records = reading.records
    if reading.torn_tail is not None:
        raise ImportRefused(reading.torn_tail, "the archive is cut short (its last line is unfinished)")
    head = records[0].value if records else None
    if not isinstance(head, dict) or head.get("type") != "session" or head.get("format") != MARK:
        raise ImportRefused(records[0].line if records else None, "not a Projector archive (no session line first)")
    if head.get("version") != VERSION:
        raise ImportRefused(records[0].line, f"archive version {head.get('version')!r}; this service reads {VERSION}")
    session_id = options.session_id or head.get("id")
    if not isinstance(session_id, str):
        raise ImportRefused(records[0].line, "the session line has no id")
    session = ImportedSession(
        id=session_id,
        title=head.get("title"),
        model=head.get("model"),
        metadata=head.get("metadata", {}),
        messages=[],
        settled=0,
        context_window_tokens=head.get("contextWindowTokens"),
        as_created=True,
    )
    tail = records[-1].value if len(records) > 1 else None
    if not isinstance(tail, dict) or tail.get("type") != "end":
        raise ImportRefused(records[-1].line, "the archive is cut short (it has no end line)")
    for record in records[1:-1]:
        with reading_line(report, record.line):
            _read(record.line, record.value, session, report.invalid)
    options.refuse_invalid(report)
    counted = archive_end(len(session.runs), len(session.messages))
    if {key: tail.get(key) for key in counted} != counted:
        if report.invalid:
            first = report.invalid[0]
            raise ImportRefused(first.line, f"{first.reason}, and an archive is imported whole")
        raise ImportRefused(
            records[-1].line,
            f"the archive is cut short or altered: its end line counts {tail.get('runs')!r} runs and "
            f"{tail.get('messages')!r} messages, it holds {counted['runs']} and {counted['messages']}",
        )
    session.settled = len(session.messages)
    return ImportResult([session], report)


def _read(line: int, value: Any, session: ImportedSession, invalid: list[Skipped]) -> None:
    kind = value.get("type") if isinstance(value, dict) else None
    malformed = _malformed(value) if kind in ("run", "message") else None
    if malformed is not None:
        invalid.append(Skipped(line, f"an archived {kind}'s {malformed}"))
    elif kind == "run" and isinstance(value.get("id"), str):
        session.runs.append({key: value[key] for key in RUN_FIELDS if key in value})
    elif kind == "message" and isinstance(value.get("id"), str) and value.get("role") in ROLES:
        session.messages.append(
            ImportedMessage(
                value["id"],
                value["role"],
                value.get("content"),
                value.get("metadata") or {},
                from_iso(value.get("createdAt")),
                value.get("runId"),
            )
        )
    elif kind == "session":
        invalid.append(Skipped(line, "a second session line (an archive holds one session)"))
    else:
        invalid.append(Skipped(line, f"not an archived run or message (type {kind!r})"))


def _malformed(value: dict[str, Any]) -> str | None:
    """What of an archived run or message is not as the service writes it, which importing would otherwise
    drop without a word (the message would name no run, or take the time of its import)."""
    created = value.get("createdAt")
    if created is not None and from_iso(created) is None:
        return f"createdAt is not an RFC 3339 time: {created!r}"
    if value.get("type") != "message":
        return None
    if not isinstance(value.get("runId"), str | None):
        return f"runId must be a string or null, got {value['runId']!r}"
    if not isinstance(value.get("metadata"), dict | None):
        return "metadata must be an object"
    return None
