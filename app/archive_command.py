"""``projector archive``: a session's archive (``GET /sessions/{id}/archive``) written to a file or standard
output as the service streams it, for ``projector import --format projector`` here or on another service."""

import sys
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

import httpx

from app.service_client import problem_detail, service_client


def run(arguments: Any, *, out: BinaryIO | None = None, errors: Any = None) -> int:
    """The exit status is 1 when the service refused (the session does not exist, the key may not read it) or
    could not be reached, and a file asked for is then left unwritten."""
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
                _copy(response, out or sys.stdout.buffer)
            else:
                with partial.open("wb") as file:
                    _copy(response, file)
    except httpx.HTTPError as error:
        print(f"{arguments.session_id}: the service is unreachable or stopped ({type(error).__name__})", file=errors)
        if partial is not None:
            partial.unlink(missing_ok=True)
        return 1
    if partial is not None and target is not None:
        partial.replace(target)  # a file that exists is a whole archive
    return 0


def _copy(response: httpx.Response, out: BinaryIO) -> None:
    for piece in response.iter_bytes():
        out.write(piece)
    out.flush()
