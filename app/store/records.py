"""The rows the store hands to the services: one typed record per table, and the column lists made from it.

Each record's fields are the columns a read returns, in order, so the record type *is* the column list: the
hand-written SQL (``select_list``), the Core column tuple (``core_columns``) and the record are generated from
it. Adding a column to a read means adding a field here (and the column to ``tables`` and a migration);
nothing else lists it. Records are NamedTuples so a driver row becomes one with ``_make`` and no per-field
Python code.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Column, Table

from app.engine.kinds import Role
from app.engine.persisted import Content


class SessionRecord(NamedTuple):
    id: str
    title: str | None
    metadata: dict[str, Any]
    model: str | dict[str, Any] | None
    """The session's model as written: ``provider/modelId`` (or a bare id), or opencode's object."""
    context_window_tokens: int | None
    last_seq: int
    revision: int
    """Counts every change to the session's messages: one per message appended, one per amendment, prune or new
    run. So ``revision - last_seq`` changes exactly when something other than an append happened."""
    created_at: datetime
    updated_at: datetime


class RunRecord(NamedTuple):
    id: str
    session_id: str
    agent: str | None
    model: str | dict[str, Any] | None
    """As written: ``provider/modelId`` (or a bare id), or opencode's ``{providerID, modelID, variant?}``."""
    system: str | None
    tools: list[dict[str, Any]] | dict[str, bool] | None
    """AI SDK tool definitions, or opencode's map of tools switched on and off."""
    variant: str | None
    format: Any
    usage: dict[str, Any] | None
    result: Any
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class MessageRecord(NamedTuple):
    id: str
    session_id: str
    seq: int
    role: Role
    kind: str
    content: Content
    metadata: dict[str, Any]
    run_id: str | None
    created_at: datetime
    token_estimate: int
    unusual_text: bool
    """Content or metadata holds a NUL or an unpaired surrogate: metadata is read back unescaped, and
    provider payloads clean the message's text."""


def core_columns(table: Table, fields: Sequence[str]) -> tuple[Column[Any], ...]:
    """The table's columns named by ``fields``, in that order, for Core ``select`` and ``returning``."""
    return tuple(table.c[name] for name in fields)


def select_list(fields: Sequence[str]) -> str:
    """The same columns as a SQL select list, for the hand-written hot reads."""
    return ", ".join(fields)
