"""Details a source keeps for its own display (Claude Code's ``toolUseResult`` and the fields of its hook and
attachment lines, pi's ``details``): kept in the message's metadata up to a size, since above it they mostly
repeat the content (a file read shown twice, a tool listing) and would crowd the service's metadata limit.
What is left out is reported."""

import json
from typing import Any

from app.importers.imported import ImportReport, Repair

DETAILS_BYTES = 32 * 1024


def kept_details(value: Any, *, what: str, line: int, message_id: str, report: ImportReport) -> bool:
    """Whether ``value`` fits; when it does not, the report says it was left out."""
    size = len(json.dumps(value, separators=(",", ":")))
    if size <= DETAILS_BYTES:
        return True
    report.repairs.append(
        Repair(line, message_id, f"{what} of {size} bytes left out (kept for the tool's own display)")
    )
    return False
