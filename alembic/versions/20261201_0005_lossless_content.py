"""Lossless text: message content becomes ``json`` (its text kept as written, so a NUL or an unpaired
surrogate survives), messages are marked when they hold such text, and the rare string that ``jsonb`` or
``text`` cannot hold is stored escaped (``app.store.escaped_text``).

Every row already stored holds only what ``jsonb`` held, so converting loses nothing. A stored string that
happens to start with the escape mark is escaped now, so that it reads back as it was. Downgrading converts
content back to ``jsonb``, which works only while no message holds such text: otherwise it is refused,
naming how many, and nothing changes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

from app.store.escaped_text import ESCAPE_MARK, escape_strings

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ESCAPED_COLUMNS = {
    "sessions": (("tenant_id", "id"), ("title", "metadata", "model")),
    "runs": (
        ("tenant_id", "session_id", "id"),
        ("agent", "model", "system", "tools", "variant", "format", "usage", "result", "metadata"),
    ),
}
"""The ``text`` and ``jsonb`` values of sessions and runs that may hold an escaped string, by table, after
the columns that key a row."""
JSONB_COLUMNS = {"metadata", "tools", "format", "usage", "result"}


def upgrade() -> None:
    op.execute("ALTER TABLE messages ALTER COLUMN content TYPE json USING content::json")
    op.add_column("messages", sa.Column("unusual_text", sa.Boolean(), nullable=False, server_default=sa.false()))
    _escape_marked_strings()


def downgrade() -> None:
    bind = op.get_bind()
    marked = bind.execute(sa.text("SELECT count(*) FROM messages WHERE unusual_text")).scalar_one()
    escaped = sum(len(_rows_with_mark(bind, table, keys, values).all()) for table, (keys, values) in _tables())
    if marked or escaped:
        raise RuntimeError(
            f"{marked} messages and {escaped} sessions or runs hold text that jsonb and text columns cannot hold;"
            " downgrading would lose it, so it is refused"
        )
    op.drop_column("messages", "unusual_text")
    op.execute("ALTER TABLE messages ALTER COLUMN content TYPE jsonb USING content::jsonb")


def _escape_marked_strings() -> None:
    bind = op.get_bind()
    for row in bind.execute(
        sa.text(
            "SELECT tenant_id, session_id, seq, metadata::text FROM messages WHERE strpos(metadata::text, :mark) > 0"
        ),
        {"mark": ESCAPE_MARK},
    ):
        tenant_id, session_id, seq, metadata = row
        bind.execute(
            sa.text(
                "UPDATE messages SET metadata = CAST(CAST(:metadata AS text) AS jsonb), unusual_text = true"
                " WHERE tenant_id = :tenant_id AND session_id = :session_id AND seq = :seq"
            ),
            {
                "metadata": orjson.dumps(escape_strings(orjson.loads(metadata))).decode(),
                "tenant_id": tenant_id,
                "session_id": session_id,
                "seq": seq,
            },
        )
    for table, (keys, values) in _tables():
        for row in _rows_with_mark(bind, table, keys, values).mappings():
            assignments = ", ".join(
                f"{name} = CAST(CAST(:{name} AS text) AS jsonb)" if name in JSONB_COLUMNS else f"{name} = :{name}"
                for name in values
            )
            where = " AND ".join(f"{name} = :{name}" for name in keys)
            parameters: dict[str, Any] = {name: row[name] for name in keys}
            for name in values:
                parameters[name] = _escaped(row[name], name in JSONB_COLUMNS)
            bind.execute(sa.text(f"UPDATE {table} SET {assignments} WHERE {where}"), parameters)  # noqa: S608


def _tables() -> list[tuple[str, tuple[tuple[str, ...], tuple[str, ...]]]]:
    return list(ESCAPED_COLUMNS.items())


def _rows_with_mark(bind: Any, table: str, keys: tuple[str, ...], values: tuple[str, ...]) -> Any:
    selected = ", ".join([*keys, *(f"{name}::text AS {name}" for name in values)])
    condition = " OR ".join(f"strpos({name}::text, :mark) > 0" for name in values)
    return bind.execute(sa.text(f"SELECT {selected} FROM {table} WHERE {condition}"), {"mark": ESCAPE_MARK})  # noqa: S608


def _escaped(text: str | None, is_json: bool) -> str | None:
    if text is None:
        return None
    if is_json:
        return orjson.dumps(escape_strings(orjson.loads(text))).decode()
    return str(escape_strings(text))
