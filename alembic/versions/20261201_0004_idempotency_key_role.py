"""Idempotency keys remember the role of the key that claimed them, so a replay can refuse a lesser role.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows kept before this have no role: they replay only to a runtime key, the role that may do anything.
    op.add_column("idempotency_keys", sa.Column("role", sa.Text()))


def downgrade() -> None:
    op.drop_column("idempotency_keys", "role")
