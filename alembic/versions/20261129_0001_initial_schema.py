"""Sessions, runs and messages.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EMPTY_OBJECT = sa.text("'{}'::jsonb")


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("title", sa.Text()),
        sa.Column("metadata", JSONB(), nullable=False, server_default=EMPTY_OBJECT),
        sa.Column("model", sa.Text()),
        sa.Column("context_window_tokens", sa.Integer()),
        sa.Column("last_seq", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
        sa.Column("revision", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("tenant_id", "id", name="pk_sessions"),
    )
    op.create_index("ix_sessions_tenant_id_created_at_id", "sessions", ["tenant_id", "created_at", "id"])

    op.create_table(
        "runs",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("agent", sa.Text()),
        sa.Column("model", sa.Text()),
        sa.Column("system", sa.Text()),
        sa.Column("tools", JSONB()),
        sa.Column("variant", sa.Text()),
        sa.Column("format", JSONB()),
        sa.Column("usage", JSONB()),
        sa.Column("result", JSONB()),
        sa.Column("metadata", JSONB(), nullable=False, server_default=EMPTY_OBJECT),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("tenant_id", "session_id", "id", name="pk_runs"),
        sa.ForeignKeyConstraint(
            ["tenant_id", "session_id"],
            ["sessions.tenant_id", "sessions.id"],
            name="fk_runs_tenant_id_sessions",
            ondelete="CASCADE",
        ),
    )

    op.create_table(
        "messages",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("run_id", sa.String(128)),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("content", JSONB(), nullable=False),
        sa.Column("metadata", JSONB(), nullable=False, server_default=EMPTY_OBJECT),
        sa.Column("token_estimate", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("tenant_id", "session_id", "seq", name="pk_messages"),
        sa.UniqueConstraint("tenant_id", "session_id", "id", name="uq_messages_tenant_id_session_id_id"),
        sa.ForeignKeyConstraint(
            ["tenant_id", "session_id"],
            ["sessions.tenant_id", "sessions.id"],
            name="fk_messages_tenant_id_sessions",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_messages_tenant_id_session_id_kind_seq", "messages", ["tenant_id", "session_id", "kind", "seq"])


def downgrade() -> None:
    op.drop_table("messages")
    op.drop_table("runs")
    op.drop_index("ix_sessions_tenant_id_created_at_id", table_name="sessions")
    op.drop_table("sessions")
