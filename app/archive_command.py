"""``projector archive``: a session's archive (``GET /sessions/{id}/archive``) written to a file or standard
output as the service streams it, for ``projector import --format projector`` here or on another service."""

import sys
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

import httpx
import orjson

from app.service_client import problem_detail, service_client

END_LINE_MOST_BYTES = 4096
"""Far more than an end line takes (``{"type": "end", "runs": ..., "messages": ...}``)."""


def run(arguments: Any, *, out: BinaryIO | None = None, errors: Any = None) -> int:
    """The exit status is 1 when the service refused (the session does not exist, the key may not read it), could
    not be reached, or the archive came without its end line (cut short on the way), and a file asked for is then
    left unwritten."""
    errors = errors or sys.stderr
    path = f"/sessions/{quote(arguments.session_id, safe='')}/archive"
    target = Path(arguments.output).expanduser() if arguments.output else None
    partial = target.with_name(target.name + ".partial") if target else None
    try:
        with service_client(arguments.url, arguments.key) as client, client.stream("GET", path) as response:
            if response.status_code >= 400:
                response.read()
                print(f"{arguments.session_id}: {response.status_code} {problem_detail(response)}", file=errors)
                return 1
            if partial is None:
                whole = _copy(response, out or sys.stdout.buffer)
            else:
                with partial.open("wb") as file:
                    whole = _copy(response, file)
    except (httpx.HTTPError, OSError) as error:
        problem: str | None = f"the archive was not written whole ({type(error).__name__}: {error})"
    else:
        problem = None if whole else "the archive was cut short (it has no end line)"
    if partial is not None and target is not None:
        if problem is None:
            partial.replace(target)  # a file that exists is a whole archive
        else:
            partial.unlink(missing_ok=True)
    if problem is not None:
        print(f"{arguments.session_id}: {problem}", file=errors)
        return 1
    return 0


def _copy(response: httpx.Response, out: BinaryIO) -> bool:
    """Copies the answer; whether it ended on the archive's end line (a body cut short by a proxy may end
    cleanly on any other)."""
    tail = b""
    for piece in response.iter_bytes():
        out.write(piece)
        tail = (tail + piece)[-END_LINE_MOST_BYTES:]
    out.flush()
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        return tail.endswith(b"\n") and bool(orjson.loads(last).get("type") == "end")
    except (orjson.JSONDecodeError, AttributeError):
        return False
