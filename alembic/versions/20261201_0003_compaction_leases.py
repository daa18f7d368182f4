"""Compaction leases: one compaction per session at a time, held without a connection and freed on expiry.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "compaction_leases",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("holder", sa.String(32), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "session_id", name="pk_compaction_leases"),
        sa.ForeignKeyConstraint(
            ["tenant_id", "session_id"],
            ["sessions.tenant_id", "sessions.id"],
            name="fk_compaction_leases_tenant_id_sessions",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("compaction_leases")
