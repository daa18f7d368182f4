"""Each message's stored size, known without reading its content: the bytes of its content and metadata as
stored and its number of content parts, as generated columns (back-filled for existing rows when they are
added); and each run's, all its fields together. Pages are cut by these, so a page's memory is bounded by a
setting, not by what the history holds.

Content is never rewritten, so ``content_bytes`` and ``content_parts`` are computed once per row; an
amendment recomputes only ``metadata_bytes``.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE messages"
        " ADD COLUMN content_bytes integer GENERATED ALWAYS AS (octet_length(content::text)) STORED,"
        " ADD COLUMN content_parts integer GENERATED ALWAYS AS"
        " (CASE WHEN json_typeof(content) = 'array' THEN json_array_length(content) ELSE 1 END) STORED,"
        " ADD COLUMN metadata_bytes integer GENERATED ALWAYS AS (octet_length(metadata::text)) STORED"
    )
    op.execute(
        "ALTER TABLE runs ADD COLUMN stored_bytes integer GENERATED ALWAYS AS ("
        "coalesce(octet_length(agent), 0) + coalesce(octet_length(model::text), 0)"
        " + coalesce(octet_length(system), 0) + coalesce(octet_length(tools::text), 0)"
        " + coalesce(octet_length(variant), 0) + coalesce(octet_length(format::text), 0)"
        " + coalesce(octet_length(usage::text), 0) + coalesce(octet_length(result::text), 0)"
        " + octet_length(metadata::text)) STORED"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE runs DROP COLUMN stored_bytes")
    op.execute("ALTER TABLE messages DROP COLUMN content_bytes, DROP COLUMN content_parts, DROP COLUMN metadata_bytes")
