"""Idempotency keys remember the role of the key that claimed them, so a replay can refuse a lesser role.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows kept before this have no role: they replay only to a runtime key, the role that may do anything.
    op.add_column("idempotency_keys", sa.Column("role", sa.Text()))


def downgrade() -> None:
    op.drop_column("idempotency_keys", "role")
