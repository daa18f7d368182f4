"""Bytes into JSON records, each with the line it came from; what cannot be read is named by its line.

Agents append one JSON object per line, and real files bend that: a write that lost its newline leaves two
objects on one line (both are kept, on the same line number), a file being written ends in a half line (kept
apart as ``torn_tail``, since it is not wrong, only unfinished), and a hook may dump the same records as
one JSON array instead, and a file saved by a Windows editor starts with a UTF-8 byte order mark, which is
not JSON and is dropped. Strings come back exactly as written: a NUL or an unpaired surrogate escape is text
like any other here (orjson refuses unpaired surrogates, so such a line is read again with the standard
library).
"""

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from app.importers.imported import ImportRefused, ImportReport, Skipped

_DECODER = json.JSONDecoder()
BYTE_ORDER_MARK = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Record:
    line: int
    value: Any


@dataclass(slots=True)
class Reading:
    records: list[Record] = field(default_factory=list)
    invalid: list[Skipped] = field(default_factory=list)
    torn_tail: int | None = None
    """The line number of an unfinished last line (no newline yet and not JSON yet), if there is one."""


def read_json_lines(data: bytes) -> Reading:
    reading = Reading()
    lines = data.removeprefix(BYTE_ORDER_MARK).split(b"\n")
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            values = _values(text.decode("utf-8"))
        except UnicodeDecodeError as error:
            reading.invalid.append(Skipped(number, f"not UTF-8 ({error.reason} at byte {error.start})"))
            continue
        except RecursionError:
            # Python's JSON reader follows nesting by recursion: a line nested about a thousand levels deep
            # is no record a runtime wrote, and the lines around it are still read.
            reading.invalid.append(Skipped(number, "not JSON a reader can follow (nested too deep)"))
            continue
        except ValueError as error:
            if number == len(lines):  # the last piece has no newline after it
                reading.torn_tail = number
            else:
                reading.invalid.append(Skipped(number, f"not JSON ({error})"))
            continue
        reading.records.extend(Record(number, value) for value in values)
    return reading


def report_of(format: str, reading: Reading) -> ImportReport:
    """A report that starts with what reading found: the lines that could not be read, and a torn tail."""
    report = ImportReport(format, invalid=list(reading.invalid))
    if reading.torn_tail is not None:
        report.skipped.append(Skipped(reading.torn_tail, "unfinished last line (the file is still being written)"))
    return report


def read_json_document(data: bytes) -> Any:
    """The one JSON value the bytes hold; anything else refuses the import."""
    data = data.removeprefix(BYTE_ORDER_MARK)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ImportRefused(None, f"not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportRefused(error.lineno, f"not JSON ({error})") from None


def read_records(data: bytes) -> Reading:
    """JSON lines, or the same records as one JSON array (what the Stop hook of claude-code-hooks writes)."""
    if data.removeprefix(BYTE_ORDER_MARK).lstrip()[:1] != b"[":
        return read_json_lines(data)
    document = read_json_document(data)
    if not isinstance(document, list):
        raise ImportRefused(None, "a JSON array of records was expected")
    return Reading(records=[Record(number, value) for number, value in enumerate(document, start=1)])


def _values(text: str) -> list[Any]:
    try:
        return [orjson.loads(text)]
    except orjson.JSONDecodeError:
        pass
    values: list[Any] = []
    position = 0
    while position < len(text):
        value, position = _DECODER.raw_decode(text, position)
        values.append(value)
        while position < len(text) and text[position].isspace():
            position += 1
    return values
