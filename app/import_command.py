"""``projector import``: session files sent to a running service's ``POST /sessions/import``.

It talks HTTP, by URL and key, rather than writing to the database itself: the service is the one writer,
so an import gets the same checks, limits, tenant and role walls, ordering and idempotency as any append,
and works against a remote deployment as well as a local one. A folder is walked for the files the format
writes (``*.jsonl``, ``*.json``), one request per file, with a progress bar on the terminal. ``--follow``
keeps one live file in sync: it polls the file and, each time it has grown, imports it again with
``live=true``, so only the messages no later line can change are stored and each is stored once; when it
stops, one last import without ``live`` stores what was still pending.
"""

import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import httpx

from app.service_client import problem_detail, service_client

SUFFIXES = {
    "claude-code": (".jsonl", ".json"),
    "pi": (".jsonl",),
    "opencode": (".json",),
    "openai-chat": (".json",),
    "anthropic-messages": (".json",),
    "ai-sdk": (".json",),
    "projector": (".jsonl",),
}
CONTENT_TYPES = {".jsonl": "application/x-ndjson", ".json": "application/json"}


class ImportFailed(Exception):
    """The service refused a file (its problem+json detail) or could not be reached."""


@dataclass(slots=True)
class Totals:
    files: int = 0
    stored: int = 0
    already_stored: int = 0
    failed: list[str] = field(default_factory=list)
    not_stored: list[str] = field(default_factory=list)
    """Messages of files the service took that were not stored as the file has them (``not_stored``)."""
    unread: list[str] = field(default_factory=list)
    """Files with lines the importer could not read, that still gave a session (``unread_lines``)."""


def files_of(path: Path, format: str) -> list[Path]:
    """The file itself, or every file of the format under the folder, in a stable order."""
    if path.is_file():
        return [path]
    suffixes = SUFFIXES[format]
    return sorted(found for found in path.rglob("*") if found.is_file() and found.suffix in suffixes)


def import_file(client: httpx.Client, path: Path, format: str, *, strict: bool, live: bool = False) -> dict[str, Any]:
    """The service's answer for one file; ``ImportFailed`` when it refuses it."""
    content_type = CONTENT_TYPES.get(path.suffix, "application/octet-stream")
    params = {"format": format, "strict": str(strict).lower(), "live": str(live).lower()}
    try:
        response = client.post(
            "/sessions/import", params=params, content=path.read_bytes(), headers={"content-type": content_type}
        )
    except httpx.HTTPError as error:
        raise ImportFailed(f"{path}: the service is unreachable ({type(error).__name__})") from error
    if response.status_code >= 400:
        raise ImportFailed(f"{path}: {response.status_code} {problem_detail(response)}")
    answer: dict[str, Any] = response.json()
    return answer


def import_all(client: httpx.Client, paths: list[Path], format: str, *, strict: bool, out: TextIO) -> Totals:
    totals = Totals()
    bar = ProgressBar(len(paths), out)
    for path in paths:
        try:
            answer = import_file(client, path, format, strict=strict)
        except ImportFailed as error:
            totals.failed.append(str(error))
        else:
            for session in answer["sessions"]:
                totals.stored += session["stored"]
                totals.already_stored += session["alreadyStored"]
            totals.not_stored.extend(not_stored(path, answer))
            (totals.unread if answer["sessions"] else totals.failed).extend(unread_lines(path, answer))
        totals.files += 1
        bar.show(totals.files, f"{totals.stored} stored, {totals.already_stored} already stored", path.name)
    bar.finish()
    return totals


