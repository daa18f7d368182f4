"""A remembered prompt prefix keeps how far the request wrote the provider's cache past its stable prefix (to
its end, when a mark went on its last block or the provider caches prompts on its own), so that the next
request reports what the cache will serve it. Nullable columns: adding them rewrites nothing, and rows written
before read as reaching no further than their prefix.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("prompt_prefixes", sa.Column("written_units", sa.Integer()))
    op.add_column("prompt_prefixes", sa.Column("written_digest", sa.String(64)))
    op.add_column("prompt_prefixes", sa.Column("written_length", sa.BigInteger()))


def downgrade() -> None:
    for column in ("written_length", "written_digest", "written_units"):
        op.drop_column("prompt_prefixes", column)
