"""Lossless text: message content becomes ``json`` (its text kept as written, so a NUL or an unpaired
surrogate survives), messages are marked when they hold such text, and the rare string that ``jsonb`` or
``text`` cannot hold is stored escaped (``app.store.escaped_text``).

Every row already stored holds only what ``jsonb`` held, so converting loses nothing. A stored string that
happens to start with the escape mark is escaped now, so that it reads back as it was. Downgrading converts
content back to ``jsonb`` and writes escaped values back as they were, which works only while no message,
session or run holds a NUL or an unpaired surrogate: otherwise it is refused, naming how many, and nothing
changes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Callable, Sequence
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from app import lossless_json
from app.store.escaped_text import ESCAPE_MARK, escape_strings, unescape_strings

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONB_VALUES = {"metadata", "tools", "format", "usage", "result"}
MESSAGES = sa.table(
    "messages",
    *(sa.column(name) for name in ("tenant_id", "session_id", "seq", "content", "metadata", "unusual_text")),
)
ESCAPED = (
    (sa.table("sessions", *(sa.column(name) for name in ("tenant_id", "id"))), ("title", "metadata", "model")),
    (
        sa.table("runs", *(sa.column(name) for name in ("tenant_id", "session_id", "id"))),
        ("agent", "model", "system", "tools", "variant", "format", "usage", "result", "metadata"),
    ),
)
"""Per table, the ``text`` and ``jsonb`` values of sessions and runs that may hold an escaped string (the
table's columns are its key)."""


def upgrade() -> None:
    op.execute("ALTER TABLE messages ALTER COLUMN content TYPE json USING content::json")
    op.add_column("messages", sa.Column("unusual_text", sa.Boolean(), nullable=False, server_default=sa.false()))
    bind = op.get_bind()
    for key, metadata in _with_mark(bind, MESSAGES, ("metadata",), key=("tenant_id", "session_id", "seq")):
        values = {"metadata": _as_jsonb(escape_strings(orjson.loads(metadata[0]))), "unusual_text": sa.true()}
        bind.execute(sa.update(MESSAGES).where(*_matching(MESSAGES, key)).values(values))
    _rewrite_sessions_and_runs(bind, _escaped)


def downgrade() -> None:
    bind = op.get_bind()
    kept = _unescape_what_jsonb_can_hold(bind)
    if kept:
        # Migrations run in one transaction: what was unescaped above is rolled back with this.
        raise RuntimeError(
            f"{kept} messages, sessions or runs hold text that jsonb and text columns cannot hold (a NUL or an"
            " unpaired surrogate); downgrading would lose it, so it is refused"
        )
    op.drop_column("messages", "unusual_text")
    op.execute("ALTER TABLE messages ALTER COLUMN content TYPE jsonb USING content::jsonb")


def _unescape_what_jsonb_can_hold(bind: Any) -> int:
    """Writes back every escaped value whose original ``jsonb`` or ``text`` can hold (one that only started
    with the mark); returns how many rows hold one it cannot."""
    kept = 0
    messages = MESSAGES
    selected = sa.select(
        messages.c.tenant_id,
        messages.c.session_id,
        messages.c.seq,
        sa.cast(messages.c.content, sa.Text),
        sa.cast(messages.c.metadata, sa.Text),
    ).where(messages.c.unusual_text)
    for tenant_id, session_id, seq, content, metadata in bind.execute(selected).all():
        original = unescape_strings(orjson.loads(metadata))
        if not (_holdable(lossless_json.loads(content)) and _holdable(original)):
            kept += 1
            continue
        key = {"tenant_id": tenant_id, "session_id": session_id, "seq": seq}
        values = {"metadata": _as_jsonb(original), "unusual_text": sa.false()}
        bind.execute(sa.update(messages).where(*_matching(messages, key)).values(values))
    return kept + _rewrite_sessions_and_runs(bind, _original)


def _rewrite_sessions_and_runs(bind: Any, rewrite: Callable[[str | None, bool], Any]) -> int:
    """Every session and run value holding the mark, rewritten; returns how many rows ``rewrite`` refused
    (by raising ``ValueError``) and left as they were."""
    refused = 0
    for table, names in ESCAPED:
        for key, texts in _with_mark(bind, table, names, key=tuple(column.name for column in table.columns)):
            try:
                values = {name: rewrite(text, name in JSONB_VALUES) for name, text in zip(names, texts, strict=True)}
            except ValueError:
                refused += 1
                continue
            columns = sa.table(table.name, *(sa.column(name) for name in (*key, *names)))
            bind.execute(sa.update(columns).where(*_matching(columns, key)).values(values))
    return refused


def _with_mark(
    bind: Any, table: sa.TableClause, names: tuple[str, ...], *, key: tuple[str, ...]
) -> list[tuple[dict[str, Any], tuple[str | None, ...]]]:
    """The rows of ``table`` where one of ``names`` holds the escape mark: their key, and those values as text."""
    columns = sa.table(table.name, *(sa.column(name) for name in (*key, *names)))
    as_text = [sa.cast(columns.c[name], sa.Text) for name in names]
    selected = sa.select(*(columns.c[name] for name in key), *as_text).where(
        sa.or_(*(sa.func.strpos(value, ESCAPE_MARK) > 0 for value in as_text))
    )
    return [(dict(zip(key, row[: len(key)], strict=True)), tuple(row[len(key) :])) for row in bind.execute(selected)]


def _matching(table: sa.TableClause, key: dict[str, Any]) -> list[Any]:
    return [table.c[name] == value for name, value in key.items()]


def _escaped(text: str | None, is_json: bool) -> Any:
    if text is None:
        return None
    return _as_jsonb(escape_strings(orjson.loads(text))) if is_json else str(escape_strings(text))


def _original(text: str | None, is_json: bool) -> Any:
    """The value as it was before escaping; ``ValueError`` when ``jsonb`` or ``text`` cannot hold it."""
    if text is None:
        return None
    value = unescape_strings(orjson.loads(text) if is_json else text)
    if not _holdable(value):
        raise ValueError("holds a NUL or an unpaired surrogate")
    return _as_jsonb(value) if is_json else value


def _as_jsonb(value: Any) -> Any:
    return sa.cast(sa.literal(orjson.dumps(value).decode(), sa.Text), JSONB)


def _holdable(value: Any) -> bool:
    """What ``jsonb`` and ``text`` hold: no NUL, no unpaired surrogate (which orjson refuses)."""
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, dict):
        return all(_holdable(key) and _holdable(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_holdable(item) for item in value)
    return True