def follow(
    client: httpx.Client,
    path: Path,
    format: str,
    *,
    interval: float,
    out: TextIO,
    keep_going: Callable[[], bool] = lambda: True,
) -> None:
    """Imports ``path`` with ``live=true`` whenever it differs (size or modification time) from the last one
    the service took, until ``keep_going`` says stop or the user interrupts; then once more without ``live``.

    A refused or failed import (the service restarting) is tried again at the next poll, changed or not. The
    last import stores what ``live`` leaves pending: a session that ended with no turn-end line (older Claude
    Code versions write none) has its last answer stored then.
    """
    imported: tuple[int, int] | None = None
    try:
        while keep_going():
            now = _stamp(path)
            if now is not None and now != imported and _follow_once(client, path, format, live=True, out=out):
                imported = now
            time.sleep(interval)
    except KeyboardInterrupt:
        pass
    if _stamp(path) is not None:
        _follow_once(client, path, format, live=False, out=out)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (how systemd, ``docker stop`` and ``kill`` end a process) stops a follower as Ctrl-C does, so
    its last import still stores the answer ``live`` left pending, rather than the process dying without it."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _follow_once(client: httpx.Client, path: Path, format: str, *, live: bool, out: TextIO) -> bool:
    """One import of the followed file, its outcome printed; whether the service took it."""
    try:
        answer = import_file(client, path, format, strict=False, live=live)
    except ImportFailed as error:
        print(error, file=out, flush=True)
        return False
    for session in answer["sessions"]:
        if session["stored"]:
            print(f"{session['id']}: {session['stored']} new message(s)", file=out, flush=True)
    for problem in not_stored(path, answer):
        print(problem, file=out, flush=True)
    return True


def not_stored(path: Path, answer: dict[str, Any]) -> list[str]:
    """What the service took from the file and did not store as the file has it: a message stored before with
    other content (the stored one is kept) and a message the append checks refuse."""
    lines: list[str] = []
    for session in answer["sessions"]:
        where = f"{path}: session {session['id']}"
        for message_id in session.get("changed", []):
            lines.append(f"{where}: {message_id} was stored before with other content (kept)")
        for refused in session.get("refused", []):
            field = f" ({refused['field']})" if refused.get("field") else ""
            lines.append(f"{where}: {refused['messageId']} refused{field}: {refused['reason']}")
    return lines


def unread_lines(path: Path, answer: dict[str, Any]) -> list[str]:
    """The lines of the file the importer could not read (``invalid``: not JSON, or no record the format
    knows), which the service skips unless ``strict``: how many and the first. Without it a file of another
    format (``--format claude-code`` on a pi session) or a damaged one imports as nothing, with no word said."""
    invalid = answer["report"]["invalid"]
    if not invalid:
        return []
    first = invalid[0]
    outcome = "" if answer["sessions"] else f", nothing imported (is it a {answer['report']['format']} file?)"
    return [f"{path}: {len(invalid)} line(s) not read{outcome}: line {first['line']}: {first['reason']}"]


class ProgressBar:
    """One line redrawn in place on a terminal; one line per file elsewhere (a log keeps every step)."""

    WIDTH = 30

    def __init__(self, total: int, out: TextIO) -> None:
        self.total = max(total, 1)
        self.out = out
        self.redraw = out.isatty()

    def show(self, done: int, counts: str, current: str) -> None:
        filled = self.WIDTH * done // self.total
        line = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} files, {counts}: {current}"
        if self.redraw:
            self.out.write("\r\x1b[K" + line)
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self.redraw:
            self.out.write("\n")
            self.out.flush()


def run(arguments: Any, *, out: TextIO | None = None) -> int:
    """``projector import``; the exit status is 1 when a file was refused or none of its lines could be read,
    or a message of one was refused or differs from the one stored before. Progress goes to ``out`` (standard
    error by default)."""
    out = out or sys.stderr
    path = Path(arguments.path).expanduser()
    if not path.exists():
        print(f"{path}: no such file or folder", file=out)
        return 2
    with service_client(arguments.url, arguments.key) as client:
        if arguments.follow:
            if not path.is_file():
                print(f"{path}: --follow takes one file", file=out)
                return 2
            with contextlib.suppress(KeyboardInterrupt), sigterm_as_interrupt():
                follow(client, path, arguments.format, interval=arguments.interval, out=out)
            return 0
        totals = import_all(
            client, files_of(path, arguments.format), arguments.format, strict=arguments.strict, out=out
        )
    for problem in [*totals.failed, *totals.not_stored, *totals.unread]:
        print(problem, file=out)
    print(
        f"{totals.files} file(s): {totals.stored} message(s) stored, {totals.already_stored} already stored", file=out
    )
    return 1 if totals.failed or totals.not_stored else 0
