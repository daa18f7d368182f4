"""An index of the messages that name a run, by session: creating a run asks whether a message names it
already (then the run changes the session's views), and without the index that question scans the table.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_messages_tenant_id_session_id_run_id"


def upgrade() -> None:
    # A large database may have built it beforehand without holding writes (docs/upgrading.md). Then nothing is
    # done here: CREATE INDEX IF NOT EXISTS locks the table against writes even when the index exists, and the
    # lock would be held until every later migration commits.
    if op.get_bind().scalar(sa.text("SELECT to_regclass(:name)"), {"name": INDEX}) is not None:
        return
    op.create_index(
        INDEX, "messages", ["tenant_id", "session_id", "run_id"], postgresql_where=sa.text("run_id IS NOT NULL")
    )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="messages")
