"""The revision at which a message's view was last rewritten (an amendment, a prune's mark, a run it named
created late), indexed by session for the messages that have one: a window kept from an earlier revision
re-reads those messages instead of the whole window. Null for every message until it is rewritten, so
existing rows need no back-fill and appends index nothing.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_messages_tenant_id_session_id_amended_revision"


COLUMN_EXISTS = sa.text(
    "SELECT 1 FROM pg_attribute WHERE attrelid = 'messages'::regclass AND attname = 'amended_revision'"
    " AND NOT attisdropped"
)


def upgrade() -> None:
    # A large database may have added both beforehand without holding reads or writes (docs/upgrading.md). What
    # exists is left alone: ALTER TABLE ... IF NOT EXISTS takes the table's exclusive lock even when the column
    # is there (and CREATE INDEX IF NOT EXISTS its write lock), held until every later migration commits.
    bind = op.get_bind()
    if bind.scalar(COLUMN_EXISTS) is None:
        op.add_column("messages", sa.Column("amended_revision", sa.BigInteger()))
    if bind.scalar(sa.text("SELECT to_regclass(:name)"), {"name": INDEX}) is None:
        op.create_index(
            INDEX,
            "messages",
            ["tenant_id", "session_id", "amended_revision"],
            postgresql_where=sa.text("amended_revision IS NOT NULL"),
        )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="messages")
    op.drop_column("messages", "amended_revision")
