"""Model references as JSON (a ``provider/modelId`` string or opencode's ``{providerID, modelID, variant?}``
object, each kept as written) on sessions and runs, and the index a session's runs are paged by.

Stored strings stay strings. Coming down, an object is kept as its JSON text.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNS_INDEX = "ix_runs_tenant_id_session_id_created_at_id"


def upgrade() -> None:
    op.execute("ALTER TABLE sessions ALTER COLUMN model TYPE jsonb USING to_jsonb(model)")
    op.execute("ALTER TABLE runs ALTER COLUMN model TYPE jsonb USING to_jsonb(model)")
    op.create_index(RUNS_INDEX, "runs", ["tenant_id", "session_id", "created_at", "id"])


def downgrade() -> None:
    op.drop_index(RUNS_INDEX, table_name="runs")
    op.execute(
        "ALTER TABLE sessions ALTER COLUMN model TYPE text"
        " USING CASE WHEN jsonb_typeof(model) = 'string' THEN model #>> '{}' ELSE model::text END"
    )
    op.execute(
        "ALTER TABLE runs ALTER COLUMN model TYPE text"
        " USING CASE WHEN jsonb_typeof(model) = 'string' THEN model #>> '{}' ELSE model::text END"
    )
