"""Read-your-writes across replicas: the consistency token of a request.

A streaming replica replays the primary's write-ahead log a moment behind it, so a client that writes and then
reads could read from a replica that has not seen its write yet. Every commit has a position in that log (an
LSN), and a replica reports how far it has replayed: a read that must see a write waits for a replica past the
write's position. The token is that position in PostgreSQL's own notation (``16/B374D848``): a write answers it,
a read sends it back, and tokens compare across the primary and every replica of it.

The request's token lives in a context variable, set by the HTTP layer for the request's duration: the
services open ``Database.reading()`` and ``Database.transaction()`` without passing it through every call,
and the store records the position of each commit on it and honours the position a read asks for.
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_LSN = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")


def parse_position(text: str) -> int:
    """An LSN as PostgreSQL prints it (``hi/lo``, hexadecimal) to a comparable number; ValueError otherwise."""
    match = _LSN.match(text.strip())
    if match is None:
        raise ValueError(f"not a WAL position: {text!r}")
    return (int(match.group(1), 16) << 32) | int(match.group(2), 16)


def format_position(position: int) -> str:
    return f"{position >> 32:X}/{position & 0xFFFFFFFF:X}"


@dataclass(slots=True)
class RequestConsistency:
    wanted: int | None = None
    """The position the request's reads must have seen (the token the client sent), if any."""
    written: int | None = None
    """The position of the newest commit the request made, if it wrote."""

    def wrote(self, position: int) -> None:
        self.written = position if self.written is None else max(self.written, position)


_current: ContextVar[RequestConsistency | None] = ContextVar("projector_consistency", default=None)


def current() -> RequestConsistency | None:
    """The running request's token, or None outside a request (a script, a test calling a service)."""
    return _current.get()


@contextmanager
def tracking(wanted: int | None) -> Iterator[RequestConsistency]:
    consistency = RequestConsistency(wanted=wanted)
    token = _current.set(consistency)
    try:
        yield consistency
    finally:
        _current.reset(token)
